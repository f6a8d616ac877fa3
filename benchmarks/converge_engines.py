"""Time the same cluster converged by Ansible and by pyinfra, cold and with nothing to change.

On the kafka_broker molecule scenario's containers (3 ZooKeeper members, 3 brokers in 2 racks,
the mirror): fresh containers, then the roles (ansible-playbook with playbooks/zookeeper.yml and
playbooks/kafka_broker.yml on molecule's inventory, through the scenario's connection) cold and
again; fresh containers, then pyinfra's
`kafkaform.deploys.site.kafka` on the same inventory cold and again. The no-change runs must
change nothing. Prints the four times, each engine's no-change run against its cold one, and the
ratios pyinfra / Ansible, as one JSON line.
Run: .venv/bin/python benchmarks/converge_engines.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from molecule_converge import CHANGED, ROOT, molecule

SCENARIO = "kafka_broker"
DEPLOY = "kafkaform.deploys.site.kafka"


def fresh() -> None:
    print("fresh containers: molecule destroy, create", file=sys.stderr, flush=True)
    molecule(SCENARIO, "destroy")
    molecule(SCENARIO, "create")


def inventory() -> Path:
    """The inventory molecule wrote for the scenario's containers."""
    return sorted(Path.home().glob(f".ansible/tmp/molecule.*.{SCENARIO}/inventory"),
                  key=lambda p: p.stat().st_mtime)[-1]


def timed(tool: str, *args: str, **env: str) -> tuple[float, str]:
    """Run a tool of this environment's on molecule's inventory; its wall time and output."""
    path = Path(sys.executable).with_name(tool)
    # Molecule's inventory holds variables that read its environment; kafkaform reads none.
    env = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(ROOT / ".collections"), **env}
    start = time.monotonic()
    result = subprocess.run([str(path), *args], cwd=ROOT, capture_output=True, text=True,
                            check=False, env=env)
    took = time.monotonic() - start
    if result.returncode != 0:
        sys.stderr.write(result.stdout[-4000:] + result.stderr[-4000:])
        raise SystemExit(f"{tool} failed (exit {result.returncode})")
    return took, result.stdout


def ansible() -> tuple[float, int]:
    # Not `molecule converge`: the scenario converges with pyinfra. The connection is the
    # scenario's (molecule.yml), one podman exec per task.
    took, output = timed("ansible-playbook", "-i", str(inventory()), "playbooks/zookeeper.yml",
                         "playbooks/kafka_broker.yml", ANSIBLE_NOCOLOR="1",
                         ANSIBLE_CONNECTION_PLUGINS=str(ROOT / "plugins" / "connection"))
    return took, sum(int(n) for n in CHANGED.findall(output))


def pyinfra() -> tuple[float, int]:
    took, output = timed("pyinfra", "--yes", "--json", f"@kafkaform/{inventory()}", DEPLOY)
    return took, int(json.loads(output)["results"]["totals"]["success"])


def main() -> int:
    os.environ.setdefault("CONTAINERS_CONF", str(ROOT / "lab" / "containers.conf"))
    os.environ.setdefault("ANSIBLE_CONFIG", str(ROOT / "ansible.cfg"))
    record: dict[str, Any] = {"benchmark": "converge_engines", "scenario": SCENARIO}
    for engine, converge in (("ansible", ansible), ("pyinfra", pyinfra)):
        fresh()
        cold, _ = converge()
        print(f"{engine} cold converge: {cold:.1f} s", file=sys.stderr, flush=True)
        warm, changed = converge()
        print(f"{engine} no-change converge: {warm:.1f} s, {changed} changed", file=sys.stderr,
              flush=True)
        record.update({f"{engine}_cold_s": round(cold, 1), f"{engine}_no_change_s": round(warm, 1),
                       f"{engine}_no_change_changed": changed,
                       f"{engine}_no_change_over_cold": round(warm / cold, 2)})
    molecule(SCENARIO, "destroy")
    record["ratio_cold"] = round(record["pyinfra_cold_s"] / record["ansible_cold_s"], 2)
    record["ratio_no_change"] = round(record["pyinfra_no_change_s"]
                                      / record["ansible_no_change_s"], 2)
    record["recorded_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    print(json.dumps(record))
    for engine in ("ansible", "pyinfra"):
        print(f"ratio {record[f'{engine}_no_change_over_cold']} ({engine}, no change / cold)")
    print(f"ratio {record['ratio_cold']} (cold, pyinfra / Ansible); "
          f"ratio {record['ratio_no_change']} (no change)")
    changed = record["ansible_no_change_changed"] + record["pyinfra_no_change_changed"]
    return 0 if changed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
