"""The os_tuning context and its decisions over what a host reports (the one host read: kernel
settings, stat, blkid, cmp, findmnt, mount point owners, /etc/fstab), with the answers in the shapes
the decisions take; the host read itself, run here, and the plan composing these decisions:
test_os_tuning_plan.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kafkaform import render
from kafkaform.contexts.os_tuning import os_tuning_context
from kafkaform.contexts.os_tuning_disks import device_problems, disk_plan
from kafkaform.contexts.os_tuning_mounts import disk_mounts, mount_problem
from kafkaform.contexts.os_tuning_sysctl import sysctl_plan
from kafkaform.defaults import role_default
from kafkaform.plans.files import template
from kafkaform.plans.os_tuning import parse_host

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "os_tuning"
HOST = "kf-kafka1"

D0 = {"device": "/dev/kfdata0", "mount": "/var/lib/kafka/data0", "purpose": "kafka_log_dir"}
D1 = {"device": "/dev/kfdata1", "mount": "/var/lib/kafka/data1/", "purpose": "kafka_log_dir",
      "mount_options": ["nodiratime"]}
DIRECTORY = {"device": None, "mount": "/var/lib/zookeeper/txnlog", "purpose": "zookeeper_txn_log"}

STAT = "/dev/kfdata0|block special file|7:0\n/dev/kfdata1|block special file|7:1"
XFS = ("DEVNAME=/dev/kfdata1\nUUID=0d1f5e0a-5c1e-4c57-9a39-6b2f0e7d4a11\nBLOCK_SIZE=512\n"
       "TYPE=xfs\nUSAGE=filesystem")
EXT4 = ("DEVNAME=/dev/kfdata1\nUUID=5b0e3a0e-7d2c-4b11-8d2e-3f4a5b6c7d8e\nBLOCK_SIZE=4096\n"
        "TYPE=ext4\nUSAGE=filesystem")
ROOT_MOUNTS = ("/ 0:52 overlay rw,relatime,lowerdir=/l,upperdir=/u,workdir=/w\n"
               "/proc 0:57 proc rw,nosuid,nodev,noexec,relatime")
MOUNTED = (ROOT_MOUNTS + "\n/var/lib/kafka/data0 7:0 xfs rw,noatime,attr2,inode64,noquota"
           "\n/var/lib/kafka/data1 7:1 xfs rw,noatime,nodiratime,attr2,inode64,noquota")


def context(*disks: dict[str, Any], **settings: Any) -> dict[str, Any]:
    return os_tuning_context(HOST, {"os_tuning_data_disks": list(disks), **settings})


def result(item: Any, rc: int, stdout: str = "") -> dict[str, Any]:
    """A registered loop result of ansible.builtin.command."""
    return {"item": item, "rc": rc, "stdout": stdout, "stdout_lines": stdout.splitlines(),
            "changed": False}


def probes(blkid: dict[str, tuple[int, str]], zero: dict[str, int]) -> tuple[list[Any], list[Any]]:
    """blkid results per device, and cmp results run only where blkid found nothing (rc 2)."""
    found = [result(device, rc, out) for device, (rc, out) in blkid.items()]
    zeros = [result(r, zero[r["item"]]) if r["rc"] == 2 else {"item": r, "skipped": True}
             for r in found]
    return found, zeros


def report(stat: str, blkid: list[Any], zero: list[Any], findmnt: str, occupied: str = "",
           fstab: str = "", paths: dict[str, dict[str, str]] | None = None) -> dict[str, Any]:
    """What host_report returns, from the answers given."""
    return {"stat": stat, "blkid": blkid, "zero": zero, "findmnt": findmnt, "occupied": occupied,
            "fstab": fstab, "paths": paths or {}}


def plan(ctx: dict[str, Any], blkid: dict[str, tuple[int, str]], zero: dict[str, int] | None = None,
         findmnt: str = ROOT_MOUNTS, stat: str = STAT, **answers: Any) -> dict[str, Any]:
    found, zeros = probes(blkid, zero or {})
    return disk_plan(ctx, report(stat, found, zeros, findmnt, **answers))


# --- context ---------------------------------------------------------------------------------


def test_overrides_merge_over_the_role_settings_in_key_order() -> None:
    ctx = context(os_tuning_sysctl_overrides={"vm.swappiness": 10, "net.ipv4.tcp_fin_timeout": 15})
    assert list(ctx["sysctl"]) == sorted(ctx["sysctl"])
    assert ctx["sysctl"]["vm.swappiness"] == "10"
    assert ctx["sysctl"]["net.ipv4.tcp_fin_timeout"] == "15"
    assert len(ctx["sysctl"]) == len(role_default("os_tuning_sysctl")) + 1


def test_templates_render_the_golden_files_from_the_context() -> None:
    keys = ("vm.swappiness", "vm.dirty_ratio", "vm.dirty_background_ratio", "net.ipv4.tcp_rmem",
            "net.core.rmem_max")
    sysctl = {k: role_default("os_tuning_sysctl")[k] for k in keys}
    ctx = context(os_tuning_sysctl=sysctl)
    for name, given in (("etc/sysctl.d/60-kafkaform.conf.j2", ctx),
                        ("etc/security/limits.d/60-kafkaform.conf.j2", context())):
        assert render.render(template("os_tuning", name), {"os_tuning": given}) == \
            (GOLDEN / name.removesuffix(".j2")).read_text()


def test_disks_are_normalised_with_owner_options_and_mount() -> None:
    ctx = context(D0, D1, DIRECTORY, os_tuning_mount_options="nofail")
    first, second, directory = ctx["disks"]
    assert (first["owner"], first["options"]) == ("kafka", ["noatime", "nofail"])
    assert first["directory"] is False
    assert second["mount"] == "/var/lib/kafka/data1"
    assert second["options"] == ["noatime", "nofail", "nodiratime"]
    assert (directory["owner"], directory["directory"]) == ("zookeeper", True)
    assert ctx["disk_devices"] == ["/dev/kfdata0", "/dev/kfdata1"]
    assert ctx["mount_points"] == ["/var/lib/kafka/data0", "/var/lib/kafka/data1",
                                   "/var/lib/zookeeper/txnlog"]
    assert ctx["disk_owners"] == ["kafka", "zookeeper"]
    assert ctx["directories"] == [directory]
    assert ctx["disk_input_error"] == ""


def test_force_format_reads_as_ansible_reads_a_bool() -> None:
    assert context({**D0, "force_format": "yes"})["disks"][0]["force_format"] is True
    assert context({**D0, "force_format": "false"})["disks"][0]["force_format"] is False


@pytest.mark.parametrize(("disks", "expected"), [
    ([{"mount": "/var/lib/kafka/data9", "purpose": "kafka_log_dir"}],
     "os_tuning_data_disks[0] (mount /var/lib/kafka/data9) has no device"),
    ([D0, {**D0, "mount": "/var/lib/kafka/data9"}],
     "device /dev/kfdata0 is declared 2 times: declare each device once"),
    ([D0, {**D1, "mount": "/var/lib/kafka/data0/"}],
     "mount point /var/lib/kafka/data0 is used by 2 entries"),
    ([{**D0, "mount": "/"}], 'mount must be an absolute path other than /, not "/"'),
    ([{**D0, "purpose": "logs"}],
     'purpose is "logs": use one of kafka_log_dir, zookeeper_txn_log'),
    ([{**D0, "device": 5}], "os_tuning_data_disks[0] device must be a path like /dev/sdb, not 5"),
    (["/dev/sdb"], "os_tuning_data_disks entry /dev/sdb is not a mapping"),
])
def test_declarations_that_cannot_work_are_named_with_the_host(disks: list[Any],
                                                               expected: str) -> None:
    error = context(*disks)["disk_input_error"]
    assert error.startswith(f"{HOST}: ") and expected in error


def test_a_declaration_that_is_not_a_list_is_an_error() -> None:
    ctx = os_tuning_context(HOST, {"os_tuning_data_disks": "/dev/sdb"})
    assert ctx["disk_input_error"] == \
        f"{HOST}: os_tuning_data_disks must be a list of {{device, mount, purpose}}"


# --- kernel settings -------------------------------------------------------------------------


def probe_output(ctx: dict[str, Any], container: str, netns: bool,
                 states: dict[str, str]) -> str:
    """What the host read prints about kernel settings: each key's state|value on its labelled
    line, then the container and, where visible, the machine's network namespace."""
    lines = [f"sysctl:{key} {states.get(key, 'writable|0')}" for key in ctx["sysctl"]]
    lines.append(f"container {container}")
    return "\n".join(lines + (["netns host"] if netns else []))


def decide(ctx: dict[str, Any], out: str) -> dict[str, Any]:
    """The kernel settings' decisions over what the host read printed."""
    read = parse_host(out)
    return sysctl_plan(ctx, read.sysctl, read.container, read.host_netns)


def test_a_host_sets_every_key_live_and_applies_only_the_differing_ones() -> None:
    ctx = context()
    out = probe_output(ctx, "none", True, {"vm.swappiness": "writable|1",
                                           "net.ipv4.tcp_rmem": "writable|4096\t65536  2048000"})
    decided = decide(ctx, out.replace("\t", " "))
    assert (decided["in_container"], decided["left"], decided["refusal"], decided["report"]) == \
        (False, [], "", "")
    applied = [x["key"] for x in decided["apply"]]
    assert "vm.swappiness" not in applied and "net.ipv4.tcp_rmem" not in applied  # word by word
    assert len(applied) == len(ctx["sysctl"]) - 2


def test_a_host_stops_on_a_key_it_does_not_have() -> None:
    ctx = context(os_tuning_sysctl_overrides={"net.ipv4.tcp_bogus": 1})
    decided = decide(ctx, probe_output(ctx, "none", True, {"net.ipv4.tcp_bogus": "absent|"}))
    assert decided["refusal"] == (
        f"{HOST}: kernel settings that cannot be set here: net.ipv4.tcp_bogus (is absent on this "
        "host). Fix: remove misspelt or unsupported keys from os_tuning_sysctl_overrides.")


def test_a_container_sets_only_its_own_namespaced_writable_keys() -> None:
    ctx = context()
    decided = decide(ctx, probe_output(ctx, "podman", False, {
        "net.core.rmem_max": "readonly|212992", "vm.swappiness": "writable|60",
        "net.ipv4.tcp_rmem": "writable|4096 131072 6291456"}))
    live = [x["key"] for x in decided["live"]]
    assert all(key.startswith("net.") for key in live) and "net.ipv4.tcp_rmem" in live
    whys = {x["key"]: x["why"] for x in decided["left"]}
    assert whys["vm.swappiness"] == "is global to the machine"
    assert whys["net.core.rmem_max"] == "is read-only in the container's namespace"
    assert decided["refusal"] == ""
    assert decided["report"].startswith(
        f"{HOST} is a container (podman): all 13 kernel settings are in "
        "/etc/sysctl.d/60-kafkaform.conf; set live here: net.core.netdev_max_backlog, ")
    assert "vm.swappiness is global to the machine (wants 1, is 60)" in decided["report"]
    assert decided["report"].endswith(".")


def test_a_container_in_the_host_network_namespace_leaves_net_keys_to_the_host() -> None:
    ctx = context(os_tuning_sysctl_overrides={"kernel.msgmax": 8192})
    decided = decide(ctx, probe_output(ctx, "docker", True, {"kernel.msgmax": "absent|"}))
    assert "set live here: none." in decided["report"]
    whys = {x["key"]: x["why"] for x in decided["left"]}
    assert whys["net.ipv4.tcp_rmem"] == "is in the host's network namespace"
    assert whys["kernel.msgmax"] == "is not in the container's namespace"
    assert "kernel.msgmax is not in the container's namespace (wants 8192, absent here)" in \
        decided["report"]


# --- data disks ------------------------------------------------------------------------------


def test_missing_devices_and_other_nodes_stop_the_run() -> None:
    ctx = context(D0, {**D1, "device": "/dev/null"}, {**D0, "device": "/dev/kfdata9",
                                                      "mount": "/srv/x"})
    assert device_problems(ctx, "/dev/kfdata0|block special file|7:0\n"
                                "/dev/null|character special file|1:3") == (
        f"{HOST}: /dev/null is a character special file, not a block device; /dev/kfdata9 does "
        "not exist. Fix: correct the device in os_tuning_data_disks, or use device: null for a "
        "directory.")
    assert device_problems(context(D0), "/dev/kfdata0|block special file|7:0") == ""


def test_first_run_formats_the_blank_disk_and_uses_the_xfs_one() -> None:
    decided = plan(context(D0, D1, DIRECTORY), {"/dev/kfdata0": (2, ""), "/dev/kfdata1": (0, XFS)},
                   {"/dev/kfdata0": 0})
    assert [d["action"] for d in decided["disks"]] == ["format", "use", "directory"]
    assert decided["refusal"] == ""
    assert [d["device"] for d in decided["formats"]] == ["/dev/kfdata0"]
    assert decided["formats"][0]["force"] is False
    assert [d["mount"] for d in decided["devices"]] == ["/var/lib/kafka/data0",
                                                          "/var/lib/kafka/data1"]
    used = decided["disks"][1]
    assert (used["uuid"], used["majmin"], used["mounted"]) == (
        "0d1f5e0a-5c1e-4c57-9a39-6b2f0e7d4a11", "7:1", False)

    new_uuid = [result(decided["formats"][0], 0, "1b4e28ba-2fa1-11d2-883f-0016d3cca427\n")]
    mounts = disk_mounts(decided, new_uuid)
    assert [(m["mount"], m["uuid"]) for m in mounts["fstab"]] == [
        ("/var/lib/kafka/data0", "1b4e28ba-2fa1-11d2-883f-0016d3cca427"),
        ("/var/lib/kafka/data1", "0d1f5e0a-5c1e-4c57-9a39-6b2f0e7d4a11")]
    assert [m["opts"] for m in mounts["unmounted"]] == ["noatime", "noatime,nodiratime"]
    assert (mounts["unformatted"], mounts["remount"]) == ([], [])


def test_check_mode_has_no_uuid_for_a_disk_it_did_not_format() -> None:
    decided = plan(context(D0), {"/dev/kfdata0": (2, "")}, {"/dev/kfdata0": 0})
    mounts = disk_mounts(decided, [result(decided["formats"][0], 2)])
    assert [m["device"] for m in mounts["unformatted"]] == ["/dev/kfdata0"]
    assert (mounts["fstab"], mounts["unmounted"]) == ([], [])


def test_a_second_run_changes_nothing() -> None:
    blkid = {"/dev/kfdata0": (0, XFS.replace("kfdata1", "kfdata0")), "/dev/kfdata1": (0, XFS)}
    decided = plan(context(D0, D1), blkid, findmnt=MOUNTED)
    assert [(d["action"], d["mounted"]) for d in decided["disks"]] == [("use", True),
                                                                        ("use", True)]
    mounts = disk_mounts(decided, [])
    assert (decided["formats"], mounts["unmounted"], mounts["remount"]) == ([], [], [])


def test_a_mounted_disk_missing_a_declared_option_is_remounted() -> None:
    blkid = {"/dev/kfdata0": (0, XFS.replace("kfdata1", "kfdata0")), "/dev/kfdata1": (0, XFS)}
    ctx = context(D0, D1, os_tuning_mount_options=["nofail", "x-systemd.device-timeout=5"])
    decided = plan(ctx, blkid, findmnt=MOUNTED.replace("noatime,nodiratime", "noatime"))
    remount = disk_mounts(decided, [])["remount"]
    assert [(m["mount"], m["opts"]) for m in remount] == [
        ("/var/lib/kafka/data1", "noatime,nofail,x-systemd.device-timeout=5,nodiratime")]


@pytest.mark.parametrize(("rc", "stdout", "zero", "holds"), [
    (0, EXT4, 0, "an ext4 filesystem (UUID 5b0e3a0e-7d2c-4b11-8d2e-3f4a5b6c7d8e)"),
    (0, "DEVNAME=/dev/kfdata1\nPTUUID=7c1d\nPTTYPE=gpt", 0, "a gpt partition table"),
    (0, "DEVNAME=/dev/kfdata1\nUUID=Xy\nVERSION=LVM2 001\nTYPE=LVM2_member\nUSAGE=raid", 0,
     "a LVM2_member raid (UUID Xy)"),
    (8, "", 0, "more than one signature (see wipefs --no-act /dev/kfdata1)"),
    (2, "", 1, "data without a known signature in its first 1048576 bytes"),
])
def test_a_device_holding_anything_but_xfs_is_refused(rc: int, stdout: str, zero: int,
                                                      holds: str) -> None:
    decided = plan(context(D1), {"/dev/kfdata1": (rc, stdout)}, {"/dev/kfdata1": zero})
    assert decided["disks"][0]["action"] == "refuse" and decided["formats"] == []
    assert decided["refusal"] == (
        f"{HOST}: /dev/kfdata1 holds {holds}, not XFS, so it is not formatted and not mounted at "
        "/var/lib/kafka/data1. Fix: declare a blank device, or set force_format: true on this "
        "device if you really mean to erase it.")


def test_force_format_erases_an_unmounted_device_but_never_a_mounted_one() -> None:
    ctx = context({**D1, "force_format": True})
    decided = plan(ctx, {"/dev/kfdata1": (0, EXT4)})
    assert (decided["refusal"], decided["formats"][0]["action"]) == ("", "format_force")
    assert decided["formats"][0]["label"] == (
        "/dev/kfdata1 (force_format: erasing an ext4 filesystem "
        "(UUID 5b0e3a0e-7d2c-4b11-8d2e-3f4a5b6c7d8e))")
    mounted = plan(ctx, {"/dev/kfdata1": (0, EXT4)},
                   findmnt=ROOT_MOUNTS + "\n/var/lib/kafka/data1 7:1 ext4 rw,relatime")
    assert mounted["refusal"] == (
        f"{HOST}: /dev/kfdata1 is mounted at /var/lib/kafka/data1 and holds an ext4 filesystem "
        "(UUID 5b0e3a0e-7d2c-4b11-8d2e-3f4a5b6c7d8e); force_format does not format a mounted "
        "device. Fix: unmount it first.")


def test_a_mount_point_or_device_in_use_elsewhere_is_refused() -> None:
    decided = plan(context({**D1, "mount": "/var/lib/kafka/data0"}), {"/dev/kfdata1": (0, XFS)},
                   findmnt=MOUNTED)
    assert decided["refusal"] == (
        f"{HOST}: mount point /var/lib/kafka/data0 is already used by another device (xfs, "
        "device number 7:0), not /dev/kfdata1. Fix: unmount it, or choose another mount point. | "
        f"{HOST}: /dev/kfdata1 is already mounted at /var/lib/kafka/data1. Fix: unmount it there "
        "first, or declare another device.")


def test_a_mount_point_holding_files_is_refused_and_only_where_nothing_is_mounted() -> None:
    ctx = context(D0, D1, {"device": None, "mount": "/var/lib/zookeeper/txnlog",
                           "purpose": "zookeeper_txn_log"})
    # data0 is mounted: its files are the disk's own; the plain directory is never a mount.
    only_data1 = MOUNTED.replace("\n/var/lib/kafka/data1 7:1 xfs rw,noatime,nodiratime,attr2,"
                                 "inode64,noquota", "")
    blkid = {"/dev/kfdata0": (0, XFS.replace("kfdata1", "kfdata0")), "/dev/kfdata1": (0, XFS)}
    found, zeros = probes(blkid, {})
    entries = "/var/lib/kafka/data1 /var/lib/kafka/data1/orders-0\n"
    decided = disk_plan(ctx, report(STAT, found, zeros, only_data1, entries))
    assert decided["refusal"] == (
        f"{HOST}: mount point /var/lib/kafka/data1 is a directory holding files (e.g. "
        "/var/lib/kafka/data1/orders-0); mounting /dev/kfdata1 over it would hide them. Fix: move "
        "them away first (mount the disk elsewhere, copy, then declare it here), or keep the "
        "directory with device: null.")
    assert disk_plan(ctx, report(STAT, found, zeros, only_data1))["refusal"] == ""


def test_verify_names_what_the_kernel_has_at_a_wrong_mount() -> None:
    blkid = {"/dev/kfdata0": (0, XFS.replace("kfdata1", "kfdata0")), "/dev/kfdata1": (0, XFS)}
    ctx = context(D0, D1)
    disk = plan(ctx, blkid, findmnt=MOUNTED)["devices"][0]
    assert mount_problem(ctx, disk, MOUNTED) == ""
    relatime = MOUNTED.replace("xfs rw,noatime,attr2", "xfs rw,relatime,attr2")
    assert mount_problem(ctx, disk, relatime) == (
        f"{HOST}: /var/lib/kafka/data0 should be /dev/kfdata0 (7:0), XFS, noatime; the kernel "
        "has /var/lib/kafka/data0 7:0 xfs rw,relatime,attr2,inode64,noquota")
    assert mount_problem(ctx, disk, ROOT_MOUNTS).endswith("the kernel has nothing mounted there")


def test_a_second_run_writes_no_fstab_line_and_gives_no_owner_it_has_already() -> None:
    blkid = {"/dev/kfdata0": (0, XFS.replace("kfdata1", "kfdata0").replace("0d1f", "9e2a")),
             "/dev/kfdata1": (0, XFS)}
    fstab = ("UUID=9e2a5e0a-5c1e-4c57-9a39-6b2f0e7d4a11 /var/lib/kafka/data0 xfs noatime 0 0\n"
             "UUID=0d1f5e0a-5c1e-4c57-9a39-6b2f0e7d4a11 /var/lib/kafka/data1 xfs noatime 0 0\n")
    kafka = {"owner": "kafka", "group": "kafka", "mode": "750", "kind": "directory"}
    paths = {"/var/lib/kafka/data0": kafka, "/var/lib/kafka/data1": {**kafka, "mode": "755"}}
    mounts = disk_mounts(plan(context(D0, D1), blkid, findmnt=MOUNTED, fstab=fstab,
                              paths=paths), [])
    # data1's line lacks its nodiratime; its mode differs
    assert [m["mount"] for m in mounts["fstab"]] == ["/var/lib/kafka/data1"]
    assert [d["mount"] for d in mounts["owners"]] == ["/var/lib/kafka/data1"]
    # A second line for the same mount point, even a wrong one, is for ansible.posix.mount.
    twice = fstab + "/dev/kfdata0 /var/lib/kafka/data0 xfs defaults 0 0\n"
    assert "/var/lib/kafka/data0" in [m["mount"] for m in disk_mounts(
        plan(context(D0, D1), blkid, findmnt=MOUNTED, fstab=twice, paths=paths), [])["fstab"]]


def test_a_disk_mounted_in_this_run_is_always_given_to_its_owner() -> None:
    """Its mount point was read before the mount: the new filesystem's root is root's."""
    kafka = {"owner": "kafka", "group": "kafka", "mode": "750", "kind": "directory"}
    decided = plan(context(D0, DIRECTORY), {"/dev/kfdata0": (2, "")}, {"/dev/kfdata0": 0},
                   paths={"/var/lib/kafka/data0": kafka,
                          "/var/lib/zookeeper/txnlog": {**kafka, "owner": "zookeeper",
                                                        "group": "zookeeper"}})
    owners = disk_mounts(decided, [result(decided["formats"][0], 0, "1b4e28ba\n")])["owners"]
    assert [d["mount"] for d in owners] == ["/var/lib/kafka/data0"]
