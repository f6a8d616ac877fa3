"""The per-host input of the os_tuning role and its templates: what the inventory alone decides.

:func:`os_tuning_context` computes the kernel settings, the limits file and the declared data disks
with their input errors; the role's plan (``kafkaform.plans.os_tuning``) holds it as its
``context``, which the templates read under the name ``os_tuning`` in both engines and in the
golden tests. The decisions over what the host answers live beside it, one module per concern, so
that none outgrows the project's 600 lines: kernel settings (:mod:`.os_tuning_sysctl`), what to do
with each data disk (:mod:`.os_tuning_disks`), and their fstab lines, mounts, owners and
verification (:mod:`.os_tuning_mounts`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..defaults import as_bool, role_default, setting

Disk = dict[str, Any]

#: What is mounted where, as the host read (kafkaform.plans.os_tuning) asks it and the role's
#: verification asks it again.
FINDMNT_ARGV = ["findmnt", "--raw", "--noheadings", "--output", "TARGET,MAJ:MIN,FSTYPE,OPTIONS"]


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
    # Case-insensitive order, as the templates' dictsort: the file and the host read agree.
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
    """The ``os_tuning`` dict the role's tasks and the role's templates read.

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
    return {
        "host": host,
        "sysctl": sysctl,
        "sysctl_file": str(setting(settings, "os_tuning_sysctl_file")),
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
        "mount_points": unique(d["mount"] for d in disks),
        "findmnt_argv": FINDMNT_ARGV,
        "directories": [d for d in disks if d["directory"]],
        "blank_check_bytes": blank_check_bytes,
        "data_dir_mode": str(setting(settings, "os_tuning_data_dir_mode")),
    }
