"""`kafkaform lab up/down` for real, on a reduced topology (needs root and podman; ~30 s).

Uses its own network, container names (kft-*) and cache directory, so it can run next to a real
lab and to molecule scenarios without touching them. Run: `pytest tests/integration`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkaform import lab, lab_state

NETWORK = "kafkaform-labtest"
MIRROR = "kft-mirror"
HOSTS = ("kft-zk1", "kft-kafka1")

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("podman") is None, reason="needs root and podman"
)

INVENTORY = textwrap.dedent(
    """\
    all:
      vars:
        ansible_connection: kafkaform.platform.podman
        ansible_python_interpreter: /usr/bin/python3
      children:
        zookeeper:
          vars:
            os_tuning_data_disks: [{device: /dev/kfdata0, mount: /var/lib/zookeeper/txnlog}]
          hosts:
            kft-zk1: {rack: lab-a}
        kafka_broker:
          vars:
            os_tuning_data_disks:
              - {device: /dev/kfdata0, mount: /var/lib/kafka/data0}
              - {device: /dev/kfdata1, mount: /var/lib/kafka/data1}
          hosts:
            kft-kafka1: {rack: lab-b}
    """
)


def run(*args: str, cache: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a command with the lab's environment (own cache, the lab's containers.conf)."""
    env = {
        **os.environ,
        "KAFKAFORM_CACHE": str(cache),
        "CONTAINERS_CONF": str(lab.repo_root() / "lab" / "containers.conf"),
        "ANSIBLE_CONFIG": str(lab.repo_root() / "ansible.cfg"),
    }
    return subprocess.run(args, env=env, capture_output=True, text=True, check=check)


def kafkaform_lab(action: str, inventory: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    """`kafkaform lab ACTION` against the test network and mirror."""
    args = [sys.executable, "-m", "kafkaform.lab", action, "--network", NETWORK]
    if action != "down":
        args += ["--inventory", str(inventory), "--mirror", MIRROR]
    result = run(*args, cache=cache, check=False)
    assert result.returncode == 0, result.stderr
    return result


def in_container(name: str, script: str, cache: Path) -> str:
    """Run a shell script inside a lab container; return its stdout."""
    return run("podman", "exec", name, "sh", "-ec", script, cache=cache).stdout.strip()


@pytest.fixture
def topology(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A 2-host inventory and an empty cache; the lab is torn down whatever happens."""
    inventory = tmp_path / "inventory"
    inventory.mkdir()
    (inventory / "hosts.yml").write_text(INVENTORY)
    cache = tmp_path / "cache"
    yield inventory, cache
    run(sys.executable, "-m", "kafkaform.lab", "down", "--network", NETWORK, cache=cache,
        check=False)  # fmt: skip


def test_up_is_idempotent_and_down_leaves_nothing(topology: tuple[Path, Path]) -> None:
    inventory, cache = topology
    sysctls_before = lab_state.read_sysctls(lab_state.WATCHED_SYSCTLS)

    kafkaform_lab("up", inventory, cache)
    state = lab_state.load_state(cache, NETWORK)
    assert sorted(state.containers) == sorted([*HOSTS, MIRROR])
    assert len(state.loops) == 3

    # Every host answers Ansible through the podman connection.
    ping = run("ansible", "-i", str(inventory), "all", "-m", "ansible.builtin.ping", cache=cache)
    assert ping.stdout.count("SUCCESS") == len(HOSTS)

    # A host boots systemd with no failed unit, its own machine id and the lab's file limit.
    booted = in_container("kft-zk1", "systemctl is-system-running --wait || true;"
                          " systemctl --failed --plain --no-legend | wc -l;"
                          " cat /etc/machine-id; ulimit -n", cache).split("\n")
    assert booted[:2] == ["running", "0"] and len(booted[2]) == 32 and booted[3] == "20000", booted

    # A data disk takes an XFS filesystem and mounts inside the (unprivileged) container.
    mounted = in_container(
        "kft-kafka1",
        "mkfs.xfs -q -f /dev/kfdata1; mkdir -p /mnt/d; mount -o noatime /dev/kfdata1 /mnt/d;"
        " findmnt -n -o FSTYPE,OPTIONS /mnt/d; umount /mnt/d; wipefs -a -q /dev/kfdata1",
        cache,
    )
    assert mounted.startswith("xfs") and "noatime" in mounted

    # The mirror answers by name from the other hosts.
    code = in_container(
        "kft-zk1", f"curl -s -o /dev/null -w '%{{http_code}}' http://{MIRROR}:8000/", cache
    )
    assert code == "200"

    # The containers cannot write machine-wide kernel settings.
    denied = run("podman", "exec", "kft-zk1", "sh", "-c", "echo 1 > /proc/sys/vm/swappiness",
                 cache=cache, check=False)  # fmt: skip
    assert denied.returncode != 0

    # A second `up` changes nothing.
    again = kafkaform_lab("up", inventory, cache)
    assert "created" not in again.stderr and "attached" not in again.stderr
    assert lab_state.load_state(cache, NETWORK) == state

    status = kafkaform_lab("status", inventory, cache)
    assert "kft-kafka1" in status.stdout and "lab-b" in status.stdout

    kafkaform_lab("down", inventory, cache)
    leftovers = run("podman", "ps", "-a", "--format", "{{.Names}}", cache=cache).stdout.split()
    assert not set(leftovers) & {*HOSTS, MIRROR}
    assert run("podman", "network", "exists", NETWORK, cache=cache, check=False).returncode == 1
    assert str(cache) not in run("losetup", "-a", cache=cache).stdout
    assert not (cache / "lab" / "disks").exists()
    assert not lab_state.state_path(cache).exists()
    assert lab_state.read_sysctls(lab_state.WATCHED_SYSCTLS) == sysctls_before

    # A second `down` is a no-op.
    kafkaform_lab("down", inventory, cache)
