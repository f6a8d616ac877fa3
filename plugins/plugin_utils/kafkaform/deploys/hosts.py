"""An Ansible inventory as pyinfra hosts: name, data and groups, and how to reach each host.

The data of a host is every variable the inventory gives it (host and group variables, templated
as Ansible would), without Ansible's magic variables, plus the connection keys pyinfra's
connectors read. The preflight of ``kafkaform check`` runs first: an inventory that breaks a rule
yields no host at all.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import checks, inventory, sealed
from ..cli import InputError
from ..defaults import as_bool, known_inputs
from ..model import InventoryView
from ..rules import cite

#: Host data key naming the connector that executes on the host (see :mod:`.connector`).
CONNECTION = "kafkaform_connection"
#: Host data key holding the inventory the host was read from, for deploys that need the model.
INVENTORY = "kafkaform_inventory"

PODMAN, SSH, LOCAL = "podman", "ssh", "local"

#: ``ansible_connection`` values and the pyinfra connector that reaches the same host.
CONNECTIONS = {
    **dict.fromkeys(inventory.PODMAN_CONNECTIONS, PODMAN),
    "ssh": SSH, "ansible.builtin.ssh": SSH, "paramiko": SSH, "paramiko_ssh": SSH,
    "ansible.builtin.paramiko_ssh": SSH,
    "local": LOCAL, "ansible.builtin.local": LOCAL,
}

#: Variables Ansible sets itself on every host (its "magic" variables): not inventory data.
MAGIC_VARIABLES = frozenset({
    "ansible_dependent_role_names", "ansible_play_hosts", "ansible_play_role_names",
    "ansible_version", "groups", "ansible_async_path", "ansible_config_file", "play_hosts",
    "inventory_dir", "inventory_hostname", "inventory_hostname_short", "group_names", "hostvars",
    "ansible_inventory_sources", "ansible_verbosity", "ansible_run_tags", "ansible_facts",
    "role_names", "ansible_play_hosts_all", "ansible_play_batch", "ansible_skip_tags",
    "ansible_collection_name", "role_path", "inventory_file", "playbook_dir", "role_uuid",
    "ansible_forks", "ansible_role_names", "ansible_playbook_python", "ansible_diff_mode",
    "role_name", "ansible_role_name", "ansible_limit", "ansible_check_mode", "omit",
})


class InventoryRefused(Exception):
    """The inventory cannot be deployed: the message says why and how to fix it."""


@dataclass(frozen=True)
class PyinfraHost:
    name: str
    data: dict[str, Any]
    groups: tuple[str, ...]


def plain(value: Any) -> Any:
    """``value`` with Ansible's tagged strings, numbers and containers made the built-in types,
    so pyinfra can copy and print host data like any other."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    for kind in (bool, int, float, str):
        if isinstance(value, kind):
            return kind(value)
    return value


def connection_data(name: str, variables: Mapping[str, Any]) -> dict[str, Any]:
    """The pyinfra connector keys of one host, from its ``ansible_*`` connection variables.

    https://docs.pyinfra.com/en/3.x/connectors/ssh.html and .../connectors/podman.html name the
    keys; ``_sudo`` is pyinfra's global argument for Ansible's ``become``.
    """
    connection = str(variables.get("ansible_connection") or "ssh")
    kind = CONNECTIONS.get(connection)
    if kind is None:
        raise InventoryRefused(
            f"{name}: ansible_connection {connection} has no pyinfra counterpart here. Fix: use "
            f"one of {', '.join(sorted(CONNECTIONS))}")
    address = str(variables.get("ansible_host") or name)
    data: dict[str, Any] = {CONNECTION: kind}
    if kind == PODMAN:
        data["docker_identifier"] = address  # the container, as containers.podman.podman names it
    elif kind == SSH:
        data["ssh_hostname"] = address
        optional = {"ssh_user": variables.get("ansible_user"),
                    "ssh_port": variables.get("ansible_port"),
                    "ssh_key": variables.get("ansible_ssh_private_key_file")}
        data.update({k: str(v) for k, v in optional.items() if v is not None})
        if "ssh_port" in data:
            data["ssh_port"] = int(data["ssh_port"])
    if variables.get("ansible_become") is not None:
        data["_sudo"] = as_bool(variables["ansible_become"])
        if variables.get("ansible_become_user"):
            data["_sudo_user"] = str(variables["ansible_become_user"])
    return data


def preflight(view: InventoryView, source: str | Path) -> None:
    """Run ``kafkaform check``'s rules; print every finding as it does, and refuse on an error."""
    findings = checks.check(view)
    for finding in findings:
        print(finding.text(), file=sys.stderr)
    failed = checks.errors(findings)
    if failed:
        raise InventoryRefused(
            f"{source} breaks {len(failed)} cluster rule(s) (listed above, as `kafkaform check -i "
            f"{source}` lists them); no host was touched")
    # As playbooks/preflight.yml: the control node's secrets are sealed with a vault secret.
    unsealable = sealed.problem({sealed.PLAINTEXT_SETTING: view.cluster_var(
        sealed.PLAINTEXT_SETTING, False)})
    if unsealable:
        raise InventoryRefused(f"[{cite('SE-16')}] {unsealable}; no host was touched")


def host_data(host: inventory.InventoryHost, source: str | Path) -> dict[str, Any]:
    """The inventory's variables of one host, templated, and its connection keys.

    Ansible templates a variable only where a task uses it; pyinfra's host data is plain values,
    so each is templated here. One that cannot be templated outside its own tool (molecule's
    ``lookup('env', ...)`` variables, say) is left out, unless kafkaform or the connection reads
    it: then the run stops, naming it.
    """
    read = known_inputs()
    data = {}
    for key in host.variables:
        if key in MAGIC_VARIABLES:
            continue
        try:
            data[key] = plain(host.variables[key])
        except InputError as error:  # inventory.TemplatedVars names the host and the variable
            if key in read or key.startswith("ansible_"):
                raise InventoryRefused(str(error)) from error
    data.update(connection_data(host.name, data))
    data[INVENTORY] = str(source)
    return data


def pyinfra_hosts(source: str | Path) -> Iterator[PyinfraHost]:
    """Every host of the Ansible inventory ``source``, after the preflight passed.

    Raises :class:`InventoryRefused` before yielding anything when ``source`` is not an inventory,
    breaks a cluster rule, or names a connection pyinfra cannot make.
    """
    try:
        view, hosts = inventory.load_hosts(source)
        preflight(view, source)
    except InputError as error:  # also a value the rules read that cannot be templated
        raise InventoryRefused(str(error)) from error
    built = [PyinfraHost(h.name, host_data(h, source), h.groups) for h in hosts]
    yield from built
