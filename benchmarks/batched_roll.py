"""A rolling restart of 6 brokers over 3 racks, one at a time and in batches, under load.

    kafkaform lab up --inventory benchmarks/inventory/roll6
    ansible-playbook -i benchmarks/inventory/roll6 playbooks/site.yml
    .venv/bin/python benchmarks/batched_roll.py -i benchmarks/inventory/roll6 [--parallelism 3]

Under one producer (Kafka's VerifiableProducer, acks=all and idempotent, kafka_drills.py's) on a
topic of 6 partitions with 3 replicas, rack-aware, min.insync.replicas 2: ``rolling_restart.yml``
as it is (one broker at a time, the active controller last, OP-02), then again with
``kafka_broker_restart_parallelism`` (batches from where the replicas are, OP-04), then pyinfra's
kafka_broker deploy with the same parallelism after every broker's server.properties was touched
(each broker then runs an older configuration than its files, and the deploy rolls them). Each
roll's time (and the playbook's batches as it ran them), the batched / serial ratio, each phase's
acknowledged rate and longest wait for an ack, and the no-loss count. Then the refusal: with a
topic whose min.insync.replicas is its replication factor, no broker may restart even alone
without refusing its writes, so the batched roll must stop before any restart, naming it (no
broker's process changes). Exits 1 on a loss, a failed roll or a roll that was not refused.
Bounded: four runs, ``--seconds`` of steady state around the first three.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

from _podman import main_pids
from kafka_drills import (
    ADMIN_CONFIG,
    CP,
    JAVA,
    ROOT,
    SERVER_PROPERTIES,
    TOOL_JVM,
    brokers,
    phases_under_load,
    sh,
)

#: The task that waits for a batch's health, once per batch, names its members after the last " | ".
BATCH_TASK = re.compile(r"TASK \[.*Wait until the cluster is healthy again \| .* \| "
                        r"(?P<members>[^|\]]+)\]")


def run_roll(inventory: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).with_name("ansible-playbook")), "-i",
                           inventory, str(ROOT / "playbooks" / "rolling_restart.yml"), *extra],
                          capture_output=True, text=True, check=False, cwd=ROOT)


def roll(inventory: str, *extra: str) -> tuple[float, list[str]]:
    """rolling_restart.yml's time in seconds, and its batches as its task names give them."""
    start = time.monotonic()
    run = run_roll(inventory, *extra)
    if run.returncode != 0:
        print("\n".join((run.stdout + run.stderr).splitlines()[-60:]))  # why it failed
        run.check_returncode()
    return time.monotonic() - start, [m.group("members").strip()
                                      for m in BATCH_TASK.finditer(run.stdout)]


def pyinfra_roll(inventory: str, parallelism: int) -> float:
    """pyinfra's kafka_broker deploy after every broker's configuration went stale; its time.
    Fails unless every broker restarted."""
    hosts, _, _ = brokers(inventory)
    before = main_pids(hosts)
    for host in hosts:
        sh(host, f"touch {SERVER_PROPERTIES}")
    start = time.monotonic()
    subprocess.run([str(Path(sys.executable).with_name("pyinfra")), "--yes",
                    f"@kafkaform/{inventory}", "kafkaform.deploys.kafka_broker.kafka_broker",
                    "--data", f"kafka_broker_restart_parallelism={parallelism}"],
                   check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    took = time.monotonic() - start
    kept = [h for h, pid in main_pids(hosts).items() if pid == before[h]]
    if kept:
        raise RuntimeError(f"pyinfra left {', '.join(kept)} running on their old configuration")
    return took


def refused(inventory: str, parallelism: int) -> bool:
    """A batched roll with a topic no broker may leave is refused before any restart."""
    hosts, boot, _ = brokers(inventory)
    topic = f"kf.roll-refusal-{int(time.time())}"
    tool = f"{JAVA} {TOOL_JVM} -cp \"{CP}\" org.apache.kafka.tools.TopicCommand " \
           f"--bootstrap-server {boot} --command-config {ADMIN_CONFIG}"
    sh(hosts[-1], f"{tool} --create --topic {topic} --partitions 1 --replication-factor 3 "
                  "--config min.insync.replicas=3")
    try:
        before = main_pids(hosts)
        run = run_roll(inventory, "-e", f"kafka_broker_restart_parallelism={parallelism}")
        said = run.stdout + run.stderr
        named = f"{topic}-0" in said and "below min.insync.replicas" in said
        untouched = main_pids(hosts) == before
        line = next((x.strip() for x in said.splitlines() if "below min.insync" in x), "")
        print(f"refusal: exit {run.returncode}, names {topic}-0: {named}, no broker restarted: "
              f"{untouched}\n  {line[:400]}", flush=True)
        return run.returncode != 0 and named and untouched
    finally:
        sh(hosts[-1], f"{tool} --delete --topic {topic}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-i", "--inventory", default="benchmarks/inventory/roll6")
    parser.add_argument("--parallelism", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--throughput", type=int, default=50, help="messages a second")
    args = parser.parse_args()
    times: dict[str, float] = {}

    def phase(label: str, *extra: str) -> float:
        seconds, batches = roll(args.inventory, *extra)
        times[label] = seconds
        print(f"{label}: {seconds:.1f} s, batches {' / '.join(batches)}", flush=True)
        return seconds

    def pyinfra_phase(inventory: str, parallelism: int) -> float:
        seconds = pyinfra_roll(inventory, parallelism)
        print(f"pyinfra batched roll: {seconds:.1f} s, every broker restarted", flush=True)
        return seconds

    ok = phases_under_load(args.inventory, "batched-roll", [
        ("serial roll", lambda: phase("serial roll")),
        ("batched roll", lambda: phase(
            "batched roll", "-e", f"kafka_broker_restart_parallelism={args.parallelism}")),
        ("pyinfra batched roll", lambda: pyinfra_phase(args.inventory, args.parallelism)),
    ], args.seconds, args.throughput)
    ratio = times["batched roll"] / times["serial roll"]
    print(f"batched / serial: {times['batched roll']:.1f} / {times['serial roll']:.1f} s = "
          f"{ratio:.2f} (target <= 0.5)", flush=True)
    return 0 if ok and refused(args.inventory, args.parallelism) else 1


if __name__ == "__main__":
    raise SystemExit(main())
