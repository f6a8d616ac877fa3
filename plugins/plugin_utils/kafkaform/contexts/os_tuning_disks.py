"""What the os_tuning role does with each declared data disk, from what the host answers: use an
XFS device as it is, format a blank one, or refuse (never format over data, DF-01), and every
refusal with host, device and fix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .os_tuning import Disk

#: The disk plan's actions that format a device.
FORMAT_ACTIONS = ("format", "format_force")


def stat_nodes(stat_stdout: str) -> dict[str, dict[str, str]]:
    """Device name -> kind and device number, from the ``stat`` lines of the host read
    (:func:`kafkaform.plans.os_tuning.disk_report`)."""
    nodes = {}
    for line in stat_stdout.splitlines():
        if line.count("|") >= 2:
            name, kind, majmin = line.rsplit("|", 2)
            nodes[name] = {"kind": kind, "majmin": majmin}
    return nodes


def device_problems(context: Mapping[str, Any], stat_stdout: str) -> str:
    """The stop message for declared devices that are missing or not block devices, else ""."""
    nodes = stat_nodes(stat_stdout)
    bad = []
    for device in context["disk_devices"]:
        if device not in nodes:
            bad.append(f"{device} does not exist")
        elif nodes[device]["kind"] != "block special file":
            bad.append(f"{device} is a {nodes[device]['kind']}, not a block device")
    if not bad:
        return ""
    return (f"{context['host']}: {'; '.join(bad)}. Fix: correct the device in "
            "os_tuning_data_disks, or use device: null for a directory.")


def findmnt_mounts(findmnt_stdout: str) -> list[dict[str, str]]:
    """``findmnt --raw --noheadings --output TARGET,MAJ:MIN,FSTYPE,OPTIONS`` as dicts."""
    mounts = []
    for line in findmnt_stdout.splitlines():
        target, majmin, fstype, options = [*line.split(" ", 3), "", "", ""][:4]
        mounts.append({"target": target, "majmin": majmin, "fstype": fstype, "options": options})
    return mounts


def result_of(results: Sequence[Mapping[str, Any]], device: str) -> Mapping[str, Any]:
    """The registered loop result of a command run for ``device`` (not skipped), or {}."""
    for result in results:
        item = result.get("item")
        named = item.get("item") if isinstance(item, Mapping) else item
        if named == device and "rc" in result:
            return result
    return {}


def blkid_fields(probe: Mapping[str, Any]) -> dict[str, str]:
    """``blkid -p -o export`` output: KEY=value lines."""
    lines = str(probe.get("stdout", "")).splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line)


def what_it_holds(device: str, rc: int, found: Mapping[str, str], zero_rc: int,
                  blank_bytes: Any) -> str:
    """What blkid (rc 0 found, 2 nothing, 8 several) and cmp found on a device; "" when blank."""
    if rc == 8:
        return f"more than one signature (see wipefs --no-act {device})"
    if "PTTYPE" in found:
        return f"a {found['PTTYPE']} partition table"
    if "TYPE" in found:
        kind = found["TYPE"]
        uuid = f" (UUID {found['UUID']})" if "UUID" in found else ""
        article = "an" if kind[:1] in "aeiou" else "a"
        return f"{article} {kind} {found.get('USAGE', 'signature')}{uuid}"
    if zero_rc != 0:
        return f"data without a known signature in its first {blank_bytes} bytes"
    return ""


def action_for(disk: Disk, rc: int, found: Mapping[str, str], what: str) -> str:
    """use (XFS already), format (blank), format_force (holds something else and force_format
    is set) or refuse (anything else: never format over data, DF-01)."""
    if found.get("TYPE", "") == "xfs" and "PTTYPE" not in found and rc == 0:
        return "use"
    if what == "":
        return "format"
    return "format_force" if disk["force_format"] else "refuse"


def planned_device(context: Mapping[str, Any], disk: Disk, majmin: str,
                   blkid: Sequence[Mapping[str, Any]], zero: Sequence[Mapping[str, Any]],
                   mounts: list[dict[str, str]]) -> Disk:
    """The plan entry of a declared device. mounted: it is mounted at its mount point now."""
    device, mount = disk["device"], disk["mount"]
    probe = result_of(blkid, device)
    rc, found = int(probe.get("rc", 2)), blkid_fields(probe)
    what = what_it_holds(device, rc, found, int(result_of(zero, device).get("rc", 1)),
                         context["blank_check_bytes"])
    action = action_for(disk, rc, found, what)
    at_mount = next((m for m in reversed(mounts) if m["target"] == mount), {})
    return {
        **disk, "action": action, "what": what, "majmin": majmin,
        "uuid": found.get("UUID", "") if action == "use" else "",
        "at_mount": at_mount,
        "elsewhere": [m["target"] for m in mounts
                      if m["majmin"] == majmin and m["target"] != mount],
        "mounted": at_mount.get("majmin", "") == majmin,
        "force": action == "format_force",
        "label": device + (f" (force_format: erasing {what})" if action == "format_force" else ""),
    }


def refusals(host: str, disk: Disk) -> list[str]:
    """Why the run must not touch this device or mount point (DF-01), as sentences."""
    if disk["action"] == "directory":
        return []
    found = []
    device, mount = disk["device"], disk["mount"]
    if disk.get("occupied"):
        found.append(f"{host}: mount point {mount} is a directory holding files (e.g. "
                     f"{disk['occupied']}); mounting {device} over it would hide them. Fix: move "
                     "them away first (mount the disk elsewhere, copy, then declare it here), or "
                     "keep the directory with device: null.")
    if disk["action"] == "refuse":
        found.append(f"{host}: {device} holds {disk['what']}, not XFS, so it is not formatted and "
                     f"not mounted at {mount}. Fix: declare a blank device, or set force_format: "
                     "true on this device if you really mean to erase it.")
    if disk["at_mount"] and not disk["mounted"]:
        found.append(f"{host}: mount point {mount} is already used by another device "
                     f"({disk['at_mount']['fstype']}, device number {disk['at_mount']['majmin']}), "
                     f"not {device}. Fix: unmount it, or choose another mount point.")
    if disk["elsewhere"]:
        found.append(f"{host}: {device} is already mounted at {', '.join(disk['elsewhere'])}. "
                     "Fix: unmount it there first, or declare another device.")
    elif disk["mounted"] and disk["action"] == "format_force":
        found.append(f"{host}: {device} is mounted at {mount} and holds {disk['what']}; "
                     "force_format does not format a mounted device. Fix: unmount it first.")
    return found


def first_entries(find_stdout: str) -> dict[str, str]:
    """Mount point → its first entry, from lines "MOUNT ENTRY" (``find M1 M2 ... -mindepth 1
    -maxdepth 1 -printf '%H %p\\n'``). The entry starts with its mount point and a slash, which
    tells where the mount point ends when it holds a space itself."""
    found: dict[str, str] = {}
    for line in find_stdout.splitlines():
        start, _space, entry = line.partition(" ")
        ends = [i for i, char in enumerate(line) if char == " "
                and line[i + 1:].startswith(line[:i].rstrip("/") + "/")]
        if ends:
            start, entry = line[:ends[0]], line[ends[0] + 1:]
        found.setdefault(start, entry)
    return found


def disk_plan(context: Mapping[str, Any], report: Mapping[str, Any]) -> dict[str, Any]:
    """What to do with each declared disk, from what the host reported
    (:func:`kafkaform.plans.os_tuning.disk_report`), and the refusals.

    ``refusal`` is the stop message ("" when there is none): the plan stops the run on it
    before anything changes, in check mode too. The disk plan keeps the report's /etc/fstab and
    mount point owners, from which :func:`disk_mounts` leaves out what is already right.
    """
    nodes = stat_nodes(report["stat"])
    mounts = findmnt_mounts(report["findmnt"])
    occupied = first_entries(report["occupied"])
    disks = []
    for disk in context["disks"]:
        if disk["directory"]:
            disks.append({**disk, "action": "directory", "mounted": False, "what": ""})
        else:
            majmin = nodes.get(disk["device"], {}).get("majmin", "")
            planned = planned_device(context, disk, majmin, report["blkid"], report["zero"],
                                     mounts)
            disks.append({**planned, "occupied": occupied.get(disk["mount"], "")})
    return {
        "disks": disks,
        "devices": [d for d in disks if d["action"] != "directory"],
        "formats": [d for d in disks if d["action"] in FORMAT_ACTIONS],
        "refusal": " | ".join(r for d in disks for r in refusals(context["host"], d)),
        "fstab": report["fstab"],
        "paths": report["paths"],
        "mode": context["data_dir_mode"],
    }
