"""KRaft controllers changed on a dynamic quorum (KR-15, OP-12) under acks=all load: a controller
removed and forgotten by the inventory, another's host replaced under its node id, and a new,
empty host added back.

    kafkaform lab up --inventory INV      # 4 controllers, kafka_controller_quorum: dynamic
    ansible-playbook -i INV playbooks/site.yml
    .venv/bin/python benchmarks/controller_membership.py -i INV [--seconds 20]

INV is a KRaft inventory whose kafka_controller group lists 4 controllers, all voters, the last
one in a rack another controller shares (so that 3 stay spread over 3 racks, KR-03). Under one
producer (Kafka's VerifiableProducer, acks=all and idempotent, kafka_drills.py's):
- remove: ``remove_controller.yml`` takes the last controller out of the voters, then stops it;
- forget: the same controller taken out of a copy of the inventory, ``kafka.yml`` on it rewrites
  each node's quorum file and restarts no node (every running Kafka's main PID unchanged);
- replace: the second controller's host "dies" (its Kafka stopped, its metadata log emptied, as
  a new machine's disk); ``kafka.yml`` on the copy formats it without voters and starts it: its
  old directory leaves the voters, then the new one joins under the same node id;
- add: the last controller's metadata log emptied (a new, empty host), ``kafka.yml`` on the whole
  inventory formats it without voters, starts it, and it joins once caught up;
- rerun: ``kafka.yml`` again changes nothing.
Printed: each phase's time, acknowledged rate and longest wait; the voters before and after; the
checks: the 4 controllers are voters again, the replaced and the added one under new directories,
the removed one stopped after the removal, no node restarted by the forget, 0 changed on the
rerun; then the no-loss count. Exits 1 when any of this fails. Bounded: five playbook runs,
``--seconds`` of steady state around them.
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
from _podman import main_pids
from kafka_drills import ADMIN_CONFIG, ROOT, inventory_list, phases_under_load, sh

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
    second, last = controllers[1], controllers[-1]
    node_ids = {h: int(data["_meta"]["hostvars"][h]["kafka_node_id"]) for h in controllers}
    nodes = [*controllers, *data["kafka_broker"]["hosts"]]
    said: dict[str, Any] = {"before": voters(second, f"{second}:{port}")}
    work = Path(tempfile.mkdtemp(prefix="kf-membership-"))
    smaller = without(args.inventory, last, work)

    def remove() -> float:
        seconds, said["remove"] = ansible(args.inventory, "remove_controller.yml", "-e",
                                          f"kafka_controller_remove_host={last}")
        said["removed_active"] = sh(last, "systemctl is-active kafka", check=False).strip()
        return seconds

    def forget() -> float:
        said["pids"] = main_pids([n for n in nodes if n != last])
        seconds, said["forget"] = ansible(smaller, "kafka.yml")
        said["pids_after"] = main_pids([n for n in nodes if n != last])
        return seconds

    def replace() -> float:
        sh(second, f"systemctl stop kafka && rm -rf {METADATA_DIR}/*")
        seconds, said["replace"] = ansible(smaller, "kafka.yml")
        return seconds

    def add() -> float:
        sh(last, f"rm -rf {METADATA_DIR}/*")
        seconds, said["add"] = ansible(args.inventory, "kafka.yml")
        return seconds

    def rerun() -> float:
        seconds, said["rerun"] = ansible(args.inventory, "kafka.yml")
        return seconds

    def check(_hosts: list[str]) -> bool:
        after = voters(second, f"{second}:{port}")
        said["after"] = after
        old, new = dict(said["before"]), dict(after)
        checks = {
            "the 4 controllers are voters": sorted(new) == sorted(node_ids.values()),
            "the replaced and the added controller have new directories": all(
                new.get(node_ids[h]) not in (None, old.get(node_ids[h])) for h in (second, last)),
            "the removed controller stopped": said["removed_active"] != "active",
            "the forget restarted no node": said["pids"] == said["pids_after"],
            "the rerun changed nothing": not re.search(r"changed=[1-9]", said["rerun"]),
        }
        for name, passed in checks.items():
            print(f"membership check: {name}: {'ok' if passed else 'FAILED'}")
        return all(checks.values())

    passed = phases_under_load(args.inventory, "membership", [
        (f"remove {last}", remove), (f"forget {last}", forget), (f"replace {second}", replace),
        (f"add {last}", add), ("rerun", rerun)], args.seconds, args.throughput, check)
    print(f"membership voters before: {said['before']}")
    print(f"membership voters after: {said.get('after')}")
    for phase in ("remove", "forget", "replace", "add", "rerun"):
        recap = " ".join(line.split(":", 1)[0].strip() + ":" + re.sub(
            r".*(changed=\d+).*", r"\1", line) for line in said.get(phase, "").splitlines()[1:]
            if "changed=" in line)
        print(f"membership {phase} recap: {recap}")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
