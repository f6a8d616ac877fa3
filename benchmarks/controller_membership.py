"""KRaft controllers changed on a dynamic quorum (KR-15, OP-12) under acks=all load: a controller's
host replaced under the same node id, a controller removed, then taken out of the inventory.

    kafkaform lab up --inventory INV      # 4 controllers, kafka_controller_quorum: dynamic
    ansible-playbook -i INV playbooks/site.yml
    .venv/bin/python benchmarks/controller_membership.py -i INV [--seconds 20]

INV is a KRaft inventory whose kafka_controller group lists 4 controllers (the fourth added to a
running 3-voter quorum by site.yml, which is how a controller joins). Under one producer (Kafka's
VerifiableProducer, acks=all and idempotent, kafka_drills.py's):
- replace: the second controller's host "dies" (its Kafka stopped, its metadata log emptied, as a
  new machine's disk); ``kafka.yml`` formats it without voters, starts it, and it joins under the
  same node id with a new directory, the old directory leaving the voters;
- remove: ``remove_controller.yml`` takes the first controller out of the voters, then stops it;
- forget: the first controller taken out of a copy of the inventory, ``kafka.yml`` on it rewrites
  each node's quorum file and restarts no node (every Kafka's main PID unchanged);
- rerun: ``kafka.yml`` again changes nothing.
Printed: each phase's time, acknowledged rate and longest wait; the voters before and after; the
checks: the voters are the 3 controllers left with the replaced one's new directory, every voter
caught up, no node restarted by the forget, 0 changed on the rerun; then the no-loss count.
Exits 1 when any of this fails. Bounded: four playbook runs, ``--seconds`` of steady state
around them.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from kafka_drills import ADMIN_CONFIG, ROOT, inventory_list, main_pids, phases_under_load, sh

METADATA_DIR = "/var/lib/kafka/metadata"
QUORUM = ("/opt/kafkaform/kafka/bin/kafka-metadata-quorum.sh --bootstrap-controller {boot} "
          f"--command-config {ADMIN_CONFIG} describe --status")


def voters(controller: str, boot: str) -> list[tuple[int, str]]:
    out = sh(controller, QUORUM.format(boot=boot) + " 2>/dev/null")
    found = re.search(r"CurrentVoters:\s*(\[.*\])", out)
    listed = json.loads(found.group(1)) if found else []
    return sorted((int(v["id"]), str(v["directoryId"])) for v in listed)


def ansible(inventory: str, playbook: str, *extra: str) -> tuple[float, str]:
    """A playbook's duration and its recap (stops the drill when it fails)."""
    start = time.monotonic()
    run = subprocess.run([str(Path(sys.executable).with_name("ansible-playbook")), "-i",
                          inventory, str(ROOT / "playbooks" / playbook), *extra],
                         capture_output=True, text=True, check=False, cwd=ROOT)
    if run.returncode != 0:
        print("\n".join((run.stdout + run.stderr).splitlines()[-60:]))
        run.check_returncode()
    return time.monotonic() - start, run.stdout[run.stdout.rfind("PLAY RECAP"):]


def without(inventory: str, host: str, into: Path) -> str:
    """A copy of ``inventory`` (a directory with hosts.yml) without ``host``."""
    copy = into / "inventory"
    subprocess.run(["cp", "-r", inventory, str(copy)], check=True)
    hosts = yaml.safe_load((copy / "hosts.yml").read_text())
    del hosts["all"]["children"]["kafka_controller"]["hosts"][host]
    (copy / "hosts.yml").write_text(yaml.safe_dump(hosts))
    return str(copy)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-i", "--inventory", required=True)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--throughput", type=int, default=50)
    args = parser.parse_args()
    data = inventory_list(args.inventory)
    controllers = list(data["kafka_controller"]["hosts"])
    if len(controllers) != 4:
        raise SystemExit(f"{args.inventory}: 4 controllers wanted, {len(controllers)} found")
    port = data["_meta"]["hostvars"][controllers[0]].get("kafka_controller_port", 9094)
    first, second, *rest = controllers
    nodes = [*controllers, *data["kafka_broker"]["hosts"]]
    said: dict[str, Any] = {"before": voters(second, f"{second}:{port}")}
    work = Path(tempfile.mkdtemp(prefix="kf-membership-"))
    smaller = without(args.inventory, first, work)

    def replace() -> float:
        sh(second, f"systemctl stop kafka && rm -rf {METADATA_DIR}/*")
        seconds, said["replace"] = ansible(args.inventory, "kafka.yml")
        return seconds

    def remove() -> float:
        seconds, said["remove"] = ansible(args.inventory, "remove_controller.yml", "-e",
                                          f"kafka_controller_remove_host={first}")
        return seconds

    def forget() -> float:
        said["pids"] = main_pids([n for n in nodes if n != first])
        seconds, said["forget"] = ansible(smaller, "kafka.yml")
        said["pids_after"] = main_pids([n for n in nodes if n != first])
        return seconds

    def rerun() -> float:
        seconds, said["rerun"] = ansible(smaller, "kafka.yml")
        return seconds

    def check(_hosts: list[str]) -> bool:
        after = voters(second, f"{second}:{port}")
        said["after"] = after
        ids = {v[0] for v in after}
        old = dict(said["before"])
        checks = {
            "the voters are the 3 controllers left": ids == {
                int(data["_meta"]["hostvars"][h]["kafka_node_id"]) for h in [second, *rest]},
            "the replaced controller has a new directory": all(
                d != old.get(i) for i, d in after
                if i == int(data["_meta"]["hostvars"][second]["kafka_node_id"])),
            "the forget restarted no node": said["pids"] == said["pids_after"],
            "the rerun changed nothing": not re.search(r"changed=[1-9]", said["rerun"]),
            "the removed controller's Kafka is stopped": sh(
                first, "systemctl is-active kafka", check=False).strip() != "active",
        }
        for name, passed in checks.items():
            print(f"membership check: {name}: {'ok' if passed else 'FAILED'}")
        return all(checks.values())

    passed = phases_under_load(args.inventory, "membership", [
        (f"replace {second}", replace), (f"remove {first}", remove),
        (f"forget {first}", forget), ("rerun", rerun)], args.seconds, args.throughput, check)
    print(f"membership voters before: {said['before']}")
    print(f"membership voters after: {said.get('after')}")
    for phase in ("replace", "remove", "forget", "rerun"):
        recap = " ".join(line.split(":", 1)[0].strip() + ":" + re.sub(
            r".*(changed=\d+).*", r"\1", line) for line in said.get(phase, "").splitlines()[1:]
            if "changed=" in line)
        print(f"membership {phase} recap: {recap}")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
