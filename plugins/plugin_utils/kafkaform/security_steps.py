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
"""

from __future__ import annotations

from .rules import cite
from .template_filters import parse_java_properties

#: The steps in order; ``kafka_security_migration`` names one of the middle two.
STEPS = ("open", "plaintext_replication", "tls_replication", "secured")
#: Values ``kafka_security_migration`` accepts: a middle step, or empty for the secured end.
MIGRATION_VALUES = ("", "plaintext_replication", "tls_replication")


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
    distance = STEPS.index(wanted) - STEPS.index(running)
    if abs(distance) <= 1:
        return ""
    following = STEPS[STEPS.index(running) + (1 if distance > 0 else -1)]
    setting = "unset" if following == "secured" else following
    return (f"{host} runs at step {running} of securing the cluster in place ({file}); this run "
            f"would take it to {wanted}, skipping a step that keeps the cluster serving. Run "
            f"with kafka_security_migration: {setting} first (README, \"Securing a cluster "
            f"built open\"; {cite('SE-10')})")
