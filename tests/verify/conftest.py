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
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import testinfra
import testinfra.host

from kafkaform import model
from kafkaform.defaults import role_default
from kafkaform.model import InventoryView

PODMAN_CONNECTIONS = {"podman", "containers.podman.podman"}


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


# --- cluster-wide checks: the model over the whole inventory, one testinfra host per node ------


@dataclass(frozen=True)
class Inventory:
    path: str | None  # --ansible-inventory, else $KAFKAFORM_INVENTORY, else Ansible's own
    hostvars: Mapping[str, Mapping[str, Any]]
    cluster: dict[str, Any]  # kafkaform.model.build(...).to_dict()


@dataclass(frozen=True)
class Node:
    """One model entry (an ensemble member, a broker, a Spark node) and how to reach its host."""

    name: str
    entry: Mapping[str, Any]
    variables: Mapping[str, Any]  # its inventory variables
    host: testinfra.host.Host


def _group_members(data: Mapping[str, Any], group: str) -> list[str]:
    entry = data.get(group, {})
    hosts = list(entry.get("hosts", []))
    for child in entry.get("children", []):
        hosts += [h for h in _group_members(data, child) if h not in hosts]
    return hosts


@pytest.fixture(scope="session")
def inventory(request: pytest.FixtureRequest) -> Inventory:
    path = (request.config.getoption("ansible_inventory", None)
            or os.environ.get("KAFKAFORM_INVENTORY") or None)
    tool = Path(sys.executable).with_name("ansible-inventory")
    argv = [str(tool) if tool.exists() else "ansible-inventory", "--list"]
    if path:
        argv += ["-i", path]
    data = json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)
    hostvars = data.get("_meta", {}).get("hostvars", {})
    groups = {g: _group_members(data, g) for g in model.GROUPS}
    cluster = model.build(InventoryView(groups=groups, hostvars=hostvars)).to_dict()
    return Inventory(path, hostvars, cluster)


@pytest.fixture(scope="session")
def nodes(request: pytest.FixtureRequest,
          inventory: Inventory) -> Callable[[str, str], list[Node]]:
    """``nodes(model_key, what)``: the hosts of one model list (``ensemble``, ``brokers``,
    ``spark_masters``...), reached with ``--hosts`` when given (matched by inventory name or
    address), else through the inventory's own connection (``podman://`` for podman hosts,
    ``ansible://`` otherwise). Skips when the inventory has none."""
    specs = [s for s in (request.config.getoption("hosts", None) or "").split(",") if s]

    def select(key: str, what: str) -> list[Node]:
        entries = inventory.cluster[key]
        if not entries:
            pytest.skip(f"the inventory has no {what}")
        found = []
        for entry in entries:
            name, address = entry["host"], entry["address"]
            variables = inventory.hostvars.get(name, {})
            spec = next((s for s in specs
                         if s.split("://")[-1].split("@")[-1] in (name, address)), None)
            if spec is None and specs:
                pytest.fail(f"--hosts has no entry for {name} ({address}) of the {what}")
            if spec is None and variables.get("ansible_connection") in PODMAN_CONNECTIONS:
                spec = f"podman://{variables.get('ansible_host', name)}"
            host = (testinfra.get_host(f"ansible://{name}", ansible_inventory=inventory.path)
                    if spec is None else testinfra.get_host(spec))
            found.append(Node(name, entry, variables, host))
        return found

    return select


def assert_live_jvm(name: str, host: testinfra.host.Host, pid: str,
                    expected: Mapping[str, Any]) -> None:
    """The running JVM has every option and the main class its unit was rendered with, and at
    least ``nofile_limit`` open files (a container's lower hard cap is reported, not failed)."""
    cmdline = host.file(f"/proc/{pid}/cmdline").content_string.split("\0")
    for option in expected["java"]["options"]:
        assert option in cmdline, f"{name}: {option} not in the live command line"
    assert expected["java"]["main_class"] in cmdline
    limits = host.file(f"/proc/{pid}/limits").content_string
    soft = int(next(line for line in limits.splitlines()
                    if line.startswith("Max open files")).split()[3])
    if soft < expected["nofile_limit"]:
        cap = host.run("sh -c 'ulimit -Hn'").stdout.strip()
        virt = host.run("systemd-detect-virt --container").stdout.strip()
        if virt and virt != "none" and cap.isdigit() and soft == int(cap):
            print(f"{name}: open files {soft}, the container's hard cap ({virt}), below "
                  f"LimitNOFILE={expected['nofile_limit']}")
            return
    assert soft >= expected["nofile_limit"], f"{name}: open files {soft}"
