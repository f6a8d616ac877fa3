"""The per-host input of the os_tuning role and its templates: what the inventory alone decides.

:func:`os_tuning_context` computes the kernel settings, the limits file, the declared data disks
with their input errors and the one command that reads the host (:data:`HOST_PROBE`); the Ansible
role (through ``plugins/filter/os_tuning.py``) and the golden tests give its result to the
templates under the name ``os_tuning``. The decisions over what the host answers live beside it,
one module per concern, so that none outgrows the project's 600 lines: the answers sorted
(:mod:`.os_tuning_probe`), kernel settings (:mod:`.os_tuning_sysctl`), what to do with each data
disk (:mod:`.os_tuning_disks`), and their fstab lines, mounts, owners and verification
(:mod:`.os_tuning_mounts`).
"""

from __future__ import annotations

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
