"""The pieces of a plan that both engines execute the same way: files and the service account."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ..accounts import account_as_declared
from ..paths import role_dir


@dataclass(frozen=True)
class PlannedFile:
    """One file a role writes, as the module ``kafkaform.platform.install_files`` takes it.

    Exactly one source: ``template`` (a role's template as :func:`template` names it, rendered
    with the role's context), ``src`` (a file of the role's ``files/``), ``content``, or
    ``secret``: the plan's name of a secret, written as its one line by :func:`with_secrets`
    (never in a plan).
    ``restarts``: the service reads it only at start, so it restarts when the file changed after
    it started (OP-03).
    """

    dest: str
    template: str | None = None
    src: str | None = None
    content: str | None = None
    secret: str | None = None
    #: Variables added for this file's template only (a unit's daemon).
    vars: dict[str, Any] | None = None
    #: A command of the host that must accept a changed file before it replaces the old one
    #: (``%s``: the new file), as ``install_files`` runs it; pyinfra has no such hook.
    validate: str | None = None
    owner: str = "root"
    group: str = "root"
    mode: str = "0640"
    restarts: bool = False

    def as_task_item(self) -> dict[str, Any]:
        """The item ``install_files`` takes: its source, dest, owner, group, mode and check."""
        return {key: value for key, value in asdict(self).items()
                if value is not None and key != "restarts"}


@dataclass(frozen=True)
class Account:
    """A service's system user and group, without login and without a home of its own."""

    user: str
    group: str
    home: str
    #: None leaves the account's comment as it is.
    comment: str | None
    shell: str = "/usr/sbin/nologin"

    def in_place(self, passwd_entry: str, group_entry: str) -> bool:
        """Whether ``getent``'s answers show the account as declared (kafkaform.accounts)."""
        return account_as_declared(passwd_entry, group_entry, self.home, self.shell, self.comment)


def with_secrets(items: list[dict[str, Any]], secrets: Mapping[str, str]) -> list[dict[str, Any]]:
    """``install_files`` items with each ``secret`` source replaced by its value, one line: what
    both engines hand the host, inside a step that neither logs nor diffs."""
    return [{**{k: v for k, v in item.items() if k != "secret"},
             "content": f"{secrets[item['secret']]}\n"} if item.get("secret") else item
            for item in items]


def resolve_secrets(plan: Mapping[str, Any], cluster_secret: Callable[[str], str],
                    role_input: Callable[[str], Any]) -> dict[str, str]:
    """The values a plan's secret files read, by the names its templates use: each of the plan's
    ``secrets`` is a cluster secret (kafkaform.secrets), each of its ``secret_inputs`` a role
    input that holds a password (from the inventory, kept in Ansible Vault). The one way both
    engines fill in a plan's secrets: the ``kafkaform.platform.secret`` lookup given a plan, and
    the deploys' ``install_secret_files``."""
    return {**{name: cluster_secret(str(secret)) for name, secret in plan["secrets"].items()},
            **{name: str(role_input(str(setting)))
               for name, setting in (plan.get("secret_inputs") or {}).items()}}


def template(role: str, name: str) -> str:
    """The template ``roles/<role>/templates/<name>``, by the absolute path both engines read it
    from: the Ansible roles through ``install_files``, the deploys through kafkaform.render.
    ``name`` is laid out like the file it writes (``etc/kafka/server.properties.j2``)."""
    return str(role_dir(role) / "templates" / name)


def planned_paths(files: Iterable[PlannedFile],
                  directories: Iterable[Mapping[str, Any]] = ()) -> list[str]:
    """Every directory and file a role's install_files tasks write, for its host read to ask
    their state (kafkaform.plans.hostread.path_states)."""
    return [*(posixpath.normpath(str(d["path"])) for d in directories), *(f.dest for f in files)]


class WritesFiles:
    """A plan with ``files`` and ``secret_files``, handed to a role as plain data."""

    files: list[PlannedFile]
    secret_files: list[PlannedFile]

    def as_vars(self) -> dict[str, Any]:
        """The plan as the role reads it: plain data, files as install_files items."""
        found: dict[str, Any] = asdict(self)  # type: ignore[call-overload]  # a dataclass
        found["files"] = [f.as_task_item() for f in self.files]
        found["secret_files"] = [f.as_task_item() for f in self.secret_files]
        return found
