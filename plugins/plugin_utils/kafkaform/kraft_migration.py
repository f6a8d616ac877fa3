"""Migrating a running ZooKeeper-mode cluster to KRaft (KR-09): its states, what each Kafka node
runs in each, where a cluster stands, and which phases a run may take. Pure functions.

The states, in order (``kafka_kraft_migration``; playbooks/kraft_migration.yml sets it for each
phase it runs, the inventory names ``finalized`` once the migration is over):

  zookeeper      (unset) ZooKeeper mode; the controllers are declared but not installed
  controllers    the controllers run in migration mode beside ZooKeeper; brokers unchanged
  dual_write     the brokers run in migration mode: once every broker registered with the
                 quorum, the active controller copies ZooKeeper's metadata into the metadata log,
                 then writes both. The soak point: a rollback to ZooKeeper mode is possible
  kraft_brokers  the brokers run in KRaft mode; the controllers still write ZooKeeper, so a
                 rollback is still possible
  finalized      the controllers leave migration mode: KRaft only. ZooKeeper is no longer
                 written, and keeps its data until it is decommissioned. No way back

A node's state is read from the server.properties it runs with; a run moves the cluster one phase
at a time, each phase a rolling restart of one kind of node.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from .rules import cite
from .template_filters import parse_java_properties

STATES = ("zookeeper", "controllers", "dual_write", "kraft_brokers", "finalized")
#: The phases a run may take: each brings the cluster to the state of its name.
PHASES = STATES[1:]
#: Where a run without ``kraft_migration_phase`` stops: the cluster serves in dual write, and
#: the way back is still open.
SOAK_POINT = "dual_write"
#: The value of kafka_kraft_migration once the migration is over.
FINALIZED = "finalized"
#: The states in which the controllers run in migration mode (they read and write ZooKeeper).
CONTROLLERS_MIGRATING = ("controllers", "dual_write", "kraft_brokers")
#: The setting that puts a node in migration mode.
MIGRATION_KEY = "zookeeper.metadata.migration.enable"


@dataclass(frozen=True)
class NodeMode:
    """What one Kafka node runs, from the cluster's metadata mode and migration state."""

    #: A KRaft node (process.roles set): every controller, and the brokers in KRaft mode.
    kraft: bool
    #: It reads and writes ZooKeeper: ZooKeeper-mode brokers, and controllers migrating.
    zookeeper_client: bool
    #: zookeeper.metadata.migration.enable=true.
    migrating: bool
    #: It talks to the controllers' quorum (controller.quorum.voters, the CONTROLLER listener).
    knows_quorum: bool


def node_mode(controller: bool, metadata_mode: str, migration: str) -> NodeMode:
    """The mode of a controller (``controller``) or a broker of a cluster in ``metadata_mode``
    (the brokers' mode: zookeeper or kraft) at migration state ``migration``."""
    if controller:
        migrating = migration in CONTROLLERS_MIGRATING
        return NodeMode(kraft=True, zookeeper_client=migrating, migrating=migrating,
                        knows_quorum=True)
    kraft = metadata_mode == "kraft"
    migrating = migration == "dual_write"
    return NodeMode(kraft=kraft, zookeeper_client=not kraft, migrating=migrating,
                    knows_quorum=kraft or migrating)


def broker_state(server_properties: str) -> str:
    """A broker's state from its server.properties: zookeeper, dual_write, kraft, or absent."""
    if not server_properties.strip():
        return "absent"
    props = parse_java_properties(server_properties)
    if props.get("process.roles"):
        return "kraft"
    return "dual_write" if props.get(MIGRATION_KEY) == "true" else "zookeeper"


def controller_state(server_properties: str) -> str:
    """A controller's state from its server.properties: absent, migrating or kraft."""
    if not server_properties.strip():
        return "absent"
    props = parse_java_properties(server_properties)
    return "migrating" if props.get(MIGRATION_KEY) == "true" else "kraft"


@dataclass(frozen=True)
class Standing:
    """Where a cluster stands: the furthest state any node reached, and whether every node
    reached it (a phase cut short leaves it incomplete; running it again completes it)."""

    state: str
    complete: bool
    problem: str = ""
    #: The states the brokers' files name.
    brokers: frozenset[str] = frozenset()


def standing(brokers: Mapping[str, str], controllers: Mapping[str, str],
             pending: Collection[str] = (), stopped: Collection[str] = ()) -> Standing:
    """Where a cluster stands, from each broker's and controller's state (host -> state, read
    from its files). A node in ``pending`` still runs an older configuration than its files (a
    run stopped before its restart): the state its files name is not reached yet. A controller
    in ``stopped`` does not run (a rollback stopped it, or it failed): it counts as absent."""
    controllers = {h: "absent" if h in stopped else s for h, s in controllers.items()}
    found = _standing(brokers, controllers)
    if found.complete and any(h in pending for h in [*brokers, *controllers]):
        found = Standing(found.state, False, found.problem)
    return Standing(found.state, found.complete, found.problem, frozenset(brokers.values()))


def _standing(brokers: Mapping[str, str], controllers: Mapping[str, str]) -> Standing:
    b, c = set(brokers.values()), set(controllers.values())

    def mixed(what: str) -> Standing:
        detail = ", ".join(f"{h} {s}" for h, s in sorted({**brokers, **controllers}.items()))
        return Standing("", False, f"the brokers and controllers are in no state a migration "
                                   f"passes through ({what}: {detail}); kafkaform will not "
                                   f"guess, see README \"Migrating to KRaft\" ({cite('KR-09')})")

    if b <= {"zookeeper", "dual_write"} and c <= {"absent", "migrating"}:
        if b == {"zookeeper"} and c <= {"absent"}:
            return Standing("zookeeper", True)
        if "absent" in c or not c:
            # A controller is missing: the controllers phase is not done, whatever the brokers.
            return Standing("controllers", False)
        if b == {"zookeeper"}:
            return Standing("controllers", True)
        return Standing("dual_write", b == {"dual_write"})
    if b <= {"zookeeper"}:
        return mixed("controllers out of migration mode while the brokers use ZooKeeper")
    if b == {"kraft"}:
        if c == {"migrating"}:
            return Standing("kraft_brokers", True)
        if c <= {"migrating", "kraft"}:
            return Standing("finalized", c == {"kraft"})
        return mixed("brokers in KRaft mode without their controllers")
    if c != {"migrating"}:
        return mixed("brokers migrating without every controller in migration mode")
    if b <= {"dual_write", "kraft"}:
        return Standing("kraft_brokers", False)
    return mixed("brokers in ZooKeeper mode beside brokers in KRaft mode")


def phases_to_run(stand: Standing, phase: str, finalize: bool) -> tuple[list[str], str]:
    """The phases a run takes, in order, and why it refuses ("" when it does not).

    + phase: ``kraft_migration_phase``; empty runs every phase up to the soak point, or with
      ``finalize`` up to and including finalization
    + finalize: ``kraft_migration_finalize``, the one way into the irreversible phase
    """
    if stand.problem:
        return [], stand.problem
    if stand.state == "finalized" and stand.complete:
        return [], ""
    # The first phase to run: the one cut short, or the next.
    first = STATES.index(stand.state) + (1 if stand.complete else 0)
    if phase:
        if phase not in PHASES:
            return [], (f"kraft_migration_phase {phase!r} is not a phase; the phases in order: "
                        f"{', '.join(PHASES)}")
        wanted = STATES.index(phase)
        if wanted < first - 1 or (wanted == first - 1 and not stand.complete):
            return [], (f"the cluster is past phase {phase} (it stands at {stand.state}); going "
                        "back to ZooKeeper mode is playbooks/kraft_rollback.yml")
        if wanted > first:
            return [], (f"phase {phase} cannot run before phase {STATES[first]}: the cluster "
                        f"stands at {stand.state}{'' if stand.complete else ' (incomplete)'}; "
                        f"run with -e kraft_migration_phase={STATES[first]} first")
        chosen = [phase]
    else:
        last = STATES.index(FINALIZED if finalize else SOAK_POINT)
        chosen = list(STATES[first:last + 1])
    if FINALIZED in chosen and not finalize:
        return [], ("finalizing is irreversible: afterwards there is no way back to ZooKeeper "
                    "mode. Soak the cluster in KRaft mode first, then run with "
                    "-e kraft_migration_finalize=true")
    return chosen, ""


#: The steps of a rollback to ZooKeeper mode, in the order Kafka's documentation gives them.
ROLLBACK_STEPS = ("brokers_to_dual_write", "controllers_stopped", "zookeeper_cleared",
                  "brokers_to_zookeeper")


def rollback_steps(stand: Standing) -> tuple[list[str], str]:
    """The steps back to ZooKeeper mode from where a cluster stands, and why there are none
    ("" when it may go back)."""
    if stand.problem:
        return [], stand.problem
    if stand.state == "finalized":
        return [], ("the migration is finalized (or finalizing): the controllers no longer write "
                    "ZooKeeper, so there is no way back to ZooKeeper mode; finish it with "
                    "playbooks/kraft_migration.yml -e kraft_migration_finalize=true")
    if stand.state == "zookeeper":
        return [], ""
    if stand.brokers <= {"zookeeper"}:
        return ["controllers_stopped"], ""
    if stand.brokers == {"dual_write"} and stand.complete:
        return list(ROLLBACK_STEPS[1:]), ""
    # Some broker may still run in KRaft mode, or not yet in migration mode: every broker runs
    # in migration mode before the controllers stop.
    return list(ROLLBACK_STEPS), ""
