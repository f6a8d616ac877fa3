"""The os_tuning role's data mounts once the disk plan is made: the /etc/fstab lines, mounts,
remounts and owners still to do (a second run does none), and the check of what the kernel
mounted (DF-01, DF-02, DF-03).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .os_tuning import Disk
from .os_tuning_disks import FORMAT_ACTIONS, findmnt_mounts

#: Mount options mount(8) or systemd consume without passing them to the kernel: they never show
#: in /proc/mounts, so they are not compared with the live options.
NOT_IN_KERNEL = frozenset({"auto", "defaults", "noauto", "nofail", "_netdev", "user", "users",
                           "nouser", "owner", "group"})
_USERSPACE_ONLY = re.compile(r"x-|comment=")


def fstab_line(disk: Mapping[str, Any]) -> str:
    """A data disk's /etc/fstab line, as ansible.posix.mount writes it: by UUID, which survives
    device renames. DF-02"""
    return f"UUID={disk['uuid']} {disk['mount']} xfs {disk['opts']} 0 0"


def in_fstab(fstab: str, disk: Mapping[str, Any]) -> bool:
    """Whether every /etc/fstab line of the disk's mount point, and at least one, is its line
    (compared field by field, as ansible.posix.mount does)."""
    fields = [line.split() for line in fstab.splitlines()
              if line.strip() and not line.lstrip().startswith("#")]
    there = [f for f in fields if len(f) > 1 and f[1] == disk["mount"]]
    return bool(there) and all(f == fstab_line(disk).split() for f in there)


def owned(disk: Mapping[str, Any], paths: Mapping[str, Mapping[str, str]], mode: str) -> bool:
    """Whether the disk's mount point is a directory of its owner's, with the data mode. DF-03"""
    have = paths.get(disk["mount"])
    if have is None or have["kind"] != "directory":
        return False
    try:
        same_mode = int(have["mode"], 8) == int(mode, 8)
    except ValueError:  # a symbolic mode: let the file module decide
        return False
    return same_mode and have["owner"] == have["group"] == disk["owner"]


def needs_remount(disk: Disk) -> bool:
    """Whether a mounted disk's live options lack a declared one the kernel would show."""
    live = disk["at_mount"].get("options", "").split(",")
    return any(o not in live for o in disk["options"]
               if o not in NOT_IN_KERNEL and not _USERSPACE_ONLY.match(o))


def disk_mounts(plan: Mapping[str, Any],
                uuid_results: Sequence[Mapping[str, Any]]) -> dict[str, list[Disk]]:
    """Each disk to mount with its UUID and mount options, split by what the role does with it:
    ``fstab`` and ``owners`` leave out what the host already has right.

    ``uuid_results`` is the registered loop of ``blkid -s UUID`` over ``plan["formats"]``; in
    check mode nothing was formatted, so those disks have no UUID: ``unformatted`` lists them.
    """
    mounts = []
    for disk in plan["disks"]:
        if disk["action"] not in ("use", *FORMAT_ACTIONS):
            continue
        formatted = next((r for r in uuid_results
                          if isinstance(r.get("item"), Mapping)
                          and r["item"].get("device") == disk["device"]), {})
        uuid = disk["uuid"] if disk["action"] == "use" else str(formatted.get("stdout", "")).strip()
        mounts.append({**disk, "uuid": uuid, "opts": ",".join(disk["options"])})
    with_uuid = [m for m in mounts if m["uuid"] != ""]
    # Mounted in this run (its mount point was probed before: its owner is the new filesystem's).
    pending = {d["mount"] for d in mounts if not d["mounted"]}
    return {
        "all": mounts,
        "unformatted": [m for m in mounts if m["uuid"] == ""],
        "fstab": [m for m in with_uuid if not in_fstab(plan["fstab"], m)],
        "unmounted": [m for m in with_uuid if not m["mounted"]],
        "remount": [m for m in mounts if m["mounted"] and needs_remount(m)],
        "owners": [d for d in plan["disks"]
                   if d["mount"] in pending or not owned(d, plan["paths"], plan["mode"])],
    }


def mount_problem(context: Mapping[str, Any], disk: Mapping[str, Any], findmnt_stdout: str) -> str:
    """"" when ``disk`` is mounted, alone, at its mount point, XFS with noatime (DF-01, DF-02);
    else the failure message."""
    lines = [line for line in findmnt_stdout.splitlines()
             if line.split(" ", 1)[0] == disk["mount"]]
    there = findmnt_mounts("\n".join(lines))
    if (len(there) == 1 and there[0]["majmin"] == disk["majmin"] and there[0]["fstype"] == "xfs"
            and "noatime" in there[0]["options"].split(",")):
        return ""
    kernel = "; ".join(lines)
    return (f"{context['host']}: {disk['mount']} should be {disk['device']} ({disk['majmin']}), "
            f"XFS, noatime; the kernel has {kernel or 'nothing mounted there'}")
