"""What every deploy shares: the inventory's model, a role's inputs as the role sees them, rendered
files, and the one rolling restart.

Each deploy follows its role's task files, with the same contexts (``kafkaform.contexts``) and
templates (``roles/<role>/templates/``), so a host converged by either engine is converged for the
other.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from io import BytesIO
from pathlib import Path
from typing import Any, Protocol

import gevent
from pyinfra.api.exceptions import DeployError
from pyinfra.api.host import Host
from pyinfra.context import host, state
from pyinfra.facts.deb import DebPackages
from pyinfra.operations import apt, files, python, server

from .. import inventory, secrets
from ..defaults import assemble
from ..model import InventoryView, build
from ..plans.files import Account, WritesFiles, resolve_secrets, with_secrets
from ..plans.hostread import service_stale_argv
from ..plans.restart_batches import BatchError, roll_batches
from ..render import render
from .facts import FileStates
from .hosts import INVENTORY


@cache
def _view(source: str) -> InventoryView:
    return inventory.load(source)


def inventory_view() -> InventoryView:
    """The inventory the current host came from, as the preflight and the model read it."""
    return _view(str(host.data.get(INVENTORY)))


@cache
def _cluster(source: str) -> dict[str, Any]:
    return build(_view(source)).to_dict()


def cluster() -> dict[str, Any]:
    """The cluster model: ``groups | kafkaform.platform.cluster(hostvars)`` in a role."""
    return _cluster(str(host.data.get(INVENTORY)))


def host_variables(of: Host) -> dict[str, Any]:
    """Every variable the inventory gives the host ``of``."""
    found: dict[str, Any] = of.data.dict()  # type: ignore[no-untyped-call]  # untyped in pyinfra
    return found


def role_settings(role: str, *also: str, of: Host | None = None) -> dict[str, Any]:
    """The inputs of ``role`` on the host ``of`` (the current host by default) as the
    ``kafkaform.platform.role_settings`` lookup hands them to the role's context inside the role:
    every name the role's argument spec declares, from the inventory or else the role's defaults,
    templated; and the ``also`` names the inventory sets."""
    target = host if of is None else of  # `of or host` would ask the host proxy for its length
    return assemble((role, *also), host_variables(target))


def secret(name: str) -> str:
    """The lookup ``kafkaform.platform.secret``: the cluster's secret ``name``, from the inventory
    or the control node's secrets directory."""
    given = {k: host.data.get(k) for k in secrets.SETTINGS if host.data.get(k) is not None}
    return secrets.secret(name, given)


#: Each member's context, built once per run (role, host name): every member's deploy needs them
#: all for its rolling restart, which would otherwise build N contexts on each of N hosts.
_MEMBER_CONTEXTS: dict[tuple[str, str], dict[str, Any]] = {}


def member_contexts(role: str, members: Sequence[Host], own: dict[str, Any],
                    build: Callable[[Host], dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Host name to context of each of ``members``: ``own`` for the current host, ``build(m)``
    for another, once per run."""
    _MEMBER_CONTEXTS[(role, host.name)] = own
    for member in members:
        if (role, member.name) not in _MEMBER_CONTEXTS:
            _MEMBER_CONTEXTS[(role, member.name)] = build(member)
    return {member.name: _MEMBER_CONTEXTS[(role, member.name)] for member in members}


def group_hosts(group: str) -> list[Host]:
    """Every host of ``group`` in the inventory, ``--limit`` or not: a play's ``groups[group]``."""
    return list(state.inventory.get_group(group, default=[]))


def play_hosts(group: str) -> list[Host]:
    """The hosts of ``group`` this run deploys to (``--limit`` applied), in inventory order: a
    play's ``ansible_play_hosts``."""
    active = set(state.activated_hosts) if state.activated_hosts else None
    return [h for h in state.inventory.get_group(group, default=[])
            if active is None or h in active]


class Planned(Protocol):
    """An operation as the deploys weigh it: whether it changes the host in this run."""

    @property
    def will_change(self) -> bool: ...


@dataclass(frozen=True)
class Unchanged:
    """A file already as wanted, for which no operation is planned."""

    will_change: bool = False


def _put(content: bytes, dest: str, user: str, group: str, mode: str) -> Planned:
    """``files.put`` of ``content``, planned only when the file differs: the states of every
    file in ``dest``'s directory come from one command (FileStates), where ``files.put`` asks
    two per file, so a run that changes nothing costs a command per directory, not two per file.
    """
    directory, name = dest.rsplit("/", 1)
    found = host.get_fact(FileStates, path=directory or "/").get(name)
    if found == (int(mode, 8), user, group, hashlib.sha1(content).hexdigest()):
        return Unchanged()
    return files.put(name=f"Write {dest}", src=BytesIO(content), dest=dest, user=user,
                     group=group, mode=mode, create_remote_dir=False)


def put_rendered(template: str, variables: Mapping[str, Any], dest: str, *, user: str = "root",
                 group: str = "root", mode: str = "644") -> Planned:
    """``ansible.builtin.template``: ``template`` (a path ``kafkaform.plans.files.template``
    gives) rendered with ``variables``.

    Like Ansible's template module, a missing parent directory is an error, not created.
    """
    return _put(render(template, variables).encode(), dest, user, group, mode)


def put_content(content: str, dest: str, *, user: str = "root", group: str = "root",
                mode: str = "644") -> Planned:
    """``ansible.builtin.copy`` with ``content``."""
    return _put(content.encode(), dest, user, group, mode)


def planned_bytes(item: Mapping[str, Any], variables: Mapping[str, Any]) -> bytes:
    """The bytes ``install_files`` writes for one item of a role's plan: its template rendered
    with ``variables``, the file it names, or its content."""
    if item.get("template") is not None:
        return render(str(item["template"]), {**variables, **(item.get("vars") or {})}).encode()
    if item.get("src") is not None:
        return Path(item["src"]).read_bytes()
    return str(item["content"]).encode()


def install_planned(items: Iterable[Mapping[str, Any]],
                    variables: Mapping[str, Any]) -> dict[str, Planned]:
    """The module ``kafkaform.platform.install_files`` on a role's planned items (a plan's
    ``as_task_item``s, secrets filled in by ``with_secrets``): each file written only where its
    content, owner, group or mode differ. Returns each destination's operation."""
    return {str(item["dest"]): _put(planned_bytes(item, variables), str(item["dest"]),
                                    str(item["owner"]), str(item["group"]),
                                    str(item["mode"]).lstrip("0") or "0")
            for item in items}


def install_secret_files(plan: WritesFiles, role: str, variables: Mapping[str, Any],
                         settings: Mapping[str, Any]) -> dict[str, Planned]:
    """A plan's secret files, their secrets filled in as the role's task fills them in (the
    ``kafkaform.platform.secret`` lookup given the plan), in the variable ``<role>_secrets`` its
    templates read. Returns each destination's operation."""
    fields = plan.as_vars()
    values = resolve_secrets(fields, secret, settings.__getitem__)
    return install_planned(with_secrets(fields["secret_files"], values),
                           {**variables, f"{role}_secrets": values})


def create_account(account: Account, what: str) -> None:
    """A plan's service account: its group, then its user without login or home of its own."""
    server.group(name=f"Create the {account.group} group", group=account.group, system=True)
    server.user(name=f"Create the {account.user} user, {what}", user=account.user,
                group=account.group, system=True, shell=account.shell, home=account.home,
                create_home=False, ensure_home=False, comment=account.comment)


def make_directories(directories: Iterable[Mapping[str, str]]) -> None:
    """A context's ``directories`` (``contexts.service_directories``), each with its owner, group
    and mode, as the roles make them with ``install_files``."""
    for made in directories:
        files.directory(name=f"Create {made['path']}", path=made["path"], user=made["owner"],
                        group=made["group"], mode=made["mode"].lstrip("0"))


def install_packages(name: str, packages: Sequence[str], cache_time: int,
                     no_recommends: bool = False, java: bool = False) -> None:
    """``ansible.builtin.apt`` with ``update_cache`` and ``cache_valid_time``, asked only when a
    package is missing, as the roles ask it (pyinfra would also count the lists' refresh as a
    change). ``java``: the package set holds the JRE, whose man page directory comes first."""
    installed = host.get_fact(DebPackages)
    if all(package in installed for package in packages):
        return
    if java:
        # Minimal images drop /usr/share/man; the JRE's postinst then fails to register its man
        # page.
        files.directory(name="Create the man page directory the JRE package writes to",
                        path="/usr/share/man/man1", user="root", group="root", mode="755")
    apt.packages(name=name, packages=list(packages), update=True, cache_time=cache_time,
                 no_recommends=no_recommends)


#: By host, the files an earlier deploy of this run changes: a later deploy restarts a service
#: that reads one, which its own plan cannot see (the pipeline's job reads the Spark node's).
_CHANGING: dict[str, set[str]] = {}


def mark_changing(paths: Iterable[str]) -> None:
    """Record that this run changes ``paths`` on the current host."""
    _CHANGING.setdefault(host.name, set()).update(paths)


def changing(paths: Iterable[str]) -> bool:
    """Whether an earlier deploy of this run changes one of ``paths`` on the current host."""
    return not _CHANGING.get(host.name, set()).isdisjoint(paths)


def will_change(*operations: Planned) -> bool:
    """Whether any of ``operations`` changes the host in this run (known when the deploy is
    planned, before anything runs)."""
    return any(operation.will_change for operation in operations)


@dataclass(frozen=True)
class Roll:
    """One rolling restart, as ``roles/rolling_restart`` takes it: ``service`` on ``members`` (in
    their order), each restarted only when it runs an older configuration than ``restart_files``
    at the time of the roll; ``gate_argv`` must pass on the first member before the first restart,
    ``health_argv`` on each member after its own. Last go a member whose ``last_probe_argv``
    prints a match of ``last_pattern`` (the ZooKeeper leader), and the member whose id in
    ``member_ids`` the gate's JSON answer gives under ``last_key`` (the Kafka controller);
    ``after_argv`` runs on the first member once the roll is done; with a ``parallelism`` above 1
    the members go in batches (see the fields). ``gate_skips`` names, per
    member, an argument the gate leaves out while that member is pending: a member that holds no
    data need not be healthy before its own restart (a Spark worker its stale configuration
    keeps out)."""

    service: str
    rule: str
    members: tuple[str, ...]
    restart_files: Mapping[str, Sequence[str]]
    gate_argv: Sequence[str]
    health_argv: Sequence[str]
    timeout_s: float
    last_probe_argv: Mapping[str, Sequence[str]] = field(default_factory=dict)
    last_pattern: str = ""
    last_key: str = ""
    member_ids: Mapping[str, str] = field(default_factory=dict)
    after_argv: Sequence[str] = ()
    delay_s: float = 2.0
    gate_skips: Mapping[str, str] = field(default_factory=dict)
    #: How many members may restart at once; above 1, in the batches
    #: kafkaform.plans.restart_batches makes of ``batch_argv``'s answer (OP-04), by ``racks``.
    parallelism: int = 1
    batch_argv: Sequence[str] = ()
    racks: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Ran:
    """What a command run on a host at execution time did."""

    ok: bool
    stdout: str
    stderr: str

    @property
    def said(self) -> str:
        return "; ".join((self.stdout + "\n" + self.stderr).split("\n")).strip("; ")


def run_on(name: str, argv: Sequence[str], stdin: str | None = None) -> Ran:
    """``argv`` on the inventory host ``name``, now (inside an operation's function), with
    ``stdin`` as its standard input when given."""
    target = state.inventory.get_host(name)
    given = {} if stdin is None else {"_stdin": stdin}
    ok, output = target.run_shell_command(shlex.join(argv), _sudo=target.data.get("_sudo", False),
                                          **given)
    return Ran(bool(ok), output.stdout, output.stderr)


def restart_if_stale(service: str, restart_files: Sequence[str]) -> bool:
    """At execution time, on the current host: restart ``service`` when it runs an older
    configuration than ``restart_files`` (the roles' ``service_stale`` check, OP-03); True when
    it did."""
    ran = run_on(host.name, service_stale_argv(service, restart_files))
    if not ran.ok:
        raise DeployError(f"{host.name}: cannot tell whether {service} is stale: {ran.said}")
    if json.loads(ran.stdout)["stale"]:
        ran = run_on(host.name, ["systemctl", "restart", f"{service}.service"])
        if not ran.ok:
            raise DeployError(f"{host.name}: restarting {service} failed: {ran.said}. See "
                              f"`journalctl -u {service}`.")
        return True
    return False


def until_ok(name: str, argv: Sequence[str], timeout_s: float, delay_s: float) -> Ran:
    """``argv`` on ``name`` every ``delay_s`` until it succeeds or ``timeout_s`` has passed."""
    deadline = time.monotonic() + timeout_s
    while True:
        ran = run_on(name, argv)
        if ran.ok or time.monotonic() >= deadline:
            return ran
        time.sleep(delay_s)


def wait_until_ok(node: str, argv: Sequence[str], timeout_s: float, delay_s: float,
                  failure: str, rules: str) -> None:
    """``until_ok``, and a stop of the deploy saying ``failure`` (what was still not so when
    ``timeout_s`` had passed), what ``argv`` said last and the ``rules`` that require it."""
    ran = until_ok(node, argv, timeout_s, delay_s)
    if not ran.ok:
        raise DeployError(f"{node}: {failure} after {timeout_s:g} s: {ran.said} ({rules})")


def _stale_members(roll: Roll) -> list[str]:
    pending = []
    for member in roll.members:
        ran = run_on(member, service_stale_argv(roll.service, roll.restart_files[member]))
        if not ran.ok:
            raise DeployError(f"{member}: cannot tell whether {roll.service} is stale: {ran.said}")
        if json.loads(ran.stdout)["stale"]:
            pending.append(member)
    return pending


def _roll(roll: Roll) -> None:
    """Runs at execution time, once: the files are written on every member by then."""
    pending = _stale_members(roll)
    if not pending:
        return
    first = roll.members[0]
    skipped = {roll.gate_skips[m] for m in pending if m in roll.gate_skips}
    gate = until_ok(first, [a for a in roll.gate_argv if a not in skipped], roll.timeout_s,
                    roll.delay_s)
    if not gate.ok:
        # Restarting a member of an unhealthy cluster can cost its quorum or its data: stop first.
        raise DeployError(
            f"{roll.service}: the cluster was not healthy within {roll.timeout_s:g} s, so no "
            f"member was restarted ({', '.join(pending)} still need it). "
            f"{roll.gate_argv[0].rsplit('/', 1)[-1]} says: {gate.said}. "
            f"Bring the member that is down back, then run again: the restart is still pending. "
            f"[{roll.rule}]")
    last = {member for member, argv in roll.last_probe_argv.items()
            if re.search(roll.last_pattern, run_on(member, argv).stdout)}
    if roll.last_key:
        answer = json.loads(gate.stdout).get(roll.last_key)
        last |= {m for m, i in roll.member_ids.items() if str(i) == str(answer)}
    order = [m for m in pending if m not in last] + [m for m in pending if m in last]
    for batch in _batches(roll, order, last):
        _restart_batch(roll, batch)
    if roll.after_argv:
        ran = run_on(first, roll.after_argv)
        if not ran.ok:
            raise DeployError(f"{first}: {shlex.join(roll.after_argv)} failed: {ran.said}")


def _batches(roll: Roll, order: list[str], last: set[str]) -> list[list[str]]:
    """The roll's restarts in batches (roles/rolling_restart does the same with the
    restart_batches filter): each member alone unless the roll may restart several at once."""
    answer = None
    if roll.parallelism > 1 and roll.batch_argv and len(order) > 1:
        ran = run_on(roll.members[0], roll.batch_argv)
        if not ran.ok:
            raise DeployError(f"{roll.members[0]}: cannot read where the partitions' replicas "
                              f"are: {ran.said} [OP-04]")
        answer = json.loads(ran.stdout)
    try:
        return roll_batches(order, last, roll.member_ids, roll.racks, roll.parallelism, answer)
    except BatchError as error:
        raise DeployError(f"{roll.service}: no member was restarted: {error}") from error


def _restart(roll: Roll, member: str, again: bool) -> Ran:
    """``roll.service`` restarted on ``member``; ``again``: one more start when the first fails,
    as a Kafka controller's unit does on purpose when Kafka dropped its registration with the
    quorum (KR-11)."""
    restart = ["systemctl", "restart", f"{roll.service}.service"]
    ran = run_on(member, ["systemctl", "daemon-reload"])
    if ran.ok:
        ran = run_on(member, restart)
        if not ran.ok and again:
            time.sleep(roll.delay_s)
            ran = run_on(member, restart)
    return ran


def _restart_batch(roll: Roll, batch: list[str]) -> None:
    """Restart a batch's members together (one stop and start for the batch), then wait until
    the health command passes, once. Larger batches hold brokers only, whose health command
    checks the whole cluster: it passes only once every member of the batch is back. A
    controller restarts alone."""
    restarts = [gevent.spawn(_restart, roll, m, len(batch) == 1) for m in batch]
    gevent.joinall(restarts)
    for member, restart in zip(batch, restarts, strict=True):
        ran = restart.value
        if ran is None or not ran.ok:
            said = ran.said if ran is not None else str(restart.exception)
            raise DeployError(f"{member}: restarting {roll.service} failed: {said} "
                              f"[{roll.rule}]")
    ran = until_ok(batch[0], roll.health_argv, roll.timeout_s, roll.delay_s)
    if not ran.ok:
        raise DeployError(f"{', '.join(batch)}: {roll.service} did not come back healthy "
                          f"within {roll.timeout_s:g} s after the restart: {ran.said} "
                          f"[{roll.rule}]")


def roll_restarts(roll: Roll, might_be_stale: bool) -> None:
    """Add the rolling restart to the deploy, on the current host when it might need a restart
    (its files change in this run, or its service predates them already); it runs once, after
    every earlier operation, and asks each member again before touching any."""
    if might_be_stale:
        python.call(name=f"Roll the restart of {roll.service} through the members [{roll.rule}]",
                    function=_roll, roll=roll, _run_once=True)
