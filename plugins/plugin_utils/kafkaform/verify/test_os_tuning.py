"""What the os_tuning role promises, checked on live hosts (MO-10; RULES.md: OS, DF, FD).

    kafkaform verify -i inventory/lab --checks os_tuning [--limit kf-kafka1]

Expected values come from the model (the role's defaults with the host's inventory on top), never
from this file. Inside a container the machine-global kernel keys cannot be set per host: they are
checked in the sysctl file instead, and the report says which ones and why.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest
import testinfra.host  # type: ignore[import-untyped]

from kafkaform.checks import sysctl_settings
from kafkaform.model import InventoryView, data_disks

Setting = Callable[[str], Any]


def words(value: object) -> list[str]:
    """A sysctl value as the kernel compares it: whitespace-separated words."""
    return str(value).split()


def read_sysctl_file(host: testinfra.host.Host, path: str) -> dict[str, str]:
    values = {}
    for line in host.file(path).content_string.splitlines():
        line = line.strip()
        if line and not line.startswith(("#", ";")) and "=" in line:
            key, value = line.split("=", 1)
            values[key.strip()] = value.strip()
    return values


@dataclass(frozen=True)
class Live:
    """A kernel setting as the host has it: its value (None where /proc/sys has no such key)
    and whether this host may write it."""

    value: str | None
    writable: bool


#: A key only the machine's own network namespace has: present, the host shares the machine's.
MACHINE_NET_KEY = "net.core.netdev_max_backlog"


def live_sysctl(host: testinfra.host.Host, keys: Iterable[str]) -> dict[str, Live]:
    """Every key's live value and writability, read in one call (a round trip per key and
    question took 10 s a host)."""
    script = ('for key; do path=/proc/sys/$(printf %s "$key" | tr . /); '
              'if [ -e "$path" ]; then w=0; [ -w "$path" ] && w=1; '
              'printf "%s|%s|%s\\n" "$key" "$w" "$(tr "\\n" " " < "$path")"; fi; done')
    out = host.run(shlex.join(["sh", "-c", script, "sh", *keys])).stdout
    found = {}
    for line in out.splitlines():
        key, writable, value = line.split("|", 2)
        found[key] = Live(value, writable == "1")
    return {key: found.get(key, Live(None, False)) for key in keys}


def held_by_container(key: str, setting: Setting, live: Mapping[str, Live]) -> tuple[bool, str]:
    """Whether a container can hold ``key`` itself, and if not why (mirrors the role's rule)."""
    prefixes = tuple(setting("os_tuning_sysctl_namespaced_prefixes"))
    if not key.startswith(prefixes):
        return False, "global to the machine"
    if key.startswith("net.") and live[MACHINE_NET_KEY].value is not None:
        return False, "in the host's network namespace"
    if live[key].value is None:
        return False, "not in the container's namespace"
    if not live[key].writable:
        return False, "read-only in the container"
    return True, ""


def test_sysctl_file_holds_every_setting(host: testinfra.host.Host, host_name: str,
                                         view: InventoryView, setting: Setting) -> None:
    """One file under /etc/sysctl.d holds every kernel setting, read back at boot."""
    path = setting("os_tuning_sysctl_file")
    assert path.startswith("/etc/sysctl.d/"), path
    assert host.file(path).is_file, f"{path} is missing"
    in_file = read_sysctl_file(host, path)
    expected = sysctl_settings(view, host_name)
    wrong = {k: (v, in_file.get(k)) for k, v in expected.items()
             if words(in_file.get(k, "")) != words(v)}
    assert not wrong, f"{path}: key: (expected, found): {wrong}"


def test_sysctl_live_values(host: testinfra.host.Host, host_name: str, view: InventoryView,
                            setting: Setting, container: str | None) -> None:
    """Every kernel setting is live; in a container, every one the container can hold."""
    expected = sysctl_settings(view, host_name)
    wrong, left = {}, []
    found = live_sysctl(host, sorted({*expected, MACHINE_NET_KEY}))
    for key, value in sorted(expected.items()):
        live = found[key].value
        if live is not None and words(live) == words(value):
            continue
        if container:
            held, why = held_by_container(key, setting, found)
            if not held:
                have = " ".join(words(live or "")) or "absent"
                left.append(f"{key} ({why}; wants {value}, is {have})")
                continue
        wrong[key] = (value, live and " ".join(words(live)))
    if left:
        print(f"{host_name} is a container ({container}); left to the host, checked in the "
              f"sysctl file only: {'; '.join(left)}")
    assert not wrong, f"live kernel values: key: (expected, live): {wrong}"


def test_limits_file_gives_service_users_open_files(host: testinfra.host.Host,
                                                    setting: Setting) -> None:
    """limits.d gives the service users the open-file limit in login sessions (FD-01, FD-02)."""
    path, limit = setting("os_tuning_limits_file"), int(setting("os_tuning_nofile_limit"))
    assert limit >= 100000, f"os_tuning_nofile_limit {limit} is below FD-01's 100000"
    lines = {tuple(line.split()) for line in host.file(path).content_string.splitlines()
             if line.strip() and not line.lstrip().startswith("#")}
    for user in setting("os_tuning_limits_users"):
        for kind in ("soft", "hard"):
            assert (user, kind, "nofile", str(limit)) in lines, \
                f"{path} lacks '{user} {kind} nofile {limit}'"


def process_limits(host: testinfra.host.Host, pid: int) -> tuple[int, int]:
    """Soft and hard open-file limits of a live process, from /proc/<pid>/limits (FD-03)."""
    for line in host.file(f"/proc/{pid}/limits").content_string.splitlines():
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return int(soft), int(hard)
    raise AssertionError(f"/proc/{pid}/limits has no 'Max open files' line")


def unit_of(host: testinfra.host.Host, pid: int) -> str | None:
    """The systemd service a process runs in, from its cgroup."""
    content = host.file(f"/proc/{pid}/cgroup").content_string
    found = re.findall(r"/([^/\s]+\.service)(?:/|$)", content, re.MULTILINE)
    return found[-1] if found else None


def test_service_processes_have_open_file_limit(host: testinfra.host.Host, host_name: str,
                                                setting: Setting) -> None:
    """Live service processes run with LimitNOFILE = os_tuning_nofile_limit (FD-01..03).

    Where the machine caps open files below that (a container's hard limit, 20000 in the lab),
    the unit must still ask for the full value and the process get the cap: min of both.
    """
    limit = int(setting("os_tuning_nofile_limit"))
    cap = process_limits(host, 1)[1]
    checked = []
    for user in setting("os_tuning_limits_users"):
        result = host.run("pgrep -u %s", user)
        if not host.user(user).exists or result.rc != 0:
            continue
        for pid in sorted(int(p) for p in result.stdout.split()):
            unit = unit_of(host, pid)
            assert unit, f"process {pid} of {user} runs outside a systemd service"
            configured = host.run("systemctl show --property=LimitNOFILE --value %s", unit)
            assert configured.rc == 0, configured.stderr
            assert int(configured.stdout.strip()) == limit, \
                f"{unit}: LimitNOFILE={configured.stdout.strip()}, expected {limit}"
            soft, hard = process_limits(host, pid)
            want = min(limit, cap)
            assert (soft, hard) == (want, want), \
                f"{unit} pid {pid}: open files soft {soft} hard {hard}, expected {want}"
            checked.append(f"{unit} pid {pid} ({user}): {soft}")
    if not checked:
        users = ", ".join(setting("os_tuning_limits_users"))
        pytest.skip(f"{host_name}: no live process of {users} (no service role ran here)")
    if cap < limit:
        print(f"{host_name}: open files capped at {cap} by the machine; units ask for {limit}; "
              f"{'; '.join(checked)}")


def fstab_entries(host: testinfra.host.Host) -> dict[str, list[str]]:
    """/etc/fstab by mount point: [source, fstype, options, ...]."""
    entries = {}
    for line in host.file("/etc/fstab").content_string.splitlines():
        fields = line.split()
        if len(fields) >= 4 and not fields[0].startswith("#"):
            entries[fields[1]] = fields
    return entries


def test_data_disks_are_xfs_noatime_by_uuid(host: testinfra.host.Host, host_name: str,
                                            view: InventoryView, host_vars: Mapping[str, Any],
                                            setting: Setting) -> None:
    """Each data disk: XFS, noatime live and in fstab, fstab by UUID, owned (DF-01..03)."""
    disks = data_disks(view, host_name)
    if not disks:
        pytest.skip(f"{host_name} declares no os_tuning_data_disks")
    proc_mounts = host.file("/proc/mounts").content_string.splitlines()
    mounts = {line.split()[1]: line.split() for line in proc_mounts}
    fstab = fstab_entries(host)
    entries = {str(e.get("mount", "")).rstrip("/"): e for e in host_vars.get("os_tuning_data_disks")
               or []}
    extra = setting("os_tuning_mount_options")
    for disk in disks:
        mount = disk.mount.rstrip("/")
        directory = host.file(mount)
        assert directory.is_directory, f"{mount} is missing"
        assert directory.user == disk.owner and directory.group == disk.owner, \
            f"{mount} belongs to {directory.user}:{directory.group}, not {disk.owner}"
        if disk.device is None:
            print(f"{host_name}: {mount} is a directory on an existing filesystem, not a disk")
            continue
        assert mount in mounts, f"{disk.device} is not mounted at {mount}"
        fstype, options = mounts[mount][2:4]
        assert fstype == "xfs", f"{mount} is {fstype}, not XFS (DF-01)"
        assert "noatime" in options.split(","), f"{mount} is mounted {options} (DF-02)"
        mounted_dev = host.run("stat --format %%d %s", mount).stdout.strip()
        device_rdev = host.run("stat --dereference --format %%r %s", disk.device).stdout.strip()
        assert mounted_dev == device_rdev, f"{mount} is not on {disk.device}"
        uuid = host.run("blkid -p -o value -s UUID %s", disk.device).stdout.strip()
        assert uuid, f"{disk.device} has no UUID"
        assert mount in fstab, f"/etc/fstab has no line for {mount}"
        source, fs_fstype, fs_options = fstab[mount][0], fstab[mount][2], fstab[mount][3]
        assert source == f"UUID={uuid}", f"/etc/fstab mounts {source} at {mount}, not UUID={uuid}"
        assert fs_fstype == "xfs", f"/etc/fstab: {mount} is {fs_fstype}"
        declared = ["noatime", *extra, *entries.get(mount, {}).get("mount_options", [])]
        missing = [o for o in declared if o not in fs_options.split(",")]
        assert not missing, f"/etc/fstab: {mount} lacks {missing} ({shlex.join(fstab[mount])})"
