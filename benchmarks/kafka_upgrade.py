"""The Kafka upgrade drill: a cluster whose inventory raised kafka_broker_version, upgraded by an
ordinary run under load (OP-02; in KRaft mode KR-10, KR-12, KR-13).

    .venv/bin/python benchmarks/kafka_upgrade.py -i <inventory> [--engine ansible|pyinfra]
        [--seconds 10]

In KRaft mode, first reads every feature's finalized level from the cluster. Then runs
``playbooks/kafka.yml`` (or, with ``--engine pyinfra``, the deploy
``kafkaform.deploys.site.kafka``) while Kafka's VerifiableProducer writes to the brokers
(acks=all, idempotent, kafka_drills.py's producer): the controllers roll onto the new release
first, then the brokers, the active controller and the controller-elected broker last, each
restart gated on the cluster's health; then metadata.version is raised, and each feature the
inventory names in kafka_broker_feature_levels. In ZooKeeper mode (a 3.9 patch upgrade) the
brokers roll the same way, the controller-elected broker last.

At the end every node runs the new release and no acknowledged message is lost; in KRaft mode
metadata.version is also the newest the release supports, each named feature is at its level,
and every other feature (kraft.version above all) is where it was before. Prints the phase
times, the acknowledged rate and longest wait against the steady state, the levels before and
after and the counts; exits 1 on a loss or a failed end state.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kafka_drills import (
    deploy_brokers,
    inventory_list,
    kafka_nodes,
    phases_under_load,
    playbook,
    sh,
)

from kafkaform.catalog import CATALOG

FEATURES = "/usr/local/sbin/kafkaform-kafka --dry-run features"


def feature_levels(node: str) -> dict[str, Any]:
    """The helper's report on the features: levels as they are, and what a run would raise."""
    return dict(json.loads(sh(node, FEATURES)))


def upgraded(inventory: str, before: dict[str, str] | None) -> bool:
    """Every controller and broker runs the inventory's kafka_broker_version; in KRaft mode
    (``before``, the feature levels before the run) metadata.version is the newest that release
    supports, the named features are at their levels and every other feature where it was
    (KR-10, KR-13)."""
    data = inventory_list(inventory)
    hostvars = data["_meta"]["hostvars"]
    nodes = list(dict.fromkeys(kafka_nodes(data)))  # a combined node is in both groups
    version = str(hostvars[nodes[-1]].get("kafka_broker_version", CATALOG.kafka.version))
    named = {str(k): str(v) for k, v in
             (hostvars[nodes[-1]].get("kafka_broker_feature_levels") or {}).items()}
    running = {host: f"/kafka-{version}/libs/" in sh(
        host, "tr '\\0' ' ' < /proc/$(systemctl show -p MainPID --value kafka)/cmdline")
        for host in nodes}
    print(f"nodes running Kafka {version}: {sum(running.values())} of {len(nodes)}")
    if before is None:  # ZooKeeper mode: no feature levels
        return all(running.values())
    report = feature_levels(nodes[-1])
    after = report["levels"]
    raised = report["finalized"] == report["supported"] and \
        report["supported"].startswith(".".join(version.split(".")[:2]) + "-")
    # Every feature but metadata.version: a named one at its level, any other where it was (a
    # feature the old release did not have starts at 0, as Kafka leaves it).
    expected = {name: named.get(name, before.get(name, "0"))
                for name in {*before, *after, *named} if name != "metadata.version"}
    kept = {name: after.get(name) for name in expected} == expected
    print(f"metadata.version {report['finalized']} (newest supported {report['supported']})")
    print(f"feature levels before {before}; after {after}; expected {expected} besides "
          f"metadata.version: {'as expected' if kept else 'NOT as expected -> FAIL'}")
    return all(running.values()) and raised and kept


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-i", "--inventory", required=True)
    parser.add_argument("--engine", choices=["ansible", "pyinfra"], default="ansible")
    parser.add_argument("--seconds", type=float, default=10.0,
                        help="steady state before and after")
    parser.add_argument("--throughput", type=int, default=50, help="messages a second")
    args = parser.parse_args()
    data = inventory_list(args.inventory)
    kraft = bool(data.get("kafka_controller", {}).get("hosts"))
    before = feature_levels(kafka_nodes(data)[-1])["levels"] if kraft else None

    def upgrade() -> float:
        return (deploy_brokers(args.inventory, "kafkaform.deploys.site.kafka")
                if args.engine == "pyinfra" else playbook(args.inventory, "kafka.yml"))
    ok = phases_under_load(args.inventory, "upgrade", [
        (f"controllers, then brokers, onto the new release ({args.engine})"
         + ("; metadata.version and the named features raised" if kraft else ""), upgrade),
    ], args.seconds, args.throughput, lambda hosts: upgraded(args.inventory, before))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
