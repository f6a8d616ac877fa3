"""Time `kafkaform check` on a generated inventory of 1,000 brokers and 7 ZooKeeper members.

Target: under 1 s for the whole command (Python start-up, Ansible's inventory parsing, the rules).
Run: .venv/bin/python benchmarks/check_inventory.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

RACKS = ("az-a", "az-b", "az-c")


def write_inventory(directory: Path, brokers: int, members: int) -> None:
    hosts = {
        "zookeeper": {"hosts": {f"zk{i}": {"zookeeper_id": i, "rack": RACKS[i % 3]}
                                for i in range(1, members + 1)}},
        "kafka_broker": {"hosts": {f"broker{i:04d}": {"kafka_broker_id": i, "rack": RACKS[i % 3]}
                                   for i in range(brokers)}},
    }
    (directory / "group_vars").mkdir(parents=True)
    (directory / "hosts.yml").write_text(yaml.safe_dump({"all": {"children": hosts}}))
    (directory / "group_vars" / "all.yml").write_text(yaml.safe_dump(
        {"kafka_cluster_name": "benchmark"}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--brokers", type=int, default=1000)
    parser.add_argument("--members", type=int, default=7)
    args = parser.parse_args()
    command = Path(sys.executable).parent / "kafkaform"
    with tempfile.TemporaryDirectory() as tmp:
        inventory = Path(tmp) / "inventory"
        write_inventory(inventory, args.brokers, args.members)
        timings = []
        for _ in range(args.runs):
            start = time.perf_counter()
            result = subprocess.run([str(command), "check", "-i", str(inventory)],
                                    capture_output=True, text=True, check=False)
            timings.append(time.perf_counter() - start)
            if result.returncode != 0:
                print(result.stderr, file=sys.stderr)
                return 1
    print(f"kafkaform check, {args.brokers} brokers + {args.members} ZooKeeper members, "
          f"{args.runs} runs: median {statistics.median(timings):.3f} s, "
          f"min {min(timings):.3f} s, max {max(timings):.3f} s (target < 1 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
