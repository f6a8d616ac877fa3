"""Read an Ansible inventory as ``ansible-playbook`` reads it, for every kafkaform command.

One loader for ``check``, ``verify``, the pyinfra connector and whatever comes next, built on
Ansible's own CLI helpers: the same ``-i`` sources (several of them, paths in any form, made
absolute as Ansible's CLI makes them so ``group_vars/`` beside a relative file is found), the
inventory plugins, and Vault secrets resolved as ``ansible-playbook`` resolves them
(``--vault-id``, ``--vault-password-file``, ``--ask-vault-pass``, ``ANSIBLE_VAULT_IDENTITY_LIST``,
``ANSIBLE_VAULT_PASSWORD_FILE``, ansible.cfg).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .cli import InputError
from .model import GROUPS, MONITORING, InventoryView
from .paths import load_collections

#: ansible_connection values that run a host's commands with ``podman exec``: the project's
#: pipelined connection (plugins/connection/podman.py), containers.podman's, and the short name.
PODMAN_CONNECTIONS = frozenset({"kafkaform.platform.podman", "containers.podman.podman", "podman"})

#: A cloud spec's own top-level keys; an inventory's top level holds groups (mappings) instead.
CLOUD_SPEC_KEYS = frozenset({"region", "zones", "groups"})


#: What every refusal of a vault-encrypted value or file tells the operator to pass.
VAULT_FIX = ("pass --vault-password-file FILE, --vault-id [LABEL@]FILE or --ask-vault-pass "
             "(pyinfra: set ANSIBLE_VAULT_PASSWORD_FILE or ANSIBLE_VAULT_IDENTITY_LIST)")


@dataclass(frozen=True)
class Sources:
    """What a command was told to read: ``ansible-playbook``'s inventory and vault options.

    ``inventories`` empty means Ansible's configured inventory (ANSIBLE_INVENTORY, ansible.cfg).
    """

    inventories: tuple[str, ...] = ()
    vault_ids: tuple[str, ...] = ()
    vault_password_files: tuple[str, ...] = ()
    ask_vault_pass: bool = False
    _secrets: list[Any] = field(default_factory=list, compare=False, repr=False)

    @classmethod
    def of(cls, source: Sources | str | Path) -> Sources:
        return source if isinstance(source, Sources) else cls((str(source),))

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Sources:
        return cls(tuple(args.inventory or ()), tuple(args.vault_ids or ()),
                   tuple(args.vault_password_files or ()), bool(args.ask_vault_pass))

    def resolved(self) -> list[str]:
        """The sources as Ansible's CLI hands them to its inventory manager: absolute paths
        (host lists with a comma as they are), or the configured inventory."""
        from ansible import constants as C
        from ansible.utils.path import unfrackpath

        given = list(self.inventories) or list(C.DEFAULT_HOST_LIST)
        return [unfrackpath(item, follow=False) if "," not in item else item for item in given]

    def __str__(self) -> str:
        return ", ".join(self.inventories) or ", ".join(self.resolved())

    def secrets(self, loader: Any) -> list[Any]:
        """The vault secrets, exactly as ``ansible-playbook`` sets them up (configured
        identities first, then --vault-id, --vault-password-file, a prompt), read once."""
        if not self._secrets:
            from ansible import constants as C
            from ansible.cli import CLI
            from ansible.errors import AnsibleError

            try:
                self._secrets.extend(CLI.setup_vault_secrets(
                    loader, vault_ids=list(C.DEFAULT_VAULT_IDENTITY_LIST) + list(self.vault_ids),
                    vault_password_files=list(self.vault_password_files),
                    ask_vault_pass=self.ask_vault_pass, auto_prompt=False,
                    initialize_context=False))
            except AnsibleError as error:  # a password file missing or unreadable, a script failing
                reason = str(error).splitlines()[0]
                raise InputError(f"the vault secret cannot be read: {reason}. Fix: pass a "
                                 "readable password file or script, or --ask-vault-pass") from error
        return self._secrets

    def environment(self) -> dict[str, str]:
        """Environment for Ansible run as a child process (testinfra's ansible backend): the
        identities given on the command line, after the configured ones."""
        from ansible import constants as C

        given = [*self.vault_ids, *self.vault_password_files]
        if not given:
            return {}
        return {"ANSIBLE_VAULT_IDENTITY_LIST": ",".join([*C.DEFAULT_VAULT_IDENTITY_LIST, *given])}


#: What -i means to a command that needs an inventory.
INVENTORY_HELP = ("inventory file, directory, plugin configuration or host list; repeat for "
                  "several (default: Ansible's configured inventory, ANSIBLE_INVENTORY or "
                  "ansible.cfg)")


def add_arguments(parser: argparse.ArgumentParser, inventory_help: str = INVENTORY_HELP) -> None:
    """``-i`` and the vault options, as ``ansible-playbook`` takes them; ``inventory_help`` says
    what the inventory is for where a command can go without one."""
    from ansible.cli.arguments import option_helpers

    parser.add_argument("-i", "--inventory", action="append", metavar="SOURCE",
                        help=inventory_help)
    option_helpers.add_vault_options(parser)


def _activate(secrets: list[Any]) -> None:
    """Make ``secrets`` the ones Ansible decrypts inline ``!vault`` values with (its
    process-wide context, which Ansible's CLI sets once; later loads add theirs)."""
    from ansible.parsing.vault import VaultSecretsContext

    current = VaultSecretsContext.current(optional=True)
    if current is None:
        VaultSecretsContext.initialize(VaultSecretsContext(list(secrets)))
    else:
        current.secrets.extend(s for s in secrets if s not in current.secrets)


def _chain(error: BaseException) -> Iterator[BaseException]:
    """``error`` and the errors it was raised from or while handling (Ansible's vars plugins
    re-raise a vault error as another), at most 10."""
    seen: BaseException | None = error
    for _depth in range(10):
        if seen is None:
            return
        yield seen
        seen = seen.__cause__ or seen.__context__


def vault_origin(error: BaseException, value: Any = None) -> str | None:
    """The file (and line) of an encrypted file or value no secret opened: Ansible tags what it
    reads with its origin, on the value or on a vault error of the chain."""
    try:
        from ansible._internal._datatag._tags import Origin
    except ImportError:  # another ansible-core: the message names no file then
        return None
    for candidate in [value, *(getattr(seen, "obj", None) for seen in _chain(error))]:
        origin = Origin.get_tag(candidate) if candidate is not None else None
        if origin is not None and origin.path:
            return str(origin.path) + (f" line {origin.line_num}" if origin.line_num else "")
    return None


def is_vault_error(error: BaseException) -> bool:
    """Whether Ansible failed because something vault-encrypted could not be decrypted."""
    from ansible.parsing.vault import AnsibleVaultError

    return any(isinstance(seen, AnsibleVaultError) or "undecryptable" in str(seen)
               for seen in _chain(error))


def vault_refusal(where: str) -> InputError:
    return InputError(f"{where} is encrypted with Ansible Vault and no vault secret given "
                      f"opens it. Fix: {VAULT_FIX}")


class TemplatedVars(Mapping[str, Any]):
    """One host's variables, templated on access (an inventory may compute ids with Jinja)."""

    def __init__(self, raw: Mapping[str, Any], loader: Any, host: str = "") -> None:
        self._raw = raw
        self._loader = loader
        self._templar: Any = None  # made at the first value that needs it: most need none
        self._host = host

    def __getitem__(self, key: str) -> Any:
        value = self._raw[key]
        if value is None or isinstance(value, (bool, int, float)) or (
                isinstance(value, str) and "{" not in value):
            return value  # nothing to template: the templar's answer would be the value itself
        from ansible.errors import AnsibleError
        from ansible.template import Templar

        if self._templar is None:
            self._templar = Templar(loader=self._loader, variables=self._raw)
        try:
            return self._templar.template(value)
        except AnsibleError as error:
            if is_vault_error(error):
                where = vault_origin(error, value)
                raise vault_refusal(f"{self._host}: {key} ({where or 'an inline !vault'})"
                                    ) from error
            # Ansible would stop on it too, at the first task that reads it: say so now.
            reason = str(error).splitlines()[0]
            raise InputError(
                f"{self._host}: {key} cannot be templated: {reason}. Fix: define what it refers "
                "to in the inventory, or give the value itself") from error

    def __contains__(self, key: object) -> bool:
        return key in self._raw  # Mapping's own would template the value to find out

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)


def _precheck(path: Path) -> None:
    """Refuse what Ansible would only warn about, or misread as an empty inventory."""
    if not path.exists():
        raise InputError(f"inventory {path} does not exist. Fix: pass an inventory file or "
                         "directory with -i")
    if not path.is_file():
        return
    head = path.read_bytes()[:65536]
    # An executable file is a script inventory, whatever it holds; any other binary file
    # would parse as an INI inventory of one garbled host.
    if b"\0" in head and not os.access(path, os.X_OK):
        raise InputError(f"{path} is a binary file, not an Ansible inventory. Fix: pass an "
                         "inventory file (YAML or INI) or directory with -i")
    if path.suffix in (".yml", ".yaml") and re.search(rb"^region\s*:", head, re.MULTILINE):
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (yaml.YAMLError, UnicodeDecodeError):
            return  # Ansible reports it as it would any broken inventory
        if (isinstance(data, Mapping) and set(data) >= CLOUD_SPEC_KEYS
                and isinstance(data["region"], str)):
            raise InputError(
                f"{path} is a kafkaform cloud spec, not an inventory. Fix: write its inventory "
                f"with `kafkaform cloud inventory --spec {path} --output DIR` and pass -i DIR")


def _parse(source: Sources | str | Path) -> tuple[Any, Any, HostVariables]:
    """Ansible's loader and inventory manager over ``source``, and its hosts' variables.

    Raises :class:`InputError` when a source is missing, a cloud spec, or something no
    inventory plugin can parse (Ansible itself would warn and go on with an empty inventory),
    or when a file it reads is vault-encrypted and no secret given opens it.
    """
    sources = Sources.of(source)
    resolved = sources.resolved()
    for item in resolved:
        if "," not in item:
            _precheck(Path(item))
    # Ansible is imported here, not at module level: the model must stay importable without it.
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader
    from ansible.vars.manager import VariableManager

    # As ansible-inventory does: plugin configurations name their plugin by its collection
    # (ansible.builtin.generator, amazon.aws.aws_ec2), found only through the collection loader.
    load_collections()

    class Manager(InventoryManager):  # type: ignore[misc]  # untyped base
        """Remembers whether any plugin parsed the source: a directory counts when one of its
        files parses, as for Ansible."""

        parsed = False

        def _fetch_inventory_plugins(self) -> list[Any]:
            # The yaml plugin before auto: auto loads every YAML source to look for a `plugin:`
            # key and hands a plain inventory on to yaml, which loads it again (half the time of
            # a check on 1,000 hosts). yaml refuses a plugin configuration file, which auto then
            # reads, so the order changes no result.
            plugins: list[Any] = super()._fetch_inventory_plugins()
            names = [getattr(plugin, "NAME", "") for plugin in plugins]
            if "auto" in names and "yaml" in names and names.index("auto") < names.index("yaml"):
                plugins.insert(names.index("auto"), plugins.pop(names.index("yaml")))
            return plugins

        def parse_source(self, source: str, cache: bool = False) -> bool:
            parsed = bool(super().parse_source(source, cache=cache))
            self.parsed = self.parsed or parsed
            return parsed

    class Loader(DataLoader):  # type: ignore[misc]  # untyped base
        """Returns a file read with cache='none' as parsed: it is kept nowhere, so the deep copy
        that guards the cache guards nothing (the yaml plugin reads the inventory so, and copying
        a 1,000-host file took half of a check's parse)."""

        def load_from_file(self, file_name: str, cache: str = "all", unsafe: bool = False,
                           json_only: bool = False, trusted_as_template: bool = False) -> Any:
            return super().load_from_file(file_name, cache=cache, unsafe=unsafe or cache == "none",
                                          json_only=json_only,
                                          trusted_as_template=trusted_as_template)

    loader = Loader()
    secrets = sources.secrets(loader)
    loader.set_vault_secrets(secrets)
    _activate(secrets)
    # The plugins' warnings about a source none of them can parse would bury the one line that
    # says what to do; they are shown when the source parses, as Ansible would show them.
    warnings = io.StringIO()
    with contextlib.redirect_stderr(warnings):
        manager = Manager(loader=loader, sources=resolved)
    if not manager.parsed:
        if "vault" in warnings.getvalue().lower():  # a plugin could not decrypt its source
            # Ansible's warnings name the file each plugin failed on (its Origin line).
            where = re.findall(r"^Origin: (/\S+)$", warnings.getvalue(), re.MULTILINE)
            raise vault_refusal(where[0] if where else str(sources))
        raise InputError(
            f"{sources} is not an Ansible inventory (no inventory plugin can parse it). Fix: pass "
            f"an inventory file (YAML or INI) or directory with -i; `ansible-inventory -i "
            f"{sources} --list` shows why each plugin refused it")
    sys.stderr.write(warnings.getvalue())
    return loader, manager, HostVariables(loader, manager,
                                          VariableManager(loader=loader, inventory=manager))


class HostVariables:
    """Each host's variables as ``VariableManager.get_vars(host=host, include_hostvars=False)``
    gives them outside a play, in its order of precedence, with the part a host's groups give
    computed once per set of groups. The manager computes that part again for every host, and
    cleans its (here empty) facts each time: most of a check's time on 1,000 hosts.
    tests/unit/test_check_cli.py compares both on every host of an inventory of many sources.
    """

    def __init__(self, loader: Any, manager: Any, variables: Any) -> None:
        self._loader = loader
        self._manager = manager
        # Outside a play and with no host, the manager gives what it adds last for every host
        # alike: the extra variables and the magic ones.
        self._common: dict[str, Any] = variables.get_vars(include_hostvars=False)
        self._by_groups: dict[tuple[str, ...], dict[str, Any]] = {}

    def _plugins(self, entities: list[Any]) -> dict[str, Any]:
        """The vars plugins' variables (group_vars/, host_vars/ beside the inventory)."""
        from ansible.errors import AnsibleError
        from ansible.vars.plugins import get_vars_from_inventory_sources

        try:
            found: dict[str, Any] = get_vars_from_inventory_sources(
                self._loader, self._manager._sources, entities, "task")
        except AnsibleError as error:
            if is_vault_error(error):
                raise vault_refusal(vault_origin(error) or "a group_vars or host_vars file"
                                    ) from error
            raise
        return found

    def _groups_part(self, groups: list[Any]) -> dict[str, Any]:
        from ansible import constants as C
        from ansible.inventory.helpers import get_group_vars
        from ansible.utils.vars import combine_vars

        key = tuple(group.name for group in groups)
        if key not in self._by_groups:
            every = self._manager.groups["all"]
            # VariableManager's entries; the two *_play ones read files beside a playbook,
            # which there is none of outside a play.
            entries: dict[str, Callable[[], Any]] = {
                "all_inventory": every.get_vars,
                "groups_inventory": lambda: get_group_vars(groups),
                "all_plugins_inventory": lambda: self._plugins([every]),
                "groups_plugins_inventory": lambda: self._plugins(groups),
            }
            data: dict[str, Any] = {}
            for entry in C.VARIABLE_PRECEDENCE:
                if entry in entries:
                    data = combine_vars(data, entries[entry]())
            self._by_groups[key] = data
        return self._by_groups[key]

    def __call__(self, host: Any) -> dict[str, Any]:
        from ansible.inventory.helpers import sort_groups
        from ansible.utils.vars import combine_vars

        groups = sort_groups([g for g in host.get_groups() if g.name != "all"])
        data = combine_vars(self._groups_part(groups), host.get_vars())
        data = combine_vars(data, self._plugins([host]))
        data["ansible_facts"] = {}  # the manager's namespaced facts: none before a play
        result: dict[str, Any] = combine_vars(data, self._common)
        return result


def _host_vars(loader: Any, variables: HostVariables, host: Any) -> TemplatedVars:
    return TemplatedVars(variables(host), loader, str(host.name))


def _view(loader: Any, manager: Any, variables: HostVariables,
          also: frozenset[str] = frozenset()) -> InventoryView:
    """The model's groups and the monitoring group, with the variables of their hosts and of the
    ``also`` hosts."""
    groups = {
        name: [host.name for host in manager.groups[name].get_hosts()]
        for name in (*GROUPS, MONITORING)
        if name in manager.groups
    }
    wanted = {host for members in groups.values() for host in members} | also
    hostvars = {host.name: _host_vars(loader, variables, host)
                for host in manager.get_hosts() if host.name in wanted}
    return InventoryView(groups=groups, hostvars=hostvars)


def require_cluster(view: InventoryView, source: Sources | str | Path) -> None:
    """Raise :class:`InputError` when no host is in one of the model's groups."""
    if not view.cluster_hosts():
        raise InputError(
            f"{source} has no host in any of the kafkaform groups ({', '.join(GROUPS)}). Fix: "
            "put the cluster's hosts in those groups (see inventory/lab/hosts.yml)")


@dataclass(frozen=True)
class InventoryHost:
    """One host of an inventory, as another engine (pyinfra) needs it: every group it belongs to
    (Ansible's implicit ``all`` and ``ungrouped`` left out) and its variables."""

    name: str
    groups: tuple[str, ...]
    variables: Mapping[str, Any]


def load_hosts(source: Sources | str | Path) -> tuple[InventoryView, list[InventoryHost]]:
    """:func:`load`'s view, and every host of the inventory in inventory order, from one parse."""
    loader, manager, variables = _parse(source)
    view = _view(loader, manager, variables)
    require_cluster(view, source)
    hosts = []
    for host in manager.get_hosts():
        groups = tuple(g.name for g in host.get_groups() if g.name not in ("all", "ungrouped"))
        hostvars = view.hostvars.get(host.name) or _host_vars(loader, variables, host)
        hosts.append(InventoryHost(host.name, groups, hostvars))
    return view, hosts


def load(source: Sources | str | Path) -> InventoryView:
    """The groups and host variables of an inventory file, directory or plugin config.

    Raises :class:`InputError` when ``source`` does not exist, is not an inventory, or has no
    host in the kafkaform groups (Ansible itself would only warn).
    """
    view = _view(*_parse(source))
    require_cluster(view, source)
    return view


def load_every_host(source: Sources | str | Path) -> InventoryView:
    """The model's groups and the variables of every host of the inventory (a host in no
    kafkaform group too: ``kafkaform verify`` may be pointed at one)."""
    loader, manager, variables = _parse(source)
    every = frozenset(host.name for host in manager.get_hosts())
    return _view(loader, manager, variables, also=every)


def select(source: Sources | str | Path, limit: str | None) -> tuple[InventoryView, list[str]]:
    """The inventory's view and the names of the hosts ``limit`` matches, read as Ansible reads
    ``--limit`` (every host when None), in inventory order; the view holds their variables too.
    """
    loader, manager, variables = _parse(source)
    warnings = io.StringIO()
    with contextlib.redirect_stderr(warnings):
        if limit is not None:
            manager.subset(limit)
        matched = [host.name for host in manager.get_hosts("all")]
    if matched:  # else the caller's one line says it: no host matches
        sys.stderr.write(warnings.getvalue())
    manager.subset(None)
    return _view(loader, manager, variables, also=frozenset(matched)), matched
