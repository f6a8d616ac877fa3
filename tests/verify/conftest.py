"""Shared fixtures of the host verifiers: plain pytest-testinfra, run against any hosts.

    pytest tests/verify --hosts=podman://kf-kafka1,podman://kf-zk1 --ansible-inventory=inventory/lab
    pytest tests/verify --ansible-inventory=inventory/prod --hosts='ansible://kafka_broker'

Expected values come from the kafkaform model: the roles' defaults with each host's inventory
variables on top. With the ``ansible://`` backend the variables come from that inventory; with any
other backend (``podman://``, ``ssh://``, ...) from ``--ansible-inventory`` when given, looked up
by the host's name, else only the roles' defaults apply.
"""

from __future__ import annotations

import json
import subprocess
from functools import cache
from typing import Any

import pytest
import testinfra.host

from kafkaform.defaults import role_default
from kafkaform.model import InventoryView


@cache
def _inventory_host_vars(inventory: str, name: str) -> dict[str, Any]:
    """``ansible-inventory --host`` for one host: its group and host variables, merged."""
    result = subprocess.run(
        ["ansible-inventory", "-i", inventory, "--host", name],
        capture_output=True, text=True, check=False,
    )
    if result.returncode != 0:
        return {}
    data = json.loads(result.stdout)
    return data if isinstance(data, dict) else {}


@pytest.fixture(scope="module")
def host_name(host: testinfra.host.Host) -> str:
    """The host's inventory name (the container name for ``podman://``)."""
    return str(host.backend.get_hostname())


@pytest.fixture(scope="module")
def host_vars(host: testinfra.host.Host, host_name: str,
              request: pytest.FixtureRequest) -> dict[str, Any]:
    """The host's inventory variables (not the roles' defaults)."""
    if host.backend.NAME == "ansible":
        return dict(host.ansible.get_variables())
    inventory = request.config.getoption("ansible_inventory", None)
    return _inventory_host_vars(inventory, host_name) if inventory else {}


@pytest.fixture(scope="module")
def view(host_name: str, host_vars: dict[str, Any]) -> InventoryView:
    """A one-host inventory view for the model's per-host functions."""
    return InventoryView(groups={}, hostvars={host_name: host_vars})


@pytest.fixture(scope="module")
def setting(host_vars: dict[str, Any]) -> Any:
    """``setting(name)``: the host's value of a role variable, else the role's default."""
    def lookup(name: str) -> Any:
        value = host_vars.get(name)
        return role_default(name) if value is None else value
    return lookup


@pytest.fixture(scope="module")
def container(host: testinfra.host.Host) -> str | None:
    """The container technology the host runs in (systemd-detect-virt's name), or None."""
    result = host.run("systemd-detect-virt --container")
    name = result.stdout.strip()
    if result.rc == 0 and name and name != "none":
        return name
    if host.file("/run/.containerenv").exists or host.file("/.dockerenv").exists:
        return "container"
    return None
