"""The per-host input of the os_tuning role and its templates, and its decisions on host reports.

:func:`os_tuning_context` computes what the inventory alone decides (the kernel settings, the
limits file, the declared data disks and their input errors); the Ansible role (through
``plugins/filter/os_tuning.py``) and the golden tests give its result to the templates under the
name ``os_tuning``. The other public functions are pure decisions over what the role's probes
registered (the sysctl probe, stat, blkid, cmp, findmnt), so the tasks only run commands and
modules with values computed here.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..defaults import as_bool, role_default, setting

Disk = dict[str, Any]

#: What is mounted where, as :data:`HOST_PROBE` reads it and the role's verification reads it again.
FINDMNT_ARGV = ["findmnt", "--raw", "--noheadings", "--output", "TARGET,MAJ:MIN,FSTYPE,OPTIONS"]

#: What the role reads from a host, in one call before it changes anything: its kernel settings,
#: data disks, mounts, the disks' owners and /etc/fstab. Arguments: the number of kernel keys and
#: the keys, the blank-check size, the number of devices and the devices, the number of mount
#: points and the mount points, then the owners. Each answer starts with an "@@" line that
#: :func:`host_report` reads:
#:   @@sysctl: "key|state|live value" per key (state writable, readonly or absent), then
#:     "@container|<name>" (systemd-detect-virt's name for the container, or none) and, when the
#:     machine's initial network namespace is visible, "@netns|host": net.core.netdev_max_backlog
#:     only exists there (measured in podman containers);
#:   @@stat: "name|kind|MAJ:MIN" of each device (its device number);
#:   @@blkid RC DEVICE: what ``blkid -p -o export`` found on a block device (rc 0 signatures,
#:     2 none, 8 several), and @@zero RC DEVICE: cmp against /dev/zero where it found none (rc 0
#:     all zero, 1 something else);
#:   @@findmnt RC: what is mounted where;
#:   @@path: owner, group, mode and kind of each mount point that exists;
#:   @@unmounted MOUNT: a mount point nothing is mounted on, and its first entry if it has any
#:     (a first mount there would hide it);
#:   @@users: the owners the host has; @@fstab: /etc/fstab.
HOST_PROBE = """\
n=$1; shift
echo '@@sysctl'
while [ "$n" -gt 0 ]; do
  key=$1; shift; n=$((n - 1))
  path=/proc/sys/$(printf '%s' "$key" | tr . /)
  if [ ! -e "$path" ]; then printf '%s|absent|\\n' "$key"; continue; fi
  if [ -w "$path" ]; then state=writable; else state=readonly; fi
  printf '%s|%s|%s\\n' "$key" "$state" "$(tr '\\t' ' ' < "$path")"
done
if command -v systemd-detect-virt > /dev/null; then
  echo "@container|$(systemd-detect-virt --container)"
elif [ -e /run/.containerenv ] || [ -e /.dockerenv ]; then
  echo '@container|container'
else
  echo '@container|none'
fi
if [ -e /proc/sys/net/core/netdev_max_backlog ]; then echo '@netns|host'; fi
blank=$1; n=$2; shift 2
while [ "$n" -gt 0 ]; do
  device=$1; shift; n=$((n - 1))
  echo '@@stat'
  stat --dereference --format '%n|%F|%Hr:%Lr' -- "$device" 2> /dev/null
  [ -b "$device" ] || continue
  found=$(blkid -p -o export -- "$device"); rc=$?
  printf '@@blkid %s %s\\n%s\\n' "$rc" "$device" "$found"
  if [ "$rc" -eq 2 ]; then
    cmp --silent --bytes "$blank" -- "$device" /dev/zero
    printf '@@zero %s %s\\n' "$?" "$device"
  fi
done
mounts=$(@FINDMNT@); rc=$?
printf '@@findmnt %s\\n%s\\n' "$rc" "$mounts"
n=$1; shift
while [ "$n" -gt 0 ]; do
  mount=$1; shift; n=$((n - 1))
  stat --printf '@@path\\n%U|%G|%a|%F|%n\\n' -- "$mount" 2> /dev/null
  if ! printf '%s\\n' "$mounts" | cut -d ' ' -f 1 | grep -Fqx -- "$mount"; then
    printf '@@unmounted %s\\n' "$mount"
    find "$mount" -mindepth 1 -maxdepth 1 -printf '%H %p\\n' -quit 2> /dev/null
  fi
done
echo '@@users'
for user in "$@"; do getent passwd "$user" > /dev/null && printf '%s\\n' "$user"; done
echo '@@fstab'
cat /etc/fstab 2> /dev/null
exit 0
""".replace("@FINDMNT@", shlex.join(FINDMNT_ARGV))

#: The disk plan's actions that format a device.
FORMAT_ACTIONS = ("format", "format_force")

#: Mount options mount(8) or systemd consume without passing them to the kernel: they never show
#: in /proc/mounts, so they are not compared with the live options.
NOT_IN_KERNEL = frozenset({"auto", "defaults", "noauto", "nofail", "_netdev", "user", "users",
                           "nouser", "owner", "group"})
_USERSPACE_ONLY = re.compile(r"x-|comment=")


def unique(values: Iterable[Any]) -> list[Any]:
    """``values`` without repeats, in first-seen order (as Jinja's ``unique``)."""
    seen: list[Any] = []
    for value in values:
        if value not in seen:
            seen.append(value)
    return seen


def effective_sysctl(settings: Mapping[str, Any]) -> dict[str, str]:
    """The host's overrides merged over the role's kernel settings, in key order, values as text."""
    merged = {**setting(settings, "os_tuning_sysctl"),
              **setting(settings, "os_tuning_sysctl_overrides")}
    # Case-insensitive order, as the templates' dictsort: the file and the probe agree.
    return {str(k): str(v) for k, v in sorted(merged.items(), key=lambda kv: str(kv[0]).lower())}


def option_list(value: Any) -> list[Any]:
    """Mount options written as a list or as one comma-separated string."""
    if value is None:
        return []
    return value.split(",") if isinstance(value, str) else list(value)


def normalised_disk(index: int, entry: Mapping[str, Any], owners: Mapping[str, Any],
                    common: Sequence[Any]) -> Disk:
    """One ``os_tuning_data_disks`` entry with every field set: mount without trailing slash,
    owner from its purpose, noatime and the common options first."""
    purpose = entry.get("purpose", "")
    default_owner = owners.get(purpose, "") if isinstance(purpose, str) else ""
    device = entry.get("device")
    return {
        "index": index,
        "device": device,
        "directory": "device" in entry and device is None,
        "mount": str(entry.get("mount") or "").rstrip("/") or "/",
        "purpose": purpose,
        "owner": entry.get("owner", default_owner),
        "options": unique(["noatime", *common, *option_list(entry.get("mount_options"))]),
        "force_format": as_bool(entry.get("force_format", False)),
    }


def entry_problems(entry: Mapping[str, Any], disk: Disk, owners: Mapping[str, Any]) -> list[str]:
    """Why one declared disk cannot work (DF-03), as sentences."""
    where = f"os_tuning_data_disks[{disk['index']}]"
    problems = []
    if "device" not in entry:
        problems.append(f"{where} (mount {disk['mount']}) has no device: set device to the block"
                        " device, or device: null for a directory on an existing filesystem")
    elif not disk["directory"] and not isinstance(disk["device"], str):
        problems.append(f"{where} device must be a path like /dev/sdb, not {disk['device']}")
    if not disk["mount"].startswith("/") or disk["mount"] == "/":
        problems.append(f'{where} mount must be an absolute path other than /, not '
                        f'"{disk["mount"]}"')
    if not isinstance(disk["purpose"], str) or disk["purpose"] not in owners:
        problems.append(f'{where} purpose is "{disk["purpose"]}": use one of '
                        f"{', '.join(owners)}")
    return problems


def repeats(values: list[str], sentence: str) -> list[str]:
    """``sentence`` (with {value} and {count}) for each value that occurs more than once."""
    return [sentence.format(value=v, count=values.count(v))
            for v in unique(values) if values.count(v) > 1]


def declared_disks(settings: Mapping[str, Any]) -> tuple[list[Disk], list[str]]:
    """The host's data disks, normalised, and every input error found in their declaration."""
    name = "os_tuning_data_disks"
    # Read raw: None is an error here, not "use the default".
    entries = settings[name] if name in settings else role_default(name)
    if not isinstance(entries, list | tuple):
        return [], [f"{name} must be a list of {{device, mount, purpose}}"]
    owners = setting(settings, "os_tuning_purpose_owners")
    common = option_list(setting(settings, "os_tuning_mount_options"))
    disks, errors = [], []
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            errors.append(f"{name} entry {entry} is not a mapping of device, mount, purpose")
            continue
        disks.append(normalised_disk(index, entry, owners, common))
        errors += entry_problems(entry, disks[-1], owners)
    devices = [d["device"] for d in disks if not d["directory"] and isinstance(d["device"], str)]
    errors += repeats(devices, "device {value} is declared {count} times: declare each device "
                               "once")
    errors += repeats([d["mount"] for d in disks], "mount point {value} is used by {count} "
                      "entries: give each data disk its own mount point")
    return disks, errors


def os_tuning_context(host: str, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The ``os_tuning`` dict the role's tasks and the templates of ``templates/os_tuning/`` read.

    + host: the host's inventory name, which starts every message
    + settings: the role's variables by full name; a missing one takes the role default

    Never raises on bad disk declarations: ``disk_input_error`` carries them, and the role stops
    with that message before it touches anything.
    """
    sysctl = effective_sysctl(settings)
    disks, errors = declared_disks(settings)
    devices = [d["device"] for d in disks if not d["directory"] and isinstance(d["device"], str)]
    owners = unique(d["owner"] for d in disks)
    blank_check_bytes = setting(settings, "os_tuning_blank_check_bytes")
    # Only what the role's enabled parts read: a host with its disks off is asked for none.
    probed_keys = list(sysctl) if as_bool(setting(settings, "os_tuning_sysctl_enabled")) else []
    probed = disks if as_bool(setting(settings, "os_tuning_disks_enabled")) else []
    probed_devices = devices if probed else []
    mounts = unique(d["mount"] for d in probed)
    return {
        "host": host,
        "sysctl": sysctl,
        "sysctl_file": str(setting(settings, "os_tuning_sysctl_file")),
        "probe_argv": ["sh", "-c", HOST_PROBE, "probe", str(len(probed_keys)), *probed_keys,
                       str(blank_check_bytes), str(len(probed_devices)), *probed_devices,
                       str(len(mounts)), *mounts, *(owners if probed else [])],
        "namespaced_prefixes": [str(p) for p in
                                setting(settings, "os_tuning_sysctl_namespaced_prefixes")],
        "limits": {
            "file": str(setting(settings, "os_tuning_limits_file")),
            "users": [str(u) for u in setting(settings, "os_tuning_limits_users")],
            "nofile": int(setting(settings, "os_tuning_nofile_limit")),
        },
        "disks": disks,
        "disk_input_error": f"{host}: {' | '.join(errors)}" if errors else "",
        "disk_devices": devices,
        "disk_owners": owners,
        "findmnt_argv": FINDMNT_ARGV,
        "directories": [d for d in disks if d["directory"]],
        "blank_check_bytes": blank_check_bytes,
        "data_dir_mode": str(setting(settings, "os_tuning_data_dir_mode")),
    }


# --- kernel settings -----------------------------------------------------------------------------

def left_because(key: str, state: str, container: bool, host_netns: bool,
                 prefixes: tuple[str, ...]) -> str:
    """Why ``key`` is left to the host rather than set live here; "" when it is set live.

    Inside a container only keys its own namespaces hold are set live: setting a global key from
    a privileged container would change every container on the machine.
    """
    if not container:
        return "" if state == "writable" else f"is {state} on this host"
    if not key.startswith(prefixes):
        return "is global to the machine"
    if key.startswith("net.") and host_netns:
        return "is in the host's network namespace"
    if state != "writable":
        where = "not in" if state == "absent" else "read-only in"
        return f"is {where} the container's namespace"
    return ""


def left_line(left: Mapping[str, str]) -> str:
    have = f"is {left['have']}" if left["have"] != "" else "absent here"
    return f"{left['key']} {left['why']} (wants {left['value']}, {have})"


def sysctl_messages(context: Mapping[str, Any], container: str, live: list[dict[str, str]],
                    left: list[dict[str, str]]) -> dict[str, str]:
    """The stop message (a key a real host cannot hold) and the container's report."""
    host = context["host"]
    if container == "none":
        refusal = (f"{host}: kernel settings that cannot be set here: "
                   f"{', '.join(x['key'] for x in left)} "
                   f"({'; '.join(unique(x['why'] for x in left))}). Fix: remove misspelt or "
                   "unsupported keys from os_tuning_sysctl_overrides.") if left else ""
        return {"refusal": refusal, "report": ""}
    report = (f"{host} is a container ({container}): all {len(context['sysctl'])} kernel "
              f"settings are in {context['sysctl_file']}; set live here: "
              f"{', '.join(x['key'] for x in live) or 'none'}. Left to the host, so not live "
              "here unless the host has the same value: "
              f"{'; '.join(left_line(x) for x in left)}.")
    return {"refusal": "", "report": report}


def sysctl_plan(context: Mapping[str, Any], probe_stdout: str) -> dict[str, Any]:
    """Which kernel settings are set live here, which are left to the host, and the messages.

    ``probe_stdout`` is the ``sysctl`` answer of :func:`host_report`. ``apply`` lists the live
    ones whose value differs, compared word by word as ansible.posix.sysctl does, so a rerun
    changes nothing.
    """
    probe = dict(line.split("|", 1) for line in probe_stdout.splitlines() if "|" in line)
    container = probe.get("@container", "none")
    prefixes = tuple(context["namespaced_prefixes"])
    live: list[dict[str, str]] = []
    left: list[dict[str, str]] = []
    for key, value in context["sysctl"].items():
        state, have = (probe.get(key, "") + "|").split("|")[:2]
        why = left_because(key, state, container != "none", "@netns" in probe, prefixes)
        if why:
            left.append({"key": key, "have": have, "why": why, "value": value})
        else:
            live.append({"key": key, "have": have, "value": value})
    return {
        "container": container,
        "in_container": container != "none",
        "live": live,
        "left": left,
        "apply": [x for x in live if x["have"].split() != x["value"].split()],
        **sysctl_messages(context, container, live, left),
    }


# --- data disks ----------------------------------------------------------------------------------

#: The exit codes of the probe's commands that are answers, not failures (:data:`HOST_PROBE`).
ANSWER_CODES = {"blkid": (0, 2, 8), "zero": (0, 1), "findmnt": (0,)}


def probe_answers(probe_stdout: str) -> list[tuple[str, list[str]]]:
    """:data:`HOST_PROBE`'s output as pairs: an answer's "@@" line without the "@@", and the
    non-empty lines after it."""
    answers: list[tuple[str, list[str]]] = []
    for line in probe_stdout.splitlines():
        if line.startswith("@@"):
            answers.append((line[2:], []))
        elif answers and line:
            answers[-1][1].append(line)
    return answers


def host_report(context: Mapping[str, Any], probe_stdout: str) -> dict[str, Any]:
    """What :data:`HOST_PROBE` printed, in the shapes the plans read.

    ``blkid`` and ``zero`` are lists of ``{item, rc, stdout}``, as a registered loop would be;
    ``paths`` maps each existing mount point to its owner, group, mode and kind; ``problem`` is
    the stop message when one of the probe's commands failed rather than answered, else "".
    """
    text: dict[str, list[str]] = {}
    probes: dict[str, list[dict[str, Any]]] = {"blkid": [], "zero": []}
    unmounted: list[str] = []
    failed: list[str] = []
    for head, lines in probe_answers(probe_stdout):
        name, _space, rest = head.partition(" ")
        if name in ANSWER_CODES:
            code, _space, device = rest.partition(" ")
            if int(code) not in ANSWER_CODES[name]:
                failed.append(f"{name} {device}".rstrip() + f" exited with {code}")
            if name != "findmnt":
                probes[name].append({"item": device, "rc": int(code), "stdout": "\n".join(lines)})
                continue
        if name == "unmounted":
            unmounted.append(rest)
            name = "occupied"
        text.setdefault(name, []).extend(lines)
    paths = {}
    for line in text.get("path", []):
        owner, group, mode, kind, path = line.split("|", 4)
        paths[path] = {"owner": owner, "group": group, "mode": mode, "kind": kind}
    return {
        **{name: "\n".join(text.get(name, [])) for name in
           ("sysctl", "stat", "findmnt", "occupied", "fstab")},
        "blkid": probes["blkid"],
        "zero": [{"item": {"item": z["item"]}, "rc": z["rc"]} for z in probes["zero"]],
        "unmounted": unmounted,
        "paths": paths,
        "users": text.get("users", []),
        "problem": (f"{context['host']}: reading the host failed: {'; '.join(failed)}. Fix: run "
                    "the command by hand on the host to see why") if failed else "",
    }


def stat_nodes(stat_stdout: str) -> dict[str, dict[str, str]]:
    """Device name -> kind and device number, from the ``stat`` answer of :func:`host_report`."""
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
    """Mount point → its first entry, from ``find M1 M2 ... -mindepth 1 -maxdepth 1 -printf
    '%H %p\\n'`` (the start point, then the entry)."""
    found: dict[str, str] = {}
    for line in find_stdout.splitlines():
        start, _space, entry = line.partition(" ")
        found.setdefault(start, entry)
    return found


def disk_plan(context: Mapping[str, Any], report: Mapping[str, Any]) -> dict[str, Any]:
    """What to do with each declared disk, from what the host reported (:func:`host_report`),
    and the refusals.

    ``refusal`` is the stop message ("" when there is none): the role checks it before it
    changes anything, in check mode too. The plan keeps the report's /etc/fstab and mount point
    owners, from which :func:`disk_mounts` leaves out what is already right.
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
