"""pyinfra's zookeeper deploy against the Ansible role, both ways, on one member (~3 min).

A fresh container converged by pyinfra must look converged to the role (`--check --diff`: 0
changed); the role's real run then changes nothing and restarts nothing, and pyinfra after it
neither. A setting changed through pyinfra restarts the member once, health-gated, and the role
with the same setting finds nothing to do. Own podman network, mirror and member
(pyinfra-zk-*), shaped like the lab's. Needs root, podman, the mirror (`kafkaform mirror build`)
and the lab image (`kafkaform lab image`).
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

from .test_pyinfra_os_tuning import ENV, IMAGE, run, wait_for_systemd

BIN = Path(sys.executable).parent
PREFIX = f"pyinfra-zk-{os.getpid()}"
MEMBER, MIRROR, NETWORK = f"{PREFIX}-1", f"{PREFIX}-mirror", PREFIX
CACHE = Path(os.environ.get("KAFKAFORM_CACHE") or "/var/cache/kafkaform")
DEPLOY = "kafkaform.deploys.zookeeper.zookeeper"
#: The files the role manages on a member, and the service whose start time tells a restart.
FILES = ("/var/lib/zookeeper/myid", "/etc/zookeeper/zoo.cfg", "/etc/zookeeper/jaas.conf",
         "/etc/zookeeper/client-jaas.conf", "/etc/zookeeper/logback.xml",
         "/etc/zookeeper/release", "/etc/systemd/system/zookeeper.service",
         "/etc/systemd/system/zookeeper-purge.service",
         "/etc/systemd/system/zookeeper-purge.timer", "/usr/local/sbin/zookeeper-4lw",
         "/opt/kafkaform/zookeeper")

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("podman") is None, reason="needs root and podman"
)


def podman(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(["podman", *args], env=ENV, capture_output=True, text=True,
                            check=False)
    assert not check or result.returncode == 0, f"podman {' '.join(args)}: {result.stderr}"
    return result


@pytest.fixture(scope="module")
def member() -> Iterator[str]:
    if podman("image", "exists", IMAGE, check=False).returncode != 0:
        pytest.skip(f"{IMAGE} is missing: build it with `kafkaform lab image`")
    if not (CACHE / "mirror").is_dir():
        pytest.skip(f"{CACHE / 'mirror'} is missing: build it with `kafkaform mirror build`")
    podman("network", "create", NETWORK)
    try:
        podman("run", "--detach", "--name", MIRROR, "--network", NETWORK, "--label",
               "owner=kafkaform-tests", "--volume", f"{CACHE / 'mirror'}:/srv/mirror:ro", IMAGE,
               "python3", "-m", "http.server", "8000", "--directory", "/srv/mirror")
        podman("run", "--detach", "--name", MEMBER, "--hostname", MEMBER, "--network", NETWORK,
               "--systemd=always", "--label", "owner=kafkaform-tests", IMAGE, "/sbin/init")
        wait_for_systemd(MEMBER)
        yield MEMBER
    finally:
        podman("rm", "--force", "--time", "0", MEMBER, MIRROR, check=False)
        podman("network", "rm", "--force", NETWORK, check=False)


def inventory(directory: Path, secrets: Path, **settings: Any) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "hosts.yml").write_text(yaml.safe_dump({"all": {
        "vars": {"ansible_connection": "containers.podman.podman",
                 "ansible_python_interpreter": "/usr/bin/python3",
                 "kafka_cluster_name": "parity", "kafkaform_allow_single_zookeeper": True,
                 "kafkaform_secrets_dir": str(secrets),
                 "kafkaform_apache_mirror_url": f"http://{MIRROR}:8000",
                 "zookeeper_heap_mb": 256, **settings},
        "children": {"zookeeper": {"hosts": {MEMBER: {"zookeeper_id": 1}}}}}}))
    return directory


def state(host: str) -> list[str]:
    """sha256 (or link target), owner, group and mode of each managed file."""
    listing = podman("exec", host, "sh", "-c",
                     'for f in "$@"; do if [ -L "$f" ]; then t=$(readlink "$f"); '
                     'else t=$(sha256sum "$f" | cut -d" " -f1); fi; '
                     'printf "%s %s %s\\n" "$f" "$t" "$(stat -c "%U %G %a" "$f")"; done',
                     "files", *FILES)
    return listing.stdout.splitlines()


def started(host: str) -> str:
    return podman("exec", host, "systemctl", "show", "--property=ExecMainStartTimestampMonotonic",
                  "zookeeper").stdout.strip()


def ansible(source: Path, *options: str) -> str:
    """playbooks/zookeeper.yml (with its preflight); the host's recap line."""
    out = run(str(BIN / "ansible-playbook"), *options, "-i", str(source),
              "playbooks/zookeeper.yml").stdout
    return next(line for line in out.splitlines() if "ok=" in line and MEMBER in line)


def pyinfra(source: Path) -> dict[str, Any]:
    out = run(str(BIN / "pyinfra"), "--yes", "--json", f"@kafkaform/{source}", DEPLOY)
    report: dict[str, Any] = json.loads(out.stdout)
    return report


def changes(report: dict[str, Any]) -> int:
    totals = report["results"]["totals"]
    assert totals["error"] == 0, report
    return int(totals["success"])


def test_zookeeper_deploys_agree_both_ways(member: str, tmp_path: Path) -> None:
    secrets = tmp_path / "secrets"
    base = inventory(tmp_path / "base", secrets)
    assert changes(pyinfra(base)) > 0
    written, start = state(member), started(member)
    assert podman("exec", member, "/usr/local/sbin/zookeeper-4lw", "ruok",
                  "127.0.0.1:2181").stdout == "imok"

    # The role, dry and then for real, finds everything it would write already there.
    assert "changed=0" in ansible(base, "--check", "--diff")
    assert "changed=0" in ansible(base)
    assert state(member) == written
    assert started(member) == start, "the role restarted a member pyinfra had converged"
    # And pyinfra after the role: nothing to do, no restart.
    assert changes(pyinfra(base)) == 0
    assert started(member) == start

    # A setting changed through pyinfra: files rewritten, the member restarted once.
    bigger = inventory(tmp_path / "bigger", secrets, zookeeper_heap_mb=320)
    assert changes(pyinfra(bigger)) > 0
    assert started(member) != start
    restarted = started(member)
    unit = podman("exec", member, "cat", "/etc/systemd/system/zookeeper.service").stdout
    assert "-Xmx320m" in unit
    assert "changed=0" in ansible(bigger)
    assert started(member) == restarted
