"""pyinfra's data-disk deploy against the os_tuning role, on loop disks (~1.5 min).

One privileged container (no systemd: nothing here needs it, and systemd as PID 1 in a privileged
container would raise kernel values of the machine) gets three loop disks as /dev/kfdataN, as the
os_tuning scenario does: kfdata0 blank, kfdata1 already XFS with a known UUID, kfdata2 ext4 holding
a file. pyinfra formats the blank one, uses the XFS one as is, mounts both with noatime, records
them in /etc/fstab by UUID and gives them to the kafka user; the role, dry and then for real,
finds nothing to change, and pyinfra after it neither. Declaring the ext4 disk stops pyinfra before
any operation, its file intact. Needs root, podman, losetup and mkfs.xfs/mkfs.ext4 on the machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from .test_pyinfra_os_tuning import ENV, IMAGE, run

BIN = Path(sys.executable).parent
HOST = f"pyinfra-disks-{os.getpid()}"
ABSENT = f"{HOST}-absent"
XFS_UUID = "5b0c3f1e-2d4a-4c8e-9f61-0a7d2e9b4c13"
PRECIOUS = "kept.txt"
MOUNTS = {"kfdata0": "/var/lib/kafka/data0", "kfdata1": "/var/lib/kafka/data1",
          "kfdata2": "/var/lib/kafka/data2"}

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(tool) for tool in
                                 ("podman", "losetup", "mkfs.xfs", "mkfs.ext4")),
    reason="needs root, podman, losetup, mkfs.xfs and mkfs.ext4")


def sh(*argv: str) -> str:
    return subprocess.run(argv, env=ENV, capture_output=True, text=True, check=True).stdout


def inside(*argv: str) -> str:
    return sh("podman", "exec", HOST, *argv)


@pytest.fixture(scope="module")
def disks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    if subprocess.run(["podman", "image", "exists", IMAGE], env=ENV).returncode != 0:
        pytest.skip(f"{IMAGE} is missing: build it with `kafkaform lab image`")
    state = tmp_path_factory.mktemp("disks")
    loops: list[str] = []
    try:
        for name in MOUNTS:
            image = state / f"{name}.img"
            with image.open("wb") as handle:
                handle.truncate(320 * 1024 * 1024)  # sparse; XFS needs 300 MiB
            if name == "kfdata1":
                sh("mkfs.xfs", "-q", "-f", "-m", f"uuid={XFS_UUID}", str(image))
            if name == "kfdata2":
                content = state / "ext4-content"
                content.mkdir()
                (content / PRECIOUS).write_text("never formatted away\n")
                sh("mkfs.ext4", "-q", "-F", "-d", str(content), str(image))
            loops.append(sh("losetup", "--find", "--show", str(image)).strip())
        sh("podman", "run", "--detach", "--name", HOST, "--hostname", HOST, "--privileged",
           "--label", "owner=kafkaform-tests", IMAGE, "sleep", "infinity")
        for name, loop in zip(MOUNTS, loops, strict=True):
            major, minor = sh("losetup", "--noheadings", "--output=MAJ:MIN",
                              loop).strip().split(":")
            inside("mknod", "--mode=0600", f"/dev/{name}", "b", major, minor)
        yield
    finally:
        subprocess.run(["podman", "rm", "--force", "--time", "0", HOST], env=ENV,
                       capture_output=True, check=False)
        for loop in loops:
            subprocess.run(["losetup", "--detach", loop], capture_output=True, check=False)


def inventory(directory: Path, declared: list[str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "hosts.yml").write_text(yaml.safe_dump({"all": {
        "vars": {"ansible_connection": "kafkaform.platform.podman",
                 "ansible_python_interpreter": "/usr/bin/python3",
                 "kafkaform_allow_single_zookeeper": True,
                 "kafka_default_replication_factor": 2, "kafka_min_insync_replicas": 1,
                 # Only the disks: the kernel settings and limits have their own parity test.
                 "os_tuning_sysctl_enabled": False, "os_tuning_limits_enabled": False},
        "children": {
            "zookeeper": {"hosts": {HOST: {"zookeeper_id": 1}}},
            "kafka_broker": {"hosts": {HOST: {"kafka_broker_id": 1, "os_tuning_data_disks": [
                {"device": f"/dev/{name}", "mount": MOUNTS[name], "purpose": "kafka_log_dir"}
                for name in declared]},
                # Never reached (--limit): the cluster rules want two brokers.
                ABSENT: {"kafka_broker_id": 2}}}}}}))
    return directory


def pyinfra(source: Path, *options: str) -> dict[str, Any]:
    result = subprocess.run([str(BIN / "pyinfra"), "--yes", "--json", "--limit", HOST, *options,
                             f"@kafkaform/{source}", "kafkaform.deploys.os_tuning.disks"],
                            env=ENV, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    answer: dict[str, Any] = json.loads(result.stdout)
    return answer


def mounted() -> list[str]:
    return sorted(line for line in inside("findmnt", "--raw", "--noheadings", "--output",
                                          "TARGET,FSTYPE,OPTIONS").splitlines()
                  if line.startswith("/var/lib/kafka/"))


def test_pyinfra_prepares_the_disks_as_the_role_does(disks: None, tmp_path: Path) -> None:
    source = inventory(tmp_path / "two", ["kfdata0", "kfdata1"])
    assert pyinfra(source)["results"]["totals"]["success"] > 0
    live = mounted()
    assert [line.split()[:2] for line in live] == [
        ["/var/lib/kafka/data0", "xfs"], ["/var/lib/kafka/data1", "xfs"]], live
    assert all("noatime" in line.split()[2].split(",") for line in live), live
    # Used as is, never reformatted: the XFS disk keeps its UUID.
    assert inside("blkid", "-p", "-o", "value", "-s", "UUID", "/dev/kfdata1").strip() == XFS_UUID
    fstab = inside("cat", "/etc/fstab")
    assert f"UUID={XFS_UUID} /var/lib/kafka/data1 xfs noatime 0 0" in fstab.splitlines(), fstab
    owners = inside("stat", "-c", "%U %G %a", MOUNTS["kfdata0"], MOUNTS["kfdata1"])
    assert owners.splitlines() == ["kafka kafka 750"] * 2, owners

    # The role, dry and then for real, finds the disks as it leaves them; pyinfra then neither.
    for options in (("--check", "--diff"), ()):
        out = run(str(BIN / "ansible-playbook"), *options, "--limit", HOST, "-i", str(source),
                  "playbooks/os_tuning.yml").stdout
        recap = [line for line in out.splitlines() if "ok=" in line and HOST in line]
        assert len(recap) == 1 and "changed=0" in recap[0], out
    assert inside("cat", "/etc/fstab") == fstab and mounted() == live
    planned = pyinfra(source, "--dry")["plan"]
    assert [op["name"] for op in planned if op["hosts_with_change"]] == []

    # A disk holding a filesystem stops the run before any operation; its data stays.
    refused = subprocess.run(
        [str(BIN / "pyinfra"), "--yes", "--limit", HOST,
         f"@kafkaform/{inventory(tmp_path / 'three', list(MOUNTS))}",
         "kafkaform.deploys.os_tuning.disks"],
        env=ENV, capture_output=True, text=True, check=False)
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "/dev/kfdata2 holds an ext4" in said, said
    assert "Starting operation" not in said
    assert inside("blkid", "-p", "-o", "value", "-s", "TYPE", "/dev/kfdata2").strip() == "ext4"
    assert mounted() == live
