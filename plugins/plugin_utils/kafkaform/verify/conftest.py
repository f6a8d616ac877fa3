"""Shared fixtures of the host verifiers: plain pytest-testinfra, run against any hosts.

    kafkaform verify -i inventory/prod [--limit PATTERN]      # what operators and CI run
    pytest --pyargs kafkaform.verify --ansible-inventory=inventory/lab \
        --hosts=podman://kf-kafka1,podman://kf-zk1

Expected values come from the kafkaform model: the roles' defaults with each host's inventory
variables on top. With the ``ansible://`` backend the variables come from that inventory; with any
other backend (``podman://``, ``ssh://``, ...) from ``--ansible-inventory`` when given, looked up
by the host's name (or its ``ansible_host``), else only the roles' defaults apply.

The per-host checks (os_tuning) run on each ``--hosts`` entry. The cluster-wide checks build the
model from the whole inventory and visit its members, all of them or, with ``--kafkaform-hosts``
(``kafkaform verify`` sets it), the ones named there.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest
import testinfra  # type: ignore[import-untyped]
import testinfra.backend  # type: ignore[import-untyped]
import testinfra.host  # type: ignore[import-untyped]

from kafkaform import defaults, model
from kafkaform import inventory as inventory_loader
from kafkaform.inventory import PODMAN_CONNECTIONS
from kafkaform.model import InventoryView
from kafkaform.plans.files import PlannedFile

# ``podman://`` hosts go through the exec channel: one long-lived `podman exec` per container
# instead of one per command (verify/backend.py). testinfra looks its backends up in this table.
testinfra.backend.BACKENDS["podman"] = "kafkaform.verify.backend.PodmanChannelBackend"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--kafkaform-hosts", default=None, metavar="NAME,...",
        help="inventory names of the hosts to visit: the cluster-wide checks leave out the "
        "other members, and the per-host checks skip when --hosts is not given (set by "
        "`kafkaform verify`; unset, every member is visited)")


def visited(config: pytest.Config) -> set[str] | None:
    """The inventory names ``--kafkaform-hosts`` lists, or None when every host is visited."""
    names = config.getoption("kafkaform_hosts", None)
    return None if names is None else {n for n in str(names).split(",") if n}


def _from_verify(config: pytest.Config) -> InventoryView | None:
    for plugin in config.pluginmanager.get_plugins():
        if isinstance(getattr(plugin, "kafkaform_view", None), InventoryView):
            return plugin.kafkaform_view  # type: ignore[no-any-return]
    return None


def inventory_view(config: pytest.Config, path: str | None) -> InventoryView:
    """The inventory ``kafkaform verify`` read (its InventoryPlugin), else ``path`` (else
    Ansible's configured inventory) read by kafkaform's loader, vault secrets from the
    environment as for ansible-playbook."""
    return _from_verify(config) or _loaded(path)


@cache
def _loaded(path: str | None) -> InventoryView:
    return inventory_loader.load_every_host(inventory_loader.Sources((path,) if path else ()))


@pytest.fixture(scope="module")
def host(_testinfra_host: testinfra.host.Host,
         request: pytest.FixtureRequest) -> testinfra.host.Host:
    """testinfra's ``host``, skipped when ``kafkaform verify`` found no host for the per-host
    checks (without --hosts, testinfra would check the machine pytest runs on)."""
    if visited(request.config) is not None and request.config.getoption("hosts", None) is None:
        pytest.skip("no host to check: os_tuning tunes the zookeeper and kafka_broker members "
                    "(and, with --limit, the matching hosts in no kafkaform group)")
    return _testinfra_host


@pytest.fixture(scope="module")
def host_name(host: testinfra.host.Host, request: pytest.FixtureRequest) -> str:
    """The host's inventory name: for ``podman://`` and ``ssh://`` the inventory host whose name,
    else whose ``ansible_host``, is the container or address testinfra reaches."""
    name = str(host.backend.get_hostname())
    path = request.config.getoption("ansible_inventory", None)
    if host.backend.NAME == "ansible" or not (path or _from_verify(request.config)):
        return name
    hostvars = inventory_view(request.config, path).hostvars
    if name in hostvars:
        return name
    return next((h for h, v in hostvars.items() if v.get("ansible_host") == name), name)


@pytest.fixture(scope="module")
def host_vars(host: testinfra.host.Host, host_name: str,
              request: pytest.FixtureRequest) -> Mapping[str, Any]:
    """The host's inventory variables (not the roles' defaults), templated when read."""
    path = request.config.getoption("ansible_inventory", None)
    if host.backend.NAME == "ansible" or path or _from_verify(request.config):
        return inventory_view(request.config, path).hostvars.get(host_name, {})
    return {}


@pytest.fixture(scope="module")
def view(host_name: str, host_vars: Mapping[str, Any]) -> InventoryView:
    """A one-host inventory view for the model's per-host functions."""
    return InventoryView(groups={}, hostvars={host_name: host_vars})


@pytest.fixture(scope="module")
def setting(host_vars: Mapping[str, Any]) -> Any:
    """``setting(name)``: the host's value of a role variable, else the role's default, as the
    role reads it (kafkaform.defaults.setting)."""
    def lookup(name: str) -> Any:
        return defaults.setting(host_vars, name)
    return lookup


@pytest.fixture(scope="module")
def container(host: testinfra.host.Host) -> str | None:
    """The container technology the host runs in (systemd-detect-virt's name), or None."""
    result = host.run("systemd-detect-virt --container")
    name = str(result.stdout).strip()
    if result.rc == 0 and name and name != "none":
        return name
    if host.file("/run/.containerenv").exists or host.file("/.dockerenv").exists:
        return "container"
    return None


# --- cluster-wide checks: the model over the whole inventory, one testinfra host per node ------


@dataclass(frozen=True)
class Inventory:
    path: str | None  # --ansible-inventory, else $KAFKAFORM_INVENTORY, else Ansible's own
    view: InventoryView
    cluster: dict[str, Any]  # kafkaform.model.build(...).to_dict()

    @property
    def hostvars(self) -> Mapping[str, Mapping[str, Any]]:
        return self.view.hostvars


@dataclass(frozen=True)
class Node:
    """One model entry (an ensemble member, a broker, a Spark node) and how to reach its host."""

    name: str
    entry: Mapping[str, Any]
    variables: Mapping[str, Any]  # its inventory variables
    host: testinfra.host.Host


@pytest.fixture(scope="session")
def inventory(request: pytest.FixtureRequest) -> Inventory:
    path = (request.config.getoption("ansible_inventory", None)
            or os.environ.get("KAFKAFORM_INVENTORY") or None)
    view = inventory_view(request.config, path)
    return Inventory(path, view, model.build(view).to_dict())


class Nodes:
    """``nodes(model_key, what)``: the hosts of one model list (``ensemble``, ``brokers``,
    ``spark_masters``...) that this run visits, reached with ``--hosts`` when it has an entry
    for them (matched by inventory name or address), else through the inventory's own
    connection (``podman://`` for podman hosts, ``ansible://`` otherwise). Skips when the
    inventory has none, or ``--kafkaform-hosts`` leaves out every one."""

    def __init__(self, inventory: Inventory, specs: list[str], visit: set[str] | None) -> None:
        self.inventory = inventory
        self.specs = specs
        self.visit = visit

    def __call__(self, key: str, what: str) -> list[Node]:
        found = self.reach(key)
        if not found:
            pytest.skip(f"the inventory has no {what}" if not self.inventory.cluster[key]
                        else f"--kafkaform-hosts (kafkaform verify --limit) leaves out every "
                        f"one of the {what}")
        return found

    def reach(self, key: str) -> list[Node]:
        """The visited hosts of one model list, possibly none."""
        return [self.host(entry["host"], entry["address"], entry)
                for entry in self.inventory.cluster[key]
                if self.visit is None or entry["host"] in self.visit]

    def group(self, name: str) -> list[Node]:
        """The visited hosts of an inventory group outside the model (``monitoring``)."""
        return [self.host(host, host, {}) for host in self.inventory.view.members(name)
                if self.visit is None or host in self.visit]

    def host(self, name: str, address: str, entry: Mapping[str, Any]) -> Node:
        variables = self.inventory.hostvars.get(name, {})
        spec = next((s for s in self.specs
                     if s.split("://")[-1].split("@")[-1] in (name, address)), None)
        if spec is None:
            spec = (f"podman://{variables.get('ansible_host', name)}"
                    if variables.get("ansible_connection") in PODMAN_CONNECTIONS
                    else f"ansible://{name}")
        host = (testinfra.get_host(spec, ansible_inventory=self.inventory.path)
                if spec.startswith("ansible://") else testinfra.get_host(spec))
        return Node(name, entry, variables, host)


@pytest.fixture(scope="session")
def nodes(request: pytest.FixtureRequest, inventory: Inventory) -> Nodes:
    specs = [s for s in (request.config.getoption("hosts", None) or "").split(",") if s]
    return Nodes(inventory, specs, visited(request.config))


@dataclass(frozen=True)
class Stat:
    """What ``stat`` tells of a path, symbolic links followed (as ``test -f`` does)."""

    kind: str  # GNU stat's %F: "regular file", "regular empty file", "directory"...
    user: str
    group: str
    mode: int

    @property
    def is_file(self) -> bool:
        return self.kind.startswith("regular")

    @property
    def is_directory(self) -> bool:
        return self.kind == "directory"

    def owned(self) -> str:
        return f"{self.user}:{self.group} {self.mode:o}"


def stat_paths(host: testinfra.host.Host, paths: Sequence[str]) -> dict[str, Stat]:
    """Each of ``paths`` that exists on ``host``, by path, read by one ``stat``: testinfra's
    File asks again for every property, a round trip to the host each."""
    if not paths:
        return {}
    out = host.run(shlex.join(["stat", "-L", "--format=%F|%U|%G|%a|%n", "--", *paths])).stdout
    found = {}
    for line in out.splitlines():
        kind, user, group, mode, path = line.split("|", 4)
        found[path] = Stat(kind, user, group, int(mode, 8))
    return found


def unreadable_by(host: testinfra.host.Host, user: str, paths: Sequence[str]) -> list[str]:
    """The ``paths`` that ``user`` cannot read on ``host``, asked in one call."""
    script = 'for path; do test -r "$path" || printf "%s\\n" "$path"; done'
    ran = host.run(shlex.join(["runuser", "-u", user, "--", "sh", "-c", script, "sh", *paths]))
    assert ran.rc == 0, f"runuser -u {user} failed: {ran.stderr}"
    return [line for line in ran.stdout.splitlines() if line]


def assert_planned_files(name: str, host: testinfra.host.Host,
                         planned: Iterable[PlannedFile]) -> None:
    """Each file a role's plan writes is on the host with its planned owner, group and mode."""
    planned = list(planned)
    found = stat_paths(host, [file.dest for file in planned])
    for file in planned:
        item = found.get(file.dest)
        assert item is not None and item.is_file, f"{name}: {file.dest} is missing"
        assert (item.user, item.group, item.mode) == (
            file.owner, file.group, int(file.mode, 8)), (
            f"{name}: {file.dest} is {item.owned()}, planned {file.owner}:{file.group} "
            f"{file.mode}")


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
