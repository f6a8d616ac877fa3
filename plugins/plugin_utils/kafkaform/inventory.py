"""Read an Ansible inventory with Ansible's own API, so every inventory format and plugin works."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .model import GROUPS, InventoryView


class TemplatedVars(Mapping[str, Any]):
    """One host's variables, templated on access (an inventory may compute ids with Jinja)."""

    def __init__(self, raw: Mapping[str, Any], templar: Any) -> None:
        self._raw = raw
        self._templar = templar

    def __getitem__(self, key: str) -> Any:
        return self._templar.template(self._raw[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)


def load(source: str | Path) -> InventoryView:
    """The groups and host variables of an inventory file, directory or plugin config.

    Raises FileNotFoundError when ``source`` does not exist (Ansible itself would only warn).
    """
    if not Path(source).exists():
        raise FileNotFoundError(f"inventory {source} does not exist")
    # Ansible is imported here, not at module level: the model must stay importable without it.
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar
    from ansible.vars.manager import VariableManager

    loader = DataLoader()
    inventory = InventoryManager(loader=loader, sources=[str(source)])
    variables = VariableManager(loader=loader, inventory=inventory)
    groups = {
        name: [host.name for host in inventory.groups[name].get_hosts()]
        for name in GROUPS
        if name in inventory.groups
    }
    wanted = {host for members in groups.values() for host in members}
    hostvars: dict[str, Mapping[str, Any]] = {}
    for host in inventory.get_hosts():
        if host.name in wanted:
            raw = variables.get_vars(host=host, include_hostvars=False)
            hostvars[host.name] = TemplatedVars(raw, Templar(loader=loader, variables=raw))
    return InventoryView(groups=groups, hostvars=hostvars)
