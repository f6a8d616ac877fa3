"""Securing a cluster built open, in place (SE-10): the steps, and which a run may take.

A cluster kafkaform built before TLS serves plaintext listeners and an unauthenticated ZooKeeper.
Switching all of it in one run would break the cluster while the restart rolls: a broker on the
TLS listeners cannot replicate from one still on plaintext, and a member that requires logins
refuses the members that do not log in yet. So the cluster moves through steps, one run each, set
by the cluster-wide ``kafka_security_migration``; each run may move every host one step, forward
or back, never more:

  open                   built by an earlier release: plaintext only, ZooKeeper anonymous
  plaintext_replication  TLS listeners added beside the plaintext one, brokers still replicate
                         over plaintext; ZooKeeper offers SASL, brokers log in; nothing required
  tls_replication        brokers replicate over TLS; Kafka's znodes get ACLs; ZooKeeper members
                         require each other's login
  secured                (``kafka_security_migration`` unset) no plaintext listener, ZooKeeper
                         enforces authentication

The step a host runs today is read from its configuration file; the step a run wants from the
context the role renders. Both functions here are pure.

ZooKeeper's TLS (SE-18) moves along steps of its own, since a cluster an earlier release secured
(SASL, no TLS on the ensemble) must not reopen its plaintext listeners to get there:

  plain       no TLS: the client port and the quorum speak plaintext
  offered     the secure client port serves TLS beside the plain one; the quorum ports accept
              TLS and plaintext (portUnification), members still dial each other in plaintext
  connecting  members dial each other over TLS, brokers connect to the secure client port; the
              quorum ports still accept plaintext from members not restarted yet
  required    (``kafka_zookeeper_tls_migration`` unset) the quorum speaks TLS only, the plain
              client port listens on loopback only, for the member's own probe

An open cluster takes them with ``kafka_security_migration`` (plaintext_replication offers TLS,
tls_replication connects over it); a cluster secured without them sets
``kafka_zookeeper_tls_migration`` to offered, then connecting, then unsets it.
"""

from __future__ import annotations

from .rules import cite
from .template_filters import parse_java_properties

#: The steps in order; ``kafka_security_migration`` names one of the middle two.
STEPS = ("open", "plaintext_replication", "tls_replication", "secured")
#: Values ``kafka_security_migration`` accepts: a middle step, or empty for the secured end.
MIGRATION_VALUES = ("", "plaintext_replication", "tls_replication")


#: ZooKeeper's TLS steps in order (SE-18); ``kafka_zookeeper_tls_migration`` names a middle one.
TLS_STEPS = ("plain", "offered", "connecting", "required")
TLS_MIGRATION_VALUES = ("", "offered", "connecting")
#: The TLS step each step of ``kafka_security_migration`` takes the ensemble to.
_TLS_STEP_OF = {"plaintext_replication": "offered", "tls_replication": "connecting",
                "": "required"}


def target_step(migration: str) -> str:
    """The step a run with ``kafka_security_migration`` = ``migration`` builds."""
    return migration or "secured"


def broker_step(server_properties: str) -> str:
    """The step of a broker from the server.properties it runs with."""
    props = parse_java_properties(server_properties)
    listeners = props.get("listeners", "")
    if "PLAINTEXT://" not in listeners:
        return "secured"
    if "BROKER://" not in listeners:
        return "open"
    # An open cluster's brokers named no inter-broker listener: Kafka's default is PLAINTEXT.
    inter = props.get("inter.broker.listener.name", "PLAINTEXT")
    return "plaintext_replication" if inter == "PLAINTEXT" else "tls_replication"


def tls_target_step(tls_migration: str, security_migration: str) -> str:
    """The TLS step of the ensemble a run builds: ``kafka_zookeeper_tls_migration`` when set,
    else the one ``kafka_security_migration``'s step implies."""
    return tls_migration or _TLS_STEP_OF.get(security_migration, "required")


def clients_use_tls(step: str) -> bool:
    """Whether brokers and probes reach the members over TLS at the ensemble's TLS ``step``."""
    return step in ("connecting", "required")


def member_tls_step(zoo_cfg: str) -> str:
    """The TLS step of a ZooKeeper member from the zoo.cfg it runs with."""
    props = parse_java_properties(zoo_cfg)
    if "secureClientPort" not in props:
        return "plain"
    if props.get("sslQuorum", "false") != "true":
        return "offered"
    return "connecting" if props.get("portUnification", "false") == "true" else "required"


def member_step(zoo_cfg: str) -> str:
    """The step of a ZooKeeper member from the zoo.cfg it runs with."""
    props = parse_java_properties(zoo_cfg)
    if "authProvider.sasl" not in props:
        return "open"
    if props.get("enforce.auth.enabled", "false") == "true":
        return "secured"
    if props.get("quorum.auth.learnerRequireSasl", "false") == "true":
        return "tls_replication"
    return "plaintext_replication"


def step_problem(host: str, file: str, running: str, wanted: str) -> str:
    """Why a run may not take ``host`` from step ``running`` to ``wanted`` ("" when it may)."""
    return _skipped(host, file, running, wanted, STEPS, "kafka_security_migration",
                    "securing the cluster in place", cite("SE-10"))


def tls_step_problem(host: str, file: str, running: str, wanted: str) -> str:
    """Why a run may not take member ``host`` from TLS step ``running`` to ``wanted``."""
    return _skipped(host, file, running, wanted, TLS_STEPS, "kafka_zookeeper_tls_migration",
                    "moving ZooKeeper to TLS", cite("SE-18"))


def member_problem(host: str, file: str, zoo_cfg: str, wanted: str, wanted_tls: str) -> str:
    """Why a run may not take a member running with ``zoo_cfg`` to authentication's step
    ``wanted`` and TLS's step ``wanted_tls``; authentication's steps are told first."""
    return step_problem(host, file, member_step(zoo_cfg), wanted) \
        or tls_step_problem(host, file, member_tls_step(zoo_cfg), wanted_tls)


def _skipped(host: str, file: str, running: str, wanted: str, steps: tuple[str, ...],
             variable: str, what: str, cited: str) -> str:
    distance = steps.index(wanted) - steps.index(running)
    if abs(distance) <= 1:
        return ""
    following = steps[steps.index(running) + (1 if distance > 0 else -1)]
    setting = "unset" if following == steps[-1] else following
    return (f"{host} runs at step {running} of {what} ({file}); this run would take it to "
            f"{wanted}, skipping a step that keeps the cluster serving. Run with {variable}: "
            f"{setting} first (README, \"Securing a cluster built open\"; {cited})")
