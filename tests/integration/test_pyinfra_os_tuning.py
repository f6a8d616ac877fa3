"""pyinfra's os_tuning deploys against the Ansible role, on one systemd container (~30 s).

The role converges the container first; the deploy must then change nothing and leave every file
byte for byte. A changed setting applied by pyinfra must give the file the role writes: the role
run after it changes nothing. Own container (pyinfra-parity-*), shaped like a lab host
(kafkaform.lab.host_run_args: systemd, not privileged, so no kernel value of the machine can
change). Needs root and podman; run: `pytest tests/integration/test_pyinfra_os_tuning.py`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
IMAGE = "localhost/kafkaform-debian12:latest"
CONTAINER = f"pyinfra-parity-{os.getpid()}"
FILES = ("/etc/sysctl.d/60-kafkaform.conf", "/etc/security/limits.d/60-kafkaform.conf")
DEPLOY = "kafkaform.deploys.os_tuning.kernel_and_limits"
ENV = {**os.environ, "CONTAINERS_CONF": str(ROOT / "lab" / "containers.conf"),
       "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"), "PATH": f"{BIN}:{os.environ['PATH']}"}

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("podman") is None, reason="needs root and podman"
)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(args, env=ENV, cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"{' '.join(args)}:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def container() -> Iterator[str]:
    if subprocess.run(["podman", "image", "exists", IMAGE], env=ENV).returncode != 0:
        pytest.skip(f"{IMAGE} is missing: build it with `kafkaform lab image`")
    run("podman", "run", "--detach", "--name", CONTAINER, "--hostname", CONTAINER,
        "--systemd=always", "--label", "owner=kafkaform-tests", IMAGE, "/sbin/init")
    try:
        wait_for_systemd(CONTAINER)
        yield CONTAINER
    finally:
        subprocess.run(["podman", "rm", "--force", "--time", "0", CONTAINER], env=ENV,
                       capture_output=True, check=False)


def wait_for_systemd(host: str, seconds: float = 60) -> None:
    """Until systemd in ``host`` has booted; before its bus exists, systemctl fails at once."""
    deadline = time.monotonic() + seconds
    state = ""
    while time.monotonic() < deadline:
        state = subprocess.run(["podman", "exec", host, "systemctl", "is-system-running", "--wait"],
                               env=ENV, capture_output=True, text=True, check=False).stdout.strip()
        if state in ("running", "degraded"):
            return
        time.sleep(0.5)
    raise AssertionError(f"systemd in {host} did not boot within {seconds} s: {state}")


def inventory(directory: Path, host: str, **settings: Any) -> Path:
    """One ZooKeeper member (single-member ensemble allowed), without data disks."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "hosts.yml").write_text(yaml.safe_dump({"all": {
        "vars": {"ansible_connection": "kafkaform.platform.podman",
                 "ansible_python_interpreter": "/usr/bin/python3",
                 "kafkaform_allow_single_zookeeper": True, "os_tuning_disks_enabled": False,
                 **settings},
        "children": {"zookeeper": {"hosts": {host: {"zookeeper_id": 1}}}}}}))
    return directory


def files_state(host: str) -> list[str]:
    """sha256, owner, group and mode of each managed file."""
    listing = run("podman", "exec", host, "sh", "-c",
                  'for f in "$@"; do printf "%s %s\\n" "$(sha256sum "$f")" '
                  '"$(stat -c "%U %G %a" "$f")"; done', "files", *FILES)
    return listing.stdout.splitlines()


def ansible(source: Path) -> str:
    """The role's playbook (with its preflight); returns the host's recap line."""
    out = run(str(BIN / "ansible-playbook"), "-i", str(source), "playbooks/os_tuning.yml").stdout
    return next(line for line in out.splitlines() if "ok=" in line)


def pyinfra(source: Path, *options: str) -> dict[str, Any]:
    """The deploy through the @kafkaform connector, as pyinfra's --json report."""
    # Without --yes pyinfra detects changes first (the plan); --dry stops after that.
    confirm = () if "--dry" in options else ("--yes",)
    out = run(str(BIN / "pyinfra"), *confirm, "--json", *options, f"@kafkaform/{source}", DEPLOY)
    report: dict[str, Any] = json.loads(out.stdout)
    return report


def test_pyinfra_keeps_what_the_role_wrote_and_writes_what_it_would(
        container: str, tmp_path: Path) -> None:
    defaults = inventory(tmp_path / "defaults", container)
    assert "failed=0" in ansible(defaults)
    written = files_state(container)
    assert [line.split()[-3:] for line in written] == [["root", "root", "644"]] * 2

    report = pyinfra(defaults)
    totals = report["results"]["totals"]
    # Both files are the role's to the byte: pyinfra plans no write of either and changes nothing.
    assert (totals["success"], totals["error"]) == (0, 0), report
    assert [op["name"] for op in report["plan"] if "Write" in op["name"]] == [], report
    assert files_state(container) == written

    changed = inventory(tmp_path / "changed", container,
                        os_tuning_sysctl_overrides={"net.ipv4.tcp_max_syn_backlog": 8192},
                        os_tuning_nofile_limit=200000)
    dry = pyinfra(changed, "--dry")
    assert dry["results"] is None
    assert {host for op in dry["plan"] for host in op["hosts_with_change"]} == {container}
    assert files_state(container) == written, "--dry changed a file"

    report = pyinfra(changed)
    assert report["results"]["totals"]["success"] == 2, report
    now = files_state(container)
    assert now != written
    content = run("podman", "exec", container, "cat", *FILES).stdout
    assert "net.ipv4.tcp_max_syn_backlog=8192\n" in content
    assert "kafka hard nofile 200000\n" in content
    # The role finds the files it would write, byte for byte, owner and mode included.
    assert "changed=0" in ansible(changed)
    assert files_state(container) == now
