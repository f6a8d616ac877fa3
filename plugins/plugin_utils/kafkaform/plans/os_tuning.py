"""The os_tuning role's plan for one host: which kernel settings to write and set live, the limits
file, and what to do with each data disk (format only a blank one, record, mount, remount, own),
with the refusals that stop the run first (roles/os_tuning, deploys/os_tuning.py).

The plan composes the role's existing pure decisions (kafkaform.contexts.os_tuning*): the host
read is sorted into the shapes they take, so each keeps its tests and its messages.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

from ..contexts.os_tuning import FINDMNT_ARGV, Disk, os_tuning_context
from ..contexts.os_tuning_disks import device_problems, disk_plan, findmnt_mounts
from ..contexts.os_tuning_mounts import disk_mounts
from ..contexts.os_tuning_sysctl import sysctl_plan
from ..defaults import as_bool, setting
from ..rules import cite
from . import hostread, log_dirs
from .files import PlannedFile, WritesFiles, planned_paths, template

ROLE = "os_tuning"
#: The exit codes of the read's commands that are answers, not failures: blkid 0 (signatures),
#: 2 (none), 8 (several); the blank check 0 (all zero), 1 (something else); findmnt 0.
ANSWER_CODES = {"blkid": (0, 2, 8), "zero": (0, 1), "findmnt": (0,)}
#: /proc/sys files hold one line; a tab or a newline becomes a space, so the value fits its line.
_ONE_LINE = "tr '\\t\\n' '  '"
#: The warning for a data directory without a disk of its own, after the host's name.
DIRECTORY_WARNING = ("{mount} ({purpose}) is a directory on an existing filesystem, not a "
                     "dedicated XFS disk mounted with noatime (DF-01, DF-02, DF-03). Fine for a "
                     "test host; declare a device for production.")


def _label(kind: str, subject: str) -> str:
    """The label of a question about ``subject`` (a kernel key, device, mount point or user):
    percent-encoded, so that neither a space nor a shell character reaches the read's script or
    splits its line."""
    return f"{kind}:{quote(subject, safe='/')}"


def _enabled(settings: Mapping[str, Any], part: str) -> bool:
    """os_tuning_<part>_enabled as Ansible reads a bool: a part another tool owns is off."""
    return as_bool(setting(settings, f"os_tuning_{part}_enabled"))


def _kernel_questions(context: Mapping[str, Any]) -> list[hostread.Question]:
    """Each kernel key's state (writable, readonly, absent) and live value; the container the host
    is (systemd-detect-virt's name, or none); and, answered only where the machine's initial
    network namespace is visible, netns: net.core.netdev_max_backlog exists only there (measured
    in podman containers)."""
    asked = []
    for key in context["sysctl"]:
        path = shlex.quote("/proc/sys/" + key.replace(".", "/"))
        asked.append(hostread.ask(_label("sysctl", key), (
            f"p={path}; if [ ! -e \"$p\" ]; then printf absent; else v=$({_ONE_LINE} < \"$p\"); "
            "if [ -w \"$p\" ]; then s=writable; else s=readonly; fi; "
            "printf '%s|%s' \"$s\" \"$v\"; fi")))
    return [*asked,
            hostread.ask("container", (
                "if command -v systemd-detect-virt > /dev/null; then "
                "systemd-detect-virt --container; elif [ -e /run/.containerenv ] || "
                "[ -e /.dockerenv ]; then echo container; else echo none; fi")),
            hostread.ask("netns", "echo host", present="/proc/sys/net/core/netdev_max_backlog")]


def _disk_questions(context: Mapping[str, Any]) -> list[hostread.Question]:
    """Each device's kind and number; on a block device what ``blkid -p`` finds (its exit code,
    the blank check's where it found nothing, its KEY=value lines in base64); what is mounted
    where; each mount point's owner, group, mode, kind and first entry; the disks' owners; and
    /etc/fstab."""
    q = shlex.quote
    blank = q(str(context["blank_check_bytes"]))
    asked = []
    for device in context["disk_devices"]:
        d = q(device)
        asked += [
            hostread.ask(_label("node", device),
                         f"stat --dereference --format '%F|%Hr:%Lr' -- {d} 2> /dev/null"),
            hostread.ask(_label("blkid", device), (
                f"if [ -b {d} ]; then found=$(blkid -p -o export -- {d}); rc=$?; zero=-; "
                f"if [ \"$rc\" -eq 2 ]; then cmp --silent --bytes {blank} -- {d} /dev/zero; "
                "zero=$?; fi; printf '%s %s %s' \"$rc\" \"$zero\" "
                "\"$(printf '%s' \"$found\" | base64 -w0)\"; fi")),
        ]
    asked.append(hostread.ask("findmnt", (
        f"found=$({shlex.join(FINDMNT_ARGV)}); "
        "printf '%s %s' \"$?\" \"$(printf '%s' \"$found\" | base64 -w0)\"")))
    for mount in context["mount_points"]:
        m = q(mount)
        asked += [
            hostread.ask(_label("path", mount), f"stat --printf '%U|%G|%a|%F' -- {m} 2> /dev/null"),
            hostread.ask(_label("entry", mount), (
                f"find {m} -mindepth 1 -maxdepth 1 -printf '%p' -quit 2> /dev/null "
                "| base64 -w0")),
            hostread.ask(_label("failed", mount), f"if {hostread.io_error(m)}; then echo yes; fi"),
        ]
    asked += [hostread.ask(_label("user", str(owner)),
                           f"getent passwd {q(str(owner))} > /dev/null && echo yes")
              for owner in context["disk_owners"]]
    return [*asked, hostread.file_lines("fstab", "/etc/fstab")]


def host_read(settings: Mapping[str, Any]) -> list[str]:
    """The one command that reads a host before the role changes anything (its answers:
    :func:`parse_host`): only what the role's enabled parts decide from, so a host with its
    disks off is asked nothing about them."""
    context = os_tuning_context("", settings)
    asked = []
    if _enabled(settings, "sysctl"):
        asked += _kernel_questions(context)
    if _enabled(settings, "disks"):
        asked += _disk_questions(context)
    asked += hostread.path_states(planned_paths(_files(context, settings)))
    return hostread.command(asked)


@dataclass(frozen=True)
class Device:
    """What the host read found at a declared device."""

    #: stat's kind ("block special file", ...), "" when there is no such path.
    kind: str = ""
    #: Its device number, MAJ:MIN.
    majmin: str = ""
    #: blkid's exit code, None where the path is not a block device (blkid was not asked).
    blkid_rc: int | None = None
    #: What blkid found, its KEY=value lines.
    blkid: str = ""
    #: The blank check's exit code where blkid found nothing, else None.
    zero_rc: int | None = None


@dataclass(frozen=True)
class MountPoint:
    """A declared mount point as the host read found it; ``kind`` "" when it does not exist."""

    owner: str = ""
    group: str = ""
    mode: str = ""
    kind: str = ""
    #: An entry it holds, "" when it is empty: a first mount there would hide it.
    first_entry: str = ""


@dataclass(frozen=True)
class OsTuningHost:
    """What the role needs to know of a host before it changes anything."""

    #: Each kernel key's state (writable, readonly, absent) and live value.
    sysctl: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    #: systemd-detect-virt's name for the container the host is, "none" on a machine.
    container: str = "none"
    #: The machine's initial network namespace is visible (not a container's own).
    host_netns: bool = False
    devices: Mapping[str, Device] = field(default_factory=dict)
    #: findmnt's exit code, None when it was not asked (disks off).
    findmnt_rc: int | None = None
    #: findmnt's lines: target, MAJ:MIN, fstype, options.
    mounts: str = ""
    mount_points: Mapping[str, MountPoint] = field(default_factory=dict)
    #: The disks' owners the host has.
    users: frozenset[str] = frozenset()
    fstab: str = ""
    #: The state of each planned file that exists (hostread.path_states).
    paths: Mapping[str, str] = field(default_factory=dict)
    #: The mount points whose listing fails with an I/O error: a failed disk (OP-13).
    failed_mounts: frozenset[str] = frozenset()


def _by_subject(found: Mapping[str, str], kind: str) -> dict[str, str]:
    """The answers to the questions of ``kind``, by their subject."""
    prefix = f"{kind}:"
    return {unquote(label.removeprefix(prefix)): answer for label, answer in found.items()
            if label.startswith(prefix)}


def _device(node: str, blkid: str) -> Device:
    """A device from its ``node`` answer (kind|MAJ:MIN) and its ``blkid`` one (exit code, blank
    check's or "-", fields in base64), which a path that is not a block device leaves empty."""
    kind, _bar, majmin = node.rpartition("|")
    if not blkid:
        return Device(kind=kind, majmin=majmin)
    rc, zero, encoded = [*blkid.split(" ", 2), "", ""][:3]
    return Device(kind=kind, majmin=majmin, blkid_rc=int(rc), blkid=hostread.decoded(encoded) or "",
                  zero_rc=None if zero in ("-", "") else int(zero))


def _mount_point(path: str, entry: str) -> MountPoint:
    """A mount point from its ``path`` answer (owner|group|mode|kind, empty when it does not
    exist) and its ``entry`` one (a first entry in base64)."""
    owner, group, mode, kind = [*path.split("|", 3), "", "", "", ""][:4]
    return MountPoint(owner=owner, group=group, mode=mode, kind=kind,
                      first_entry=hostread.decoded(entry) or "")


def parse_host(stdout: str) -> OsTuningHost:
    """:func:`host_read`'s answers."""
    found = hostread.answers(stdout)
    blkid = _by_subject(found, "blkid")
    entries = _by_subject(found, "entry")
    findmnt_rc, _space, mounts = found.get("findmnt", "").partition(" ")
    return OsTuningHost(
        sysctl={key: (answer.partition("|")[0], answer.partition("|")[2])
                for key, answer in _by_subject(found, "sysctl").items()},
        container=found.get("container", "none"),
        host_netns=found.get("netns") == "host",
        devices={name: _device(node, blkid.get(name, ""))
                 for name, node in _by_subject(found, "node").items()},
        findmnt_rc=int(findmnt_rc) if findmnt_rc else None,
        mounts=hostread.decoded(mounts) or "",
        mount_points={mount: _mount_point(path, entries.get(mount, ""))
                      for mount, path in _by_subject(found, "path").items()},
        users=frozenset(user for user, answer in _by_subject(found, "user").items()
                        if answer == "yes"),
        fstab=hostread.decoded(found.get("fstab")) or "",
        paths=hostread.found_paths(found),
        failed_mounts=frozenset(mount for mount, answer in _by_subject(found, "failed").items()
                                if answer == "yes"),
    )


def failed_disks(host: str, disks: Iterable[Disk], failed: frozenset[str]) -> str:
    """The stop message when a declared data disk's filesystem fails with I/O errors, else "":
    nothing is formatted, mounted or owned on a failed disk; a Kafka log directory's names what
    Kafka did and the steps that bring its replicas back (OP-13)."""
    broken = [d for d in disks if d.get("mount") in failed]
    kafka = [f"{d['mount']} ({d['device']})" for d in broken if d.get("purpose") == "kafka_log_dir"]
    others = [f"{d['mount']} ({', '.join(str(x) for x in (d['device'], d['purpose']) if x)})"
              for d in broken if d.get("purpose") != "kafka_log_dir"]
    return "; ".join([*([log_dirs.failed_refusal(host, kafka)] if kafka else []), *(
        [f"{host}: {', '.join(others)} fails with I/O errors: a failed data disk "
         f"({cite('OP-13')}). Fix: stop the service that uses it, replace the disk with an empty "
         "one under the same device name and run again. Nothing was changed on the host."]
        if others else [])])


def read_problem(host: str, read: OsTuningHost) -> str:
    """The stop message when one of the read's commands failed rather than answered, else ""."""
    failed = []
    for name, device in read.devices.items():
        for command, code in (("blkid", device.blkid_rc), ("zero", device.zero_rc)):
            if code is not None and code not in ANSWER_CODES[command]:
                failed.append(f"{command} {name} exited with {code}")
    if read.findmnt_rc is not None and read.findmnt_rc not in ANSWER_CODES["findmnt"]:
        failed.append(f"findmnt exited with {read.findmnt_rc}")
    if not failed:
        return ""
    return (f"{host}: reading the host failed: {'; '.join(failed)}. Fix: run the command by hand "
            "on the host to see why")


def disk_report(read: OsTuningHost) -> dict[str, Any]:
    """The read in the shapes :func:`kafkaform.contexts.os_tuning_disks.disk_plan` takes: the
    devices' ``stat`` lines, ``blkid`` and ``zero`` as registered loops, ``findmnt``, the first
    entry of each mount point nothing is mounted on (``occupied``), ``fstab`` and ``paths``."""
    targets = {mount["target"] for mount in findmnt_mounts(read.mounts)}
    devices = read.devices.items()
    return {
        "stat": "\n".join(f"{name}|{d.kind}|{d.majmin}" for name, d in devices if d.kind),
        "blkid": [{"item": name, "rc": d.blkid_rc, "stdout": d.blkid} for name, d in devices
                  if d.blkid_rc is not None],
        "zero": [{"item": {"item": name}, "rc": d.zero_rc} for name, d in devices
                 if d.zero_rc is not None],
        "findmnt": read.mounts,
        "occupied": "\n".join(f"{mount} {point.first_entry}"
                              for mount, point in read.mount_points.items()
                              if point.first_entry and mount not in targets),
        "fstab": read.fstab,
        "paths": {mount: {"owner": p.owner, "group": p.group, "mode": p.mode, "kind": p.kind}
                  for mount, p in read.mount_points.items() if p.kind},
    }


@dataclass(frozen=True)
class OsTuningPlan(WritesFiles):
    """Everything the role does on one host, decided. A part switched off (os_tuning_*_enabled)
    plans nothing and refuses nothing."""

    #: The templates' input (kafkaform.contexts.os_tuning).
    context: dict[str, Any]
    sysctl_enabled: bool
    limits_enabled: bool
    disks_enabled: bool
    #: Why the run must stop before it changes anything, each "" when it need not: the read
    #: failed; a data disk's declaration, device or content (DF-01, DF-03); a kernel setting the
    #: host cannot hold (OS-04). Each names the host, the setting and the fix.
    read_problem: str
    disks_refusal: str
    sysctl_refusal: str
    #: The disks' refusal is a failed disk (OP-13): it stops every host of the run, not only
    #: this one, since the cluster runs degraded until the disk is replaced.
    disks_failed: bool
    #: The file of every kernel setting, and the settings to set live (those whose live value
    #: differs, and in a container only its own namespaces' writable ones).
    sysctl_files: list[PlannedFile]
    sysctl_apply: list[dict[str, str]]
    in_container: bool
    #: In a container: which settings are set live and which are left to the host.
    sysctl_report: str
    #: The service users' open-file limits. FD-01 FD-02
    limits_files: list[PlannedFile]
    #: Every file the plan writes (sysctl_files, limits_files); no secret.
    files: list[PlannedFile]
    secret_files: list[PlannedFile]
    #: The data disks' owners the host lacks, created as system users.
    create_owners: list[str]
    #: The blank devices (and force_format ones that are not mounted) to format (DF-01), each
    #: with the command that reads its new UUID (uuid_argv) and its mount options (opts).
    formats: list[Disk]
    #: The disks whose /etc/fstab line is missing or differs, and those to mount, in declared
    #: order; those formatted in this run (formatted) get their UUID once formatted
    #: (:func:`planned_mounts`).
    fstab: list[Disk]
    mount: list[Disk]
    #: Mounted disks whose live options lack a declared one.
    remount: list[Disk]
    #: Mount points and data directories to give their owner and the data mode (DF-03): those
    #: mounted in this run and those whose owner, group or mode differ.
    own: list[Disk]
    #: Of those, the ones whose owner exists already: check mode cannot give a directory to a user
    #: it has not created.
    own_in_check_mode: list[Disk]
    #: Of those, the ones this run does not mount: the deploy's mount command gives the others
    #: their owner as it mounts them.
    own_in_place: list[Disk]
    #: Data directories on an existing filesystem, each with its warning.
    directories: list[Disk]
    #: The declared devices, checked once mounted (DF-01, DF-02), against findmnt's answer: the
    #: read's, or a new one when the run mounts or remounts (mounts_change).
    verify: list[Disk]
    mounts_change: bool
    findmnt_argv: list[str]
    findmnt: str
    #: What the host read found of the planned files (install_files' host_state).
    host_state: dict[str, str]

    def as_vars(self) -> dict[str, Any]:
        """The plan as the role reads it; each part's files too as install_files items."""
        found = super().as_vars()
        found["sysctl_files"] = [f.as_task_item() for f in self.sysctl_files]
        found["limits_files"] = [f.as_task_item() for f in self.limits_files]
        return found


def _sysctl_file(context: Mapping[str, Any]) -> PlannedFile:
    return PlannedFile(dest=context["sysctl_file"], mode="0644",
                       template=template(ROLE, "etc/sysctl.d/60-kafkaform.conf.j2"))


def _files(context: Mapping[str, Any], settings: Mapping[str, Any]) -> list[PlannedFile]:
    """The files of the enabled parts: the kernel settings' and the open-file limits'."""
    return [
        *([_sysctl_file(context)] if _enabled(settings, "sysctl") else []),
        *([PlannedFile(dest=context["limits"]["file"], mode="0644",
                       template=template(ROLE, "etc/security/limits.d/60-kafkaform.conf.j2"))]
          if _enabled(settings, "limits") else []),
    ]


def _sysctl(context: Mapping[str, Any], read: OsTuningHost) -> dict[str, Any]:
    """The kernel settings' part of the plan (kafkaform.contexts.os_tuning_sysctl)."""
    decided = sysctl_plan(context, read.sysctl, read.container, read.host_netns)
    return {"sysctl_refusal": decided["refusal"],
            "sysctl_files": [_sysctl_file(context)],
            "sysctl_apply": [{"key": x["key"], "value": x["value"]} for x in decided["apply"]],
            "in_container": decided["in_container"], "sysctl_report": decided["report"]}


def _disk_refusal(context: Mapping[str, Any],
                  report: Mapping[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """The first stop of the role's disk checks, in their order (DF-03 input, missing devices,
    then DF-01), and the disk plan when none stops the run."""
    if context["disk_input_error"]:
        return context["disk_input_error"], None
    bad_nodes = device_problems(context, report["stat"])
    if bad_nodes:
        return bad_nodes, None
    decided = disk_plan(context, report)
    return decided["refusal"], None if decided["refusal"] else decided


def _in_order(disks: Iterable[Disk], *keep: Iterable[Disk]) -> list[Disk]:
    """Those of ``disks`` whose mount point is in one of ``keep``, in declared order: an outer
    mount point is mounted before one inside it."""
    mounts = {disk["mount"] for kept in keep for disk in kept}
    return [disk for disk in disks if disk["mount"] in mounts]


def _disks(host: str, context: Mapping[str, Any], read: OsTuningHost) -> dict[str, Any]:
    """The data disks' part of the plan: what the disk plan decides for each disk
    (kafkaform.contexts.os_tuning_disks), with what is still to do on the host for it
    (kafkaform.contexts.os_tuning_mounts). A failed disk stops it first (OP-13)."""
    failed = failed_disks(host, context["disks"], read.failed_mounts)
    if failed:
        return {"disks_refusal": failed, "disks_failed": True}
    refusal, decided = _disk_refusal(context, disk_report(read))
    if decided is None:
        return {"disks_refusal": refusal}
    mounts = disk_mounts(decided, [])
    formats = [{**disk, "formatted": True, "opts": ",".join(disk["options"]),
                "uuid_argv": ["blkid", "-p", "-o", "value", "-s", "UUID", disk["device"]]}
               for disk in decided["formats"]]
    planned = [next((f for f in formats if f["mount"] == m["mount"]), {**m, "formatted": False})
               for m in mounts["all"]]
    mounted_here = {disk["mount"] for disk in _in_order(planned, formats, mounts["unmounted"])}
    return {
        "create_owners": [o for o in context["disk_owners"] if o not in read.users],
        "formats": formats,
        "fstab": _in_order(planned, formats, mounts["fstab"]),
        "mount": _in_order(planned, formats, mounts["unmounted"]),
        "remount": mounts["remount"],
        "own": mounts["owners"],
        "own_in_check_mode": [d for d in mounts["owners"] if d["owner"] in read.users],
        "own_in_place": [d for d in mounts["owners"] if d["mount"] not in mounted_here],
        "directories": [{**d, "warning": DIRECTORY_WARNING.format(**d)}
                        for d in context["directories"]],
        "verify": decided["devices"],
        "mounts_change": bool(formats or mounts["unmounted"] or mounts["remount"]),
    }


def os_tuning_plan(host: str, settings: Mapping[str, Any], read: OsTuningHost) -> OsTuningPlan:
    """The plan for ``host``, from the role's settings and the host read."""
    context = os_tuning_context(host, settings)
    enabled = {part: _enabled(settings, part) for part in ("sysctl", "limits", "disks")}
    problem = read_problem(host, read)
    decided: dict[str, Any] = {
        "sysctl_refusal": "", "sysctl_files": [], "sysctl_apply": [], "in_container": False,
        "sysctl_report": "", "disks_refusal": "", "disks_failed": False, "create_owners": [],
        "formats": [],
        "fstab": [], "mount": [], "remount": [], "own": [], "own_in_check_mode": [],
        "own_in_place": [], "directories": [], "verify": [], "mounts_change": False}
    if enabled["sysctl"] and not problem:
        decided |= _sysctl(context, read)
    if enabled["disks"] and not problem:
        decided |= _disks(host, context, read)
    limits_files = [f for f in _files(context, settings) if f.dest == context["limits"]["file"]]
    return OsTuningPlan(
        context=context,
        sysctl_enabled=enabled["sysctl"],
        limits_enabled=enabled["limits"],
        disks_enabled=enabled["disks"],
        read_problem=problem,
        limits_files=limits_files,
        files=[*decided["sysctl_files"], *limits_files],
        secret_files=[],
        findmnt_argv=list(FINDMNT_ARGV),
        findmnt=read.mounts,
        host_state=dict(read.paths),
        **decided,
    )


def planned_mounts(plan: Mapping[str, Any],
                   uuid_results: Sequence[Mapping[str, Any]]) -> dict[str, list[Disk]]:
    """The plan's ``fstab`` and ``mount`` with the UUID of each disk formatted in this run, read
    after formatting (``uuid_results``: the registered loop of each format's ``uuid_argv``);
    ``unformatted``: those without one (check mode formatted nothing), left out of both."""
    uuids = {}
    for result in uuid_results:
        item = result.get("item")
        if isinstance(item, Mapping):
            uuids[item.get("device")] = str(result.get("stdout", "")).strip()

    def completed(disks: Iterable[Mapping[str, Any]]) -> list[Disk]:
        found = [{**d, "uuid": uuids.get(d["device"], "")} if d["formatted"] else dict(d)
                 for d in disks]
        return [d for d in found if d["uuid"]]

    return {"fstab": completed(plan["fstab"]), "mount": completed(plan["mount"]),
            "unformatted": [d for d in plan["formats"] if not uuids.get(d["device"])]}
