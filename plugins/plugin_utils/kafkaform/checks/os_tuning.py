"""The hosts' kernel settings and data disks (the os_tuning role's inputs)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from .. import inputs, model
from ..defaults import role_default
from ..model import InventoryView, as_int
from ..rules import cite
from .finding import Finding


def sysctl_settings(view: InventoryView, host: str) -> dict[str, str]:
    """The kernel settings a host gets: the os_tuning defaults with its overrides on top."""
    merged = dict(role_default("os_tuning_sysctl"))
    merged.update(view.var(host, "os_tuning_sysctl_overrides", {}) or {})
    return {str(k): str(v) for k, v in merged.items()}


def kernel_settings(view: InventoryView) -> Iterator[Finding]:
    for host in view.members(model.ZOOKEEPER) + view.members(model.KAFKA_BROKER):
        yield from kernel_findings(host, sysctl_settings(view, host))


#: A sysctl name as sysctl.d(5) and /proc/sys take it: dotted (or slashed) words.
SYSCTL_KEY = re.compile(r"[a-z0-9_-]+([./][A-Za-z0-9_*:-]+)+")


def kernel_value_findings(host: str, sysctl: dict[str, str]) -> Iterator[Finding]:
    """Each setting in a form sysctl writes: a sysctl name; a one-line value; numbers for the
    settings the role sets by default, which the kernel takes as numbers only."""
    numeric = set(role_default("os_tuning_sysctl"))
    for key, value in sysctl.items():
        if not SYSCTL_KEY.fullmatch(key):
            yield Finding(cite("OS-04"), f"{key!r} is not a kernel setting's name",
                          "name it as sysctl does, e.g. vm.swappiness, in "
                          "os_tuning_sysctl_overrides", (host,))
        elif not value.strip() or "\n" in value:
            shape = "no" if not value.strip() else "a multi-line"
            yield Finding(cite("OS-04"), f"{key} has {shape} value",
                          f"give {key} a one-line value in os_tuning_sysctl_overrides", (host,))
        elif key in numeric and not all(as_int(f) is not None for f in value.split()):
            yield Finding(cite("OS-04"), f"{key} is {value!r}, not a number (or numbers separated "
                          "by spaces): the kernel refuses it", f"give {key} a number in "
                          "os_tuning_sysctl_overrides", (host,))


def kernel_findings(host: str, sysctl: dict[str, str]) -> Iterator[Finding]:
    yield from kernel_value_findings(host, sysctl)

    def number(key: str, position: int = 0) -> int | None:
        fields = sysctl.get(key, "").split()
        return as_int(fields[position]) if len(fields) > position else None

    for proto in ("rmem", "wmem"):
        tcp_max, core_max = number(f"net.ipv4.tcp_{proto}", 2), number(f"net.core.{proto}_max")
        if tcp_max is not None and core_max is not None and tcp_max > core_max:
            yield Finding(cite("OS-01"), f"net.ipv4.tcp_{proto} maximum {tcp_max} is above "
                          f"net.core.{proto}_max {core_max}",
                          f"raise net.core.{proto}_max or lower the tcp_{proto} maximum in "
                          "os_tuning_sysctl_overrides", (host,))
    background, dirty = number("vm.dirty_background_ratio"), number("vm.dirty_ratio")
    if background is not None and dirty is not None and background >= dirty:
        yield Finding(cite("OS-02"), f"vm.dirty_background_ratio {background} is not below "
                      f"vm.dirty_ratio {dirty}", "keep the background ratio below the dirty "
                      "ratio (usually 5 and 60-80)", (host,))
    if number("vm.swappiness") == 0:
        yield Finding(cite("OS-03"), "vm.swappiness 0 lets the kernel's OOM killer fire instead of "
                      "swapping", "use vm.swappiness 1", (host,))


def data_disk_declarations(view: InventoryView) -> Iterator[Finding]:
    for host in view.cluster_hosts():
        found = list(_data_disk_findings(view, host))
        yield from found
        entries = view.var(host, "os_tuning_data_disks", []) or []
        if not found:  # the rest of each entry (owner, mount options) as the role's spec types it
            for problem in inputs.role_input("os_tuning", "os_tuning_data_disks",
                                             entries).problems:
                yield Finding(cite("DF-03"), problem, "correct the entry (roles/os_tuning/"
                              "README.md lists its keys)", (host,))


def _data_disk_findings(view: InventoryView, host: str) -> Iterator[Finding]:
    """The DF-03 findings of one host's data disk declarations."""
    entries = view.var(host, "os_tuning_data_disks", []) or []
    if not isinstance(entries, list):
        yield Finding(cite("DF-03"), "os_tuning_data_disks is not a list",
                      "declare a list of {device, mount, purpose}", (host,))
        return
    devices: Counter[str] = Counter()
    mounts: Counter[str] = Counter()
    for index, entry in enumerate(entries):
        where = f"os_tuning_data_disks[{index}]"
        if not isinstance(entry, dict) and not hasattr(entry, "get"):
            yield Finding(cite("DF-03"), f"{where} is not a mapping",
                          "declare {device, mount, purpose}", (host,))
            continue
        if not entry.get("mount"):
            yield Finding(cite("DF-03"), f"{where} has no mount point",
                          "set mount to an absolute path", (host,))
        elif not str(entry["mount"]).startswith("/"):
            yield Finding(cite("DF-03"),
                          f"{where} mount {entry['mount']!r} is not an absolute path",
                          "use an absolute path", (host,))
        else:
            mounts[str(entry["mount"]).rstrip("/") or "/"] += 1
        if "device" not in entry:
            yield Finding(cite("DF-03"), f"{where} has no device", "set device to the block "
                          "device, or device: null to use a directory on an existing "
                          "filesystem", (host,))
        elif entry["device"] is not None:
            devices[str(entry["device"])] += 1
        if entry.get("purpose") not in model.DISK_PURPOSES:
            yield Finding(cite("DF-03"), f"{where} purpose is {entry.get('purpose')!r}",
                          f"use one of {', '.join(model.DISK_PURPOSES)}", (host,))
    for device, count in sorted(devices.items()):
        if count > 1:
            yield Finding(cite("DF-03"), f"device {device} is declared {count} times",
                          "declare each device once", (host,))
    for mount, count in sorted(mounts.items()):
        if count > 1:
            yield Finding(cite("DF-03"), f"mount point {mount} is used by {count} entries",
                          "give each data disk its own mount point", (host,))
