"""The KRaft controllers' quorum (KR-15, OP-12), decided once for both engines: how a node of a
dynamic quorum is formatted, whether a controller joins the voters after it starts, whether a
run may switch a running quorum's kind, and a controller's removal
(playbooks/remove_controller.yml, pyinfra's ``deploys.day_two.remove_controller``).

A static quorum's voters are every node's ``controller.quorum.voters``: fixed for the cluster's
life. A dynamic quorum (KIP-853,
https://cwiki.apache.org/confluence/display/KAFKA/KIP-853%3A+KRaft+Controller+Membership+Changes)
keeps its voters, each a node id and the directory id of its metadata log, in the metadata log.
A new cluster's controllers are formatted with the same first voters, whose directory ids are
derived from the cluster id and node id (every run computes the same, as it does the cluster
id). A controller added later is formatted without voters, starts as an observer and is added
once it has caught up; a controller leaves the voters before it stops. One change at a time,
each only while every other voter is caught up: the quorum keeps its majority throughout.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..model import BOOTSTRAP_CONTROLLERS, DYNAMIC_QUORUM, STATIC_QUORUM
from ..rules import cite

#: The setting that names the controller a removal takes out of the quorum.
REMOVE = "kafka_controller_remove_host"
#: The fewest voters a removal may leave (KR-01), unless the inventory allows a single one.
FEWEST_VOTERS = 3


def directory_id(cluster_id: str, node_id: int) -> str:
    """The directory id of a first voter's metadata log: a Kafka Uuid (16 bytes, base64url
    without padding) derived from the cluster id and the node id. Never one beginning with "-",
    which Kafka's tools would read as an option."""
    salt = 0
    while True:
        digest = hashlib.sha256(f"{cluster_id}/{node_id}/{salt}".encode()).digest()[:16]
        text = base64.urlsafe_b64encode(digest).decode().rstrip("=")
        if not text.startswith("-"):
            return text
        salt += 1


def first_voters(cluster: Mapping[str, Any]) -> str:
    """``id@host:port:directory,...`` of every controller: a new dynamic quorum's voters, the
    same on every controller it formats."""
    return ",".join(f"{c['node_id']}@{c['address']}:{c['port']}:"
                    f"{directory_id(str(cluster['cluster_id']), int(c['node_id']))}"
                    for c in cluster.get("controllers", ()))


def format_options(cluster: Mapping[str, Any], controller: bool) -> list[str]:
    """What the storage format adds for a node: a dynamic quorum's controller is formatted with
    the first voters until a quorum leader has written a controller's metadata log, else as one
    that joins."""
    if not cluster["dynamic_quorum"] or not controller:
        return []
    if cluster.get("quorum_formed"):
        return ["--no-initial-controllers"]
    return ["--initial-controllers", first_voters(cluster)]


@dataclass(frozen=True)
class QuorumPlan:
    """A node's part in its quorum's membership."""

    dynamic: bool = False
    #: Each controller's host and node id, and the hosts that are also brokers (combined).
    controllers: dict[str, int] = field(default_factory=dict)
    combined: list[str] = field(default_factory=list)
    #: Each controller's rack ("" without racks).
    racks: dict[str, str] = field(default_factory=dict)
    allow_single: bool = False
    #: A dynamic quorum's controller, after its start: join the voters once caught up.
    join_argv: list[str] = field(default_factory=list)
    #: Take a controller out of the voters (``--ids`` added): run on another controller.
    remove_argv: list[str] = field(default_factory=list)

    def as_vars(self) -> dict[str, Any]:
        return asdict(self)


def quorum_plan(cluster: Mapping[str, Any], admin: Sequence[str], controller: bool,
                timeout_s: float) -> QuorumPlan:
    """The node's QuorumPlan (``admin``: its admin helper's command line; ``timeout_s``: how
    long a join or removal may wait for the quorum, as a restart does)."""
    is_dynamic = bool(cluster["dynamic_quorum"])
    lag = ["--max-lag", str(int(cluster.get("metadata_max_lag") or 0)),
           "--wait", str(int(timeout_s))]
    return QuorumPlan(
        dynamic=is_dynamic,
        controllers={str(c["host"]): int(c["node_id"]) for c in cluster.get("controllers", ())},
        combined=[str(c["host"]) for c in cluster.get("controllers", ()) if c.get("combined")],
        racks={str(c["host"]): str(c.get("rack") or "") for c in cluster.get("controllers", ())},
        allow_single=bool(cluster.get("allow_single_controller")),
        join_argv=[*admin, "quorum-join", *lag] if is_dynamic and controller else [],
        remove_argv=[*admin, "quorum-remove", *lag] if is_dynamic and controller else [],
    )


@dataclass(frozen=True)
class ControllerRemoval:
    """One removal's decisions: refused (``problem``), or what the run does."""

    problem: str = ""
    host: str = ""
    node_id: int = 0
    #: The controller that asks the quorum to remove it: the first other one.
    runner: str = ""
    remove_argv: list[str] = field(default_factory=list)
    summary: str = ""

    def as_vars(self) -> dict[str, Any]:
        return asdict(self)


def controller_removal(named: Any, quorums: Mapping[str, Mapping[str, Any]]) -> ControllerRemoval:
    """The removal of the controller ``named`` (kafka_controller_remove_host), from the
    QuorumPlan vars of the controllers the run reaches, by host: the first of them that stays
    asks the quorum."""
    quorum: Mapping[str, Any] = next(iter(quorums.values()), asdict(QuorumPlan()))
    controllers: dict[str, int] = dict(quorum["controllers"])
    host = str(named or "").strip()
    rule = cite("OP-12")
    if not host:
        return ControllerRemoval(problem=f"no controller named: set {REMOVE} to the host of the "
                                         f"kafka_controller group to take out ({rule})")
    if host not in controllers:
        return ControllerRemoval(problem=(
            f"{host}: not a host of the kafka_controller group ({', '.join(controllers) or 'none'}"
            f"), so {REMOVE} cannot name it ({rule}). A broker leaves with "
            "playbooks/decommission.yml"))
    if not quorum["dynamic"]:
        return ControllerRemoval(problem=(
            f"{host}: the controllers' quorum is static (kafka_controller_quorum: "
            f"{STATIC_QUORUM}): its voters are fixed in every node's controller.quorum.voters, "
            f"and only a dynamic quorum changes them ({cite('KR-15')}). A new cluster takes "
            f"kafka_controller_quorum: {DYNAMIC_QUORUM}"))
    if host in quorum["combined"]:
        return ControllerRemoval(problem=(
            f"{host}: a combined node (broker and controller); removing its controller role is "
            f"not supported ({rule}). Decommission it as a broker first"))
    rest = sorted(h for h in controllers if h != host)
    if len(rest) < FEWEST_VOTERS and not quorum["allow_single"]:
        return ControllerRemoval(problem=(
            f"{host}: the quorum would keep {len(rest)} voter(s), fewer than {FEWEST_VOTERS}, "
            f"and lose its tolerance of a failed controller ({rule}, {cite('KR-01')}). Add a "
            "controller to the kafka_controller group and run site.yml first, then remove "
            f"{host}"))
    racks = [quorum["racks"].get(h, "") for h in rest]
    crowded = sorted({r for r in racks if r and racks.count(r) * 2 > len(rest)})
    if crowded:
        return ControllerRemoval(problem=(
            f"{host}: the {len(rest)} controllers that stay would put "
            f"{racks.count(crowded[0])} in rack {crowded[0]}, a majority: losing that rack "
            f"would lose the quorum ({rule}, {cite('KR-03')}). Remove a controller of rack "
            f"{crowded[0]} instead, or add one in another rack first"))
    runner = next((h for h in rest if h in quorums), "")
    if not runner:
        return ControllerRemoval(problem=(
            f"{host}: no other controller answered this run ({', '.join(rest)}), and one of "
            f"them asks the quorum ({rule}). Bring them back first"))
    node_id = controllers[host]
    return ControllerRemoval(
        host=host, node_id=node_id, runner=runner,
        remove_argv=[*quorums[runner]["remove_argv"], "--ids", str(node_id)],
        summary=(f"{host} (node {node_id}) leaves the controllers' voters once the other "
                 f"{len(rest)} are caught up; then its Kafka stops and is disabled. Its metadata "
                 f"log stays on disk. Take {host} out of the kafka_controller group afterwards"))


def controller_removal_vars(named: Any, quorums: Mapping[str, Mapping[str, Any]]
                            ) -> dict[str, Any]:
    """:func:`controller_removal` for the roles (the ``controller_removal`` filter)."""
    return controller_removal(named, quorums).as_vars()


def switch_problem(cluster: Mapping[str, Any], running: Mapping[str, str | None]) -> str:
    """Why a run must not write the quorum ``cluster`` declares over the one the nodes run
    (``running``: each Kafka node's server.properties today, by host): a static quorum cannot
    lose its voters, and a dynamic quorum cannot become static (KR-15)."""
    static_runs = sorted(h for h, text in running.items()
                         if text and "\ncontroller.quorum.voters=" in f"\n{text}")
    dynamic_runs = sorted(h for h, text in running.items()
                          if text and f"\n{BOOTSTRAP_CONTROLLERS}=" in f"\n{text}")
    rule = cite("KR-15")
    if cluster["dynamic_quorum"] and static_runs:
        return (f"{', '.join(static_runs)} run a static controller quorum "
                f"(controller.quorum.voters), but kafka_controller_quorum is {DYNAMIC_QUORUM}: "
                "the nodes would lose their voters. A running quorum becomes dynamic only by "
                "raising kraft.version, which cannot be undone and which kafkaform does not do "
                f"({rule}). Set kafka_controller_quorum: {STATIC_QUORUM}")
    if not cluster["dynamic_quorum"] and dynamic_runs:
        return (f"{', '.join(dynamic_runs)} run a dynamic controller quorum, but "
                f"kafka_controller_quorum is {STATIC_QUORUM}: a dynamic quorum never becomes "
                f"static again ({rule}). Set kafka_controller_quorum: {DYNAMIC_QUORUM}")
    return ""
