"""The os_tuning role's plan: the host read's command and parser (run here too), and each decision
the role and the pyinfra deploy take from it, refusals included (kafkaform.plans.os_tuning)."""

from __future__ import annotations

import base64
import json
import os
import re
import stat
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kafkaform.contexts.os_tuning import effective_sysctl, os_tuning_context
from kafkaform.contexts.os_tuning_disks import device_problems
from kafkaform.plans.files import template
from kafkaform.plans.os_tuning import (
    Device,
    MountPoint,
    OsTuningHost,
    disk_report,
    host_read,
    os_tuning_plan,
    parse_host,
    planned_mounts,
    read_problem,
)
from tests.unit.test_os_tuning_context import (
    D0,
    D1,
    DIRECTORY,
    EXT4,
    HOST,
    MOUNTED,
    ROOT_MOUNTS,
    XFS,
)

XFS0 = XFS.replace("kfdata1", "kfdata0").replace("0d1f", "9e2a")
UUID0, UUID1 = "9e2a5e0a-5c1e-4c57-9a39-6b2f0e7d4a11", "0d1f5e0a-5c1e-4c57-9a39-6b2f0e7d4a11"
BLANK0 = Device(kind="block special file", majmin="7:0", blkid_rc=2, zero_rc=0)
XFS_0 = Device(kind="block special file", majmin="7:0", blkid_rc=0, blkid=XFS0)
XFS_1 = Device(kind="block special file", majmin="7:1", blkid_rc=0, blkid=XFS)
KAFKA = MountPoint(owner="kafka", group="kafka", mode="750", kind="directory")
ZOOKEEPER = replace(KAFKA, owner="zookeeper", group="zookeeper")
FSTAB = (f"UUID={UUID0} /var/lib/kafka/data0 xfs noatime 0 0\n"
         f"UUID={UUID1} /var/lib/kafka/data1 xfs noatime,nodiratime 0 0\n")


def settings(*disks: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"os_tuning_data_disks": list(disks), **more}


def host(given: dict[str, Any], **fields: Any) -> OsTuningHost:
    """A machine (no container) whose kernel already holds every wanted value, and whatever
    ``fields`` say of its disks."""
    live = {key: ("writable", value) for key, value in effective_sysctl(given).items()}
    return OsTuningHost(**{"sysctl": live, "host_netns": True, "findmnt_rc": 0,
                           "mounts": ROOT_MOUNTS, **fields})


def plan(given: dict[str, Any], read: OsTuningHost | None = None) -> Any:
    return os_tuning_plan(HOST, given, host(given) if read is None else read)


def labels(argv: list[str]) -> list[str]:
    """The labels the host read's script prints, in its order."""
    return re.findall(r"printf '%s %s\\n' (\S+) ", argv[2])


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


# --- the host read ---------------------------------------------------------------------------


def test_the_host_read_asks_only_what_the_enabled_parts_decide_from() -> None:
    given = settings(D0, DIRECTORY)
    keys = list(effective_sysctl(given))
    disks = ["node:/dev/kfdata0", "blkid:/dev/kfdata0", "findmnt", "path:/var/lib/kafka/data0",
             "entry:/var/lib/kafka/data0", "failed:/var/lib/kafka/data0",
             "path:/var/lib/zookeeper/txnlog", "entry:/var/lib/zookeeper/txnlog",
             "failed:/var/lib/zookeeper/txnlog", "user:kafka", "user:zookeeper", "fstab"]
    kernel = [*(f"sysctl:{key}" for key in keys), "container", "netns"]
    # The state of each file the enabled parts write, for install_files' host_state.
    sysctl_file, limits_file = ("state:/etc/sysctl.d/60-kafkaform.conf",
                                "state:/etc/security/limits.d/60-kafkaform.conf")
    assert labels(host_read(given)) == [*kernel, *disks, sysctl_file, limits_file]
    assert labels(host_read({**given, "os_tuning_sysctl_enabled": False})) == [*disks,
                                                                              limits_file]
    assert labels(host_read({**given, "os_tuning_disks_enabled": "no"})) == [*kernel,
                                                                            sysctl_file,
                                                                            limits_file]
    assert host_read({**given, "os_tuning_sysctl_enabled": False, "os_tuning_limits_enabled": 0,
                      "os_tuning_disks_enabled": False}) == ["sh", "-c", ""]


def test_the_host_read_runs_and_parses_on_this_machine(tmp_path: Path) -> None:
    """Run by sh here: a character device and a missing path as devices, a directory holding a
    file (its name with a space and a glob character) and / as mount points, an existing and a
    missing user, a kernel key this machine has and one no machine has."""
    occupied = tmp_path / "data 0*"
    occupied.mkdir()
    (occupied / "orders-0").mkdir()
    given = settings({"device": "/dev/null", "mount": str(occupied), "purpose": "kafka_log_dir"},
                     {"device": "/dev/kfdata9", "mount": "/", "purpose": "zookeeper_txn_log"},
                     os_tuning_purpose_owners={"kafka_log_dir": "root",
                                               "zookeeper_txn_log": "kafkaform-no-such-user"},
                     os_tuning_sysctl={"kernel.pid_max": 4194304, "vm.kafkaform_no_such_key": 1})
    ran = subprocess.run(host_read(given), capture_output=True, text=True, check=True)
    got = parse_host(ran.stdout)
    assert read_problem(HOST, got) == ""
    assert got.sysctl["vm.kafkaform_no_such_key"] == ("absent", "")
    state, value = got.sysctl["kernel.pid_max"]
    assert state in ("writable", "readonly") and value == Path(
        "/proc/sys/kernel/pid_max").read_text().strip()
    assert got.container != ""
    assert got.devices == {"/dev/null": Device(kind="character special file", majmin="1:3"),
                           "/dev/kfdata9": Device()}  # not block devices: no blkid
    assert got.findmnt_rc == 0 and "/" in [m.split(" ", 1)[0] for m in got.mounts.splitlines()]
    assert got.mount_points[str(occupied)] == MountPoint(
        owner="root", group="root", mode=f"{occupied.stat().st_mode & 0o7777:o}",
        kind="directory", first_entry=f"{occupied}/orders-0")
    assert got.mount_points["/"].kind == "directory"
    assert got.users == frozenset({"root"})
    fstab = Path("/etc/fstab")
    assert got.fstab == (fstab.read_text() if fstab.exists() else "")
    report = disk_report(got)
    # / is mounted: its entries are its filesystem's own; the directory is nothing's mount yet.
    assert report["occupied"] == f"{occupied} {occupied}/orders-0"
    assert device_problems(os_tuning_context(HOST, given), report["stat"]).startswith(
        f"{HOST}: /dev/null is a character special file, not a block device; /dev/kfdata9 does "
        "not exist.")
    refused = plan(given, got)
    assert refused.disks_refusal == (  # the declaration's own errors first, as the role's
        f'{HOST}: os_tuning_data_disks[1] mount must be an absolute path other than /, not "/"')
    if got.container == "none":
        assert refused.sysctl_refusal.startswith(
            f"{HOST}: kernel settings that cannot be set here: vm.kafkaform_no_such_key")
    else:  # a container leaves what it cannot set to its host, and says so
        assert refused.sysctl_refusal == ""
        assert "vm.kafkaform_no_such_key is global to the machine (wants 1, absent here)" in \
            refused.sysctl_report


def test_the_read_of_a_block_device_reports_blkid_and_the_blank_check(
        tmp_path: Path) -> None:
    """The block device branch, run here with stand-ins for blkid and cmp on a device node that
    no driver answers (nothing opens it): blkid's exit code, its fields, and the blank check only
    where blkid found nothing."""
    node = tmp_path / "kfdata0"
    try:
        os.mknod(node, stat.S_IFBLK | 0o600, os.makedev(7, 255))
    except PermissionError:
        pytest.skip("making a device node needs root")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "blkid").write_text('#!/bin/sh\nprintf "$FAKE_BLKID"\nexit "$FAKE_BLKID_RC"\n')
    (bin_dir / "cmp").write_text('#!/bin/sh\necho "$@" > "$FAKE_CMP_ARGS"\nexit "$FAKE_CMP_RC"\n')
    for fake in bin_dir.iterdir():
        fake.chmod(0o755)
    given = settings({"device": str(node), "mount": "/var/lib/kafka/data0",
                      "purpose": "kafka_log_dir"}, os_tuning_sysctl_enabled=False)

    def read(blkid: str, rc: int, cmp_rc: int) -> Device:
        env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_BLKID": blkid,
               "FAKE_BLKID_RC": str(rc), "FAKE_CMP_RC": str(cmp_rc),
               "FAKE_CMP_ARGS": str(tmp_path / "cmp-args")}
        ran = subprocess.run(host_read(given), capture_output=True, text=True, check=True,
                             env=env)
        return parse_host(ran.stdout).devices[str(node)]

    xfs = read("TYPE=xfs\\nUUID=abc\\n", 0, 0)
    assert (xfs.kind, xfs.majmin, xfs.blkid_rc, xfs.zero_rc) == ("block special file", "7:255",
                                                                 0, None)
    assert xfs.blkid == "TYPE=xfs\nUUID=abc"
    assert not (tmp_path / "cmp-args").exists()  # blkid found a signature: no blank check
    assert read("", 2, 1) == replace(xfs, blkid_rc=2, blkid="", zero_rc=1)
    assert (tmp_path / "cmp-args").read_text().split() == [
        "--silent", "--bytes", "1048576", "--", str(node), "/dev/zero"]
    assert read("", 4, 0).zero_rc is None


def test_each_answer_is_read_by_its_label() -> None:
    out = "\n".join([
        "fstab " + b64("# static\n"),
        "user:kafka yes", "user:zookeeper ",
        f"entry:/srv/data%200 {b64('/srv/data 0/x')}",
        "path:/srv/data%200 kafka|kafka|750|directory",
        f"findmnt 0 {b64(ROOT_MOUNTS)}",
        f"blkid:/dev/kfdata1 0 - {b64(XFS)}", "node:/dev/kfdata1 block special file|7:1",
        "blkid:/dev/kfdata0 2 0", "node:/dev/kfdata0 block special file|7:0",
        "netns host", "container podman", "sysctl:vm.swappiness writable|60",
        "sysctl:net.core.rmem_max readonly|212992", "sysctl:kernel.msgmax absent",
        "sysctl:kernel.core_pattern writable||/usr/lib/systemd/systemd-coredump %P",
    ])
    got = parse_host(out)
    assert got == OsTuningHost(
        sysctl={"vm.swappiness": ("writable", "60"), "net.core.rmem_max": ("readonly", "212992"),
                "kernel.msgmax": ("absent", ""),
                "kernel.core_pattern": ("writable", "|/usr/lib/systemd/systemd-coredump %P")},
        container="podman", host_netns=True,
        devices={"/dev/kfdata1": XFS_1, "/dev/kfdata0": BLANK0},
        findmnt_rc=0, mounts=ROOT_MOUNTS,
        mount_points={"/srv/data 0": replace(KAFKA, first_entry="/srv/data 0/x")},
        users=frozenset({"kafka"}), fstab="# static\n")
    assert parse_host("") == OsTuningHost()


def test_a_failed_command_in_the_read_stops_with_its_name() -> None:
    read = parse_host("blkid:/dev/kfdata0 4 -\nnode:/dev/kfdata0 block special file|7:0\n"
                      "findmnt 1 ")
    expected = (f"{HOST}: reading the host failed: blkid /dev/kfdata0 exited with 4; findmnt "
                "exited with 1. Fix: run the command by hand on the host to see why")
    assert read_problem(HOST, read) == expected
    refused = plan(settings(D0), read)
    assert refused.read_problem == expected
    # Nothing else is decided from a read that failed.
    assert (refused.formats, refused.disks_refusal, refused.sysctl_apply) == ([], "", [])


def test_blkid_and_cmp_answers_reach_the_disk_plan() -> None:
    out = "\n".join([
        "node:/dev/kfdata0 block special file|7:0", "blkid:/dev/kfdata0 2 0",
        "node:/dev/kfdata1 block special file|7:1", f"blkid:/dev/kfdata1 0 - {b64(XFS)}",
        f"findmnt 0 {b64(ROOT_MOUNTS)}", "user:kafka yes", f"fstab {b64('# static')}"])
    given = settings(D0, D1, os_tuning_sysctl_enabled=False)
    decided = plan(given, parse_host(out))
    assert (decided.disks_refusal, decided.read_problem) == ("", "")
    assert [d["device"] for d in decided.formats] == ["/dev/kfdata0"]
    assert [(d["device"], d["formatted"]) for d in decided.mount] == [("/dev/kfdata0", True),
                                                                      ("/dev/kfdata1", False)]


# --- the plan's decisions --------------------------------------------------------------------


def test_a_first_run_formats_the_blank_disk_uses_the_xfs_one_and_creates_the_owners() -> None:
    given = settings(D0, D1, DIRECTORY)
    p = plan(given, host(given, devices={"/dev/kfdata0": BLANK0, "/dev/kfdata1": XFS_1}))
    assert (p.read_problem, p.disks_refusal, p.sysctl_refusal) == ("", "", "")
    assert p.create_owners == ["kafka", "zookeeper"]
    assert [(d["device"], d["force"], d["opts"], d["uuid_argv"]) for d in p.formats] == [
        ("/dev/kfdata0", False, "noatime",
         ["blkid", "-p", "-o", "value", "-s", "UUID", "/dev/kfdata0"])]
    assert [(d["mount"], d["uuid"], d["formatted"]) for d in p.fstab] == [
        ("/var/lib/kafka/data0", "", True), ("/var/lib/kafka/data1", UUID1, False)]
    assert [d["mount"] for d in p.mount] == [d["mount"] for d in p.fstab]
    assert p.remount == []
    assert [d["mount"] for d in p.own] == ["/var/lib/kafka/data0", "/var/lib/kafka/data1",
                                           "/var/lib/zookeeper/txnlog"]
    assert p.own_in_check_mode == []  # their owners do not exist yet
    assert [d["mount"] for d in p.own_in_place] == ["/var/lib/zookeeper/txnlog"]
    assert [d["warning"] for d in p.directories] == [
        "/var/lib/zookeeper/txnlog (zookeeper_txn_log) is a directory on an existing "
        "filesystem, not a dedicated XFS disk mounted with noatime (DF-01, DF-02, DF-03). Fine "
        "for a test host; declare a device for production."]
    assert [d["mount"] for d in p.verify] == ["/var/lib/kafka/data0", "/var/lib/kafka/data1"]
    assert p.mounts_change is True
    json.dumps(p.as_vars())  # plain data, as set_fact keeps it


def test_a_second_run_changes_nothing() -> None:
    given = settings(D0, D1, DIRECTORY)
    read = host(given, devices={"/dev/kfdata0": XFS_0, "/dev/kfdata1": XFS_1}, mounts=MOUNTED,
                fstab=FSTAB, users=frozenset({"kafka", "zookeeper"}),
                mount_points={"/var/lib/kafka/data0": KAFKA, "/var/lib/kafka/data1": KAFKA,
                              "/var/lib/zookeeper/txnlog": ZOOKEEPER})
    p = plan(given, read)
    assert (p.disks_refusal, p.sysctl_refusal, p.sysctl_apply, p.create_owners) == ("", "", [],
                                                                                    [])
    assert (p.formats, p.fstab, p.mount, p.remount, p.own) == ([], [], [], [], [])
    assert p.mounts_change is False
    assert [d["mount"] for d in p.verify] == ["/var/lib/kafka/data0", "/var/lib/kafka/data1"]
    assert p.findmnt == MOUNTED  # verify checks the read's mounts: nothing was mounted


def test_only_the_kernel_settings_that_differ_are_applied_live() -> None:
    given = settings(os_tuning_sysctl_overrides={"vm.swappiness": 10})
    read = host(given)
    differing = {**read.sysctl, "vm.swappiness": ("writable", "60"),
                 "net.ipv4.tcp_rmem": ("writable", "4096  65536 2048000")}
    p = plan(given, replace(read, sysctl=differing))
    assert p.sysctl_apply == [{"key": "vm.swappiness", "value": "10"}]
    assert (p.in_container, p.sysctl_report) == (False, "")


def test_a_container_sets_only_its_own_keys_live_and_reports_the_rest() -> None:
    given = settings()
    read = host(given)
    p = plan(given, replace(read, container="podman", host_netns=False, sysctl={
        **read.sysctl, "vm.swappiness": ("writable", "60"), "net.core.somaxconn": ("writable", "1"),
        "net.ipv4.tcp_rmem": ("writable", "4096 131072 6291456")}))
    assert p.sysctl_apply == [{"key": "net.ipv4.tcp_rmem", "value": "4096 65536 2048000"}]
    assert p.in_container and p.sysctl_refusal == ""
    assert "vm.swappiness is global to the machine (wants 1, is 60)" in p.sysctl_report


@pytest.mark.parametrize(("given", "fields", "refusal", "expected"), [
    (settings({"mount": "/var/lib/kafka/data9", "purpose": "kafka_log_dir"}), {},
     "disks_refusal", f"{HOST}: os_tuning_data_disks[0] (mount /var/lib/kafka/data9) has no "
     "device: set device to the block device, or device: null for a directory on an existing "
     "filesystem"),
    (settings(D0), {"devices": {"/dev/kfdata0": Device()}}, "disks_refusal",
     f"{HOST}: /dev/kfdata0 does not exist. Fix: correct the device in os_tuning_data_disks, or "
     "use device: null for a directory."),
    (settings(D1), {"devices": {"/dev/kfdata1": replace(XFS_1, blkid=EXT4)}}, "disks_refusal",
     f"{HOST}: /dev/kfdata1 holds an ext4 filesystem (UUID 5b0e3a0e-7d2c-4b11-8d2e-3f4a5b6c7d8e), "
     "not XFS, so it is not formatted and not mounted at /var/lib/kafka/data1. Fix: declare a "
     "blank device, or set force_format: true on this device if you really mean to erase it."),
    (settings(D1), {"devices": {"/dev/kfdata1": XFS_1},
                    "mount_points": {"/var/lib/kafka/data1": replace(
                        KAFKA, first_entry="/var/lib/kafka/data1/orders-0")}}, "disks_refusal",
     f"{HOST}: mount point /var/lib/kafka/data1 is a directory holding files (e.g. "
     "/var/lib/kafka/data1/orders-0); mounting /dev/kfdata1 over it would hide them."),
    (settings(os_tuning_sysctl_overrides={"net.ipv4.tcp_bogus": 1}),
     {"sysctl": {"net.ipv4.tcp_bogus": ("absent", "")}}, "sysctl_refusal",
     f"{HOST}: kernel settings that cannot be set here: net.ipv4.tcp_bogus (is absent on this "
     "host). Fix: remove misspelt or unsupported keys from os_tuning_sysctl_overrides."),
])
def test_each_refusal_names_the_host_the_setting_and_the_fix(
        given: dict[str, Any], fields: dict[str, Any], refusal: str, expected: str) -> None:
    read = host(given)
    p = plan(given, replace(read, **{**fields, "sysctl": {**read.sysctl,
                                                          **fields.get("sysctl", {})}}))
    assert getattr(p, refusal).startswith(expected), getattr(p, refusal)
    assert (p.formats, p.fstab, p.mount, p.own) == ([], [], [], [])


@pytest.mark.parametrize(("device", "holds"), [
    (replace(XFS_1, blkid=EXT4), "an ext4 filesystem"),
    (replace(XFS_1, blkid="PTUUID=7c1d\nPTTYPE=gpt"), "a gpt partition table"),
    (replace(XFS_1, blkid="UUID=Xy\nTYPE=LVM2_member\nUSAGE=raid"), "a LVM2_member raid"),
    (replace(XFS_1, blkid_rc=8, blkid=""), "more than one signature"),
    (replace(XFS_1, blkid_rc=2, blkid="", zero_rc=1), "data without a known signature"),
])
def test_a_disk_holding_anything_but_xfs_is_never_formatted(device: Device, holds: str) -> None:
    given = settings(D1)
    p = plan(given, host(given, devices={"/dev/kfdata1": device}))
    assert p.formats == [] and f"/dev/kfdata1 holds {holds}" in p.disks_refusal
    forced = settings({**D1, "force_format": True})
    erased = plan(forced, host(forced, devices={"/dev/kfdata1": device}))
    assert erased.disks_refusal == "" and [d["force"] for d in erased.formats] == [True]
    mounted = plan(forced, host(forced, devices={"/dev/kfdata1": device},
                                mounts=ROOT_MOUNTS + "\n/var/lib/kafka/data1 7:1 ext4 rw"))
    assert mounted.formats == [] and "force_format does not format a mounted device" in \
        mounted.disks_refusal


def test_switched_off_parts_plan_nothing_and_refuse_nothing() -> None:
    given = settings({"mount": "/x"}, os_tuning_sysctl_enabled=False,
                     os_tuning_limits_enabled=False, os_tuning_disks_enabled=False,
                     os_tuning_sysctl_overrides={"net.ipv4.tcp_bogus": 1})
    p = plan(given, OsTuningHost())
    assert (p.sysctl_enabled, p.limits_enabled, p.disks_enabled) == (False, False, False)
    assert (p.disks_refusal, p.sysctl_refusal, p.read_problem) == ("", "", "")
    assert (p.files, p.sysctl_files, p.limits_files, p.create_owners) == ([], [], [], [])


def test_the_files_are_the_kernel_settings_and_the_limits_root_s_and_readable() -> None:
    p = plan(settings())
    assert [(f.dest, f.template, f.owner, f.group, f.mode, f.restarts) for f in p.files] == [
        ("/etc/sysctl.d/60-kafkaform.conf",
         template("os_tuning", "etc/sysctl.d/60-kafkaform.conf.j2"), "root", "root", "0644",
         False),
        ("/etc/security/limits.d/60-kafkaform.conf",
         template("os_tuning", "etc/security/limits.d/60-kafkaform.conf.j2"), "root", "root",
         "0644", False)]
    assert p.files == [*p.sysctl_files, *p.limits_files]
    assert [f["dest"] for f in p.as_vars()["limits_files"]] == [p.limits_files[0].dest]


def test_a_disk_mounted_without_a_declared_option_is_remounted_and_verified_again() -> None:
    given = settings(D0, D1, os_tuning_mount_options=["nosuid"])
    read = host(given, devices={"/dev/kfdata0": XFS_0, "/dev/kfdata1": XFS_1}, mounts=MOUNTED,
                users=frozenset({"kafka"}),
                mount_points={"/var/lib/kafka/data0": KAFKA, "/var/lib/kafka/data1": KAFKA})
    p = plan(given, read)
    assert [(d["mount"], d["opts"]) for d in p.remount] == [
        ("/var/lib/kafka/data0", "noatime,nosuid"),
        ("/var/lib/kafka/data1", "noatime,nosuid,nodiratime")]
    assert p.mounts_change and p.mount == []
    assert [d["mount"] for d in p.fstab] == ["/var/lib/kafka/data0", "/var/lib/kafka/data1"]


# --- the UUIDs of the disks formatted in this run --------------------------------------------


def test_the_disks_formatted_now_get_their_uuid_in_declared_order() -> None:
    """Nested mount points mount outer first, as declared, formatted or not."""
    outer = {"device": "/dev/kfdata0", "mount": "/srv/kafka", "purpose": "kafka_log_dir"}
    inner = {**D1, "mount": "/srv/kafka/data1"}
    given = settings(outer, inner)
    p = plan(given, host(given, devices={"/dev/kfdata0": BLANK0, "/dev/kfdata1": XFS_1})).as_vars()
    formatted = [{"item": p["formats"][0], "rc": 0, "stdout": "1b4e28ba\n"}]
    mounts = planned_mounts(p, formatted)
    assert [(d["mount"], d["uuid"]) for d in mounts["mount"]] == [
        ("/srv/kafka", "1b4e28ba"), ("/srv/kafka/data1", UUID1)]
    assert [d["mount"] for d in mounts["fstab"]] == ["/srv/kafka", "/srv/kafka/data1"]
    assert mounts["unformatted"] == []
    # Check mode formatted nothing: no UUID, so neither recorded nor mounted yet.
    dry = planned_mounts(p, [{"item": p["formats"][0], "rc": 2, "stdout": ""}])
    assert [d["device"] for d in dry["unformatted"]] == ["/dev/kfdata0"]
    assert [d["mount"] for d in dry["mount"]] == ["/srv/kafka/data1"]
    # The deploy formats, records and mounts those in one step: it asks for the others only.
    assert [d["mount"] for d in planned_mounts(p, [])["fstab"]] == ["/srv/kafka/data1"]


# --- a failed disk (OP-13) -------------------------------------------------------------------

def test_the_read_finds_a_mount_whose_filesystem_fails_with_io_errors(
        tmp_path: Path, failing_ls: Callable[[Path], dict[str, str]]) -> None:
    """The read's shell run here, its ``ls`` failing on the first mount point as a shut-down XFS
    does (EIO) and listing the others: only that one is failed."""
    failing, fine = tmp_path / "data0", tmp_path / "data1"
    fine.mkdir()
    given = settings({"device": "/dev/kfdata0", "mount": str(failing), "purpose": "kafka_log_dir"},
                     {"device": "/dev/kfdata1", "mount": str(fine), "purpose": "kafka_log_dir"},
                     os_tuning_sysctl_enabled=False)
    ran = subprocess.run(host_read(given), capture_output=True, text=True, check=True,
                         env=failing_ls(failing))
    assert parse_host(ran.stdout).failed_mounts == frozenset({str(failing)})
    ran = subprocess.run(host_read(given), capture_output=True, text=True, check=True)
    assert parse_host(ran.stdout).failed_mounts == frozenset()


def test_a_failed_data_disk_stops_the_run_naming_it_and_the_steps() -> None:
    given = settings(D0, D1, DIRECTORY)
    read = host(given, devices={"/dev/kfdata0": XFS_0, "/dev/kfdata1": XFS_1}, mounts=MOUNTED,
                fstab=FSTAB, users=frozenset({"kafka", "zookeeper"}),
                mount_points={"/var/lib/kafka/data0": KAFKA, "/var/lib/kafka/data1": MountPoint(),
                              "/var/lib/zookeeper/txnlog": ZOOKEEPER},
                failed_mounts=frozenset({"/var/lib/kafka/data1"}))
    p = plan(given, read)
    assert p.disks_refusal.startswith(
        f"{HOST}: /var/lib/kafka/data1 (/dev/kfdata1) fails with I/O errors: a failed data disk. "
        "Kafka took the log directory on it offline at the first error")
    for said in ("(OP-13)", f"systemctl stop kafka on {HOST}", "run site.yml again",
                 "--election-type unclean", "Nothing was changed on the node."):
        assert said in p.disks_refusal
    # Nothing on any disk is planned: not a format, a mount or an owner; every host stops.
    assert (p.formats, p.mount, p.own, p.fstab, p.disks_failed) == ([], [], [], [], True)
    # Another purpose's disk: the same stop, without Kafka's steps.
    other = replace(read, failed_mounts=frozenset({"/var/lib/zookeeper/txnlog"}))
    assert plan(given, other).disks_refusal == (
        f"{HOST}: /var/lib/zookeeper/txnlog (zookeeper_txn_log) fails with I/O errors: a "
        "failed data disk (OP-13). Fix: stop the service that uses it, replace the disk with an "
        "empty one under the same device name and run again. Nothing was changed on the host.")
    healthy = plan(given, replace(read, failed_mounts=frozenset()))
    assert (healthy.disks_refusal, healthy.disks_failed) == ("", False)
