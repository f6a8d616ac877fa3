"""The ZooKeeper upgrade drill: an ensemble on the release before, upgraded under load (ZK-01,
ZK-13, ZK-15).

    .venv/bin/python benchmarks/zookeeper_upgrade.py -i <inventory> [--seconds 10]

The inventory's ensemble runs the catalog's ``zookeeper_previous`` (the lab built with
``-e zookeeper_version=<that release>``). ``playbooks/zookeeper.yml`` then upgrades it to the
catalog's release while Kafka's VerifiableProducer writes to the brokers (acks=all, idempotent,
kafka_drills.py's producer): one member at a time, the leader last, each restart gated on the
ensemble serving with one leader. At the end every member runs the catalog's release and serves
with one leader, and no acknowledged message is lost. Prints the phase times, the acknowledged
rate and longest wait against the steady state, and the counts; exits 1 on a loss or a failed
end state.
"""

from __future__ import annotations

import argparse
import sys

from kafka_drills import inventory_list, phases_under_load, playbook, sh

from kafkaform.catalog import CATALOG


def upgraded(inventory: str) -> bool:
    """Every member runs the catalog's ZooKeeper (its process loads that release's jars, and it
    says so) and the ensemble serves with one leader."""
    version = CATALOG.zookeeper.version
    members = inventory_list(inventory).get("zookeeper", {}).get("hosts", [])
    running, modes = 0, []
    for member in members:
        cmdline = sh(member, "tr '\\0' ' ' < /proc/$(systemctl show -p MainPID --value "
                             "zookeeper)/cmdline")
        said = sh(member, "/usr/local/sbin/zookeeper-4lw srvr 127.0.0.1:2181", check=False)
        running += f"/zookeeper-{version}/lib/" in cmdline and f"version: {version}-" in said
        modes += [line.split(": ", 1)[1] for line in said.splitlines()
                  if line.startswith("Mode: ")]
    print(f"members running ZooKeeper {version}: {running} of {len(members)}; modes {modes}")
    return running == len(members) > 0 and modes.count("leader") == 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-i", "--inventory", required=True)
    parser.add_argument("--seconds", type=float, default=10.0,
                        help="steady state before and after")
    parser.add_argument("--throughput", type=int, default=50, help="messages a second")
    args = parser.parse_args()
    ok = phases_under_load(args.inventory, "zookeeper-upgrade", [
        (f"members onto ZooKeeper {CATALOG.zookeeper.version}, one at a time, the leader last",
         lambda: playbook(args.inventory, "zookeeper.yml")),
    ], args.seconds, args.throughput, lambda hosts: upgraded(args.inventory))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
