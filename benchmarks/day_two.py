"""Day two under load: a broker decommissioned, then the cluster scaled out onto it again, on 6
brokers over 3 racks (replication 3, min.insync.replicas 2).

    kafkaform lab up --inventory benchmarks/inventory/roll6
    ansible-playbook -i benchmarks/inventory/roll6 playbooks/site.yml
    .venv/bin/python benchmarks/day_two.py -i benchmarks/inventory/roll6 [--fill-mb 150]

First a topic is filled (``--fill-mb``, 6 partitions, 3 replicas) so that the moves copy real data
under the throttle (``--throttle-mb-s``). Then, under one producer (Kafka's VerifiableProducer,
acks=all and idempotent, kafka_drills.py's): ``decommission.yml`` on the last broker (its replicas
move to its rack mate, it stops and is unregistered), ``decommission.yml`` again (nothing to do: 0
changed), and ``scale_out.yml`` (the broker converged again and given a fair share); then the same
three through pyinfra (kafkaform.deploys.day_two), whose second decommission must not run its moves
operation. Printed: each phase's time and the progress it reported, then the checks at the end:
every partition at its replication factor over 3 racks, no replication throttle left on any broker
or topic, no cordon (cordoned.log.dirs, OP-08) left on any broker, and the no-loss count. Last,
the refusal on real hosts: decommissioning a whole rack is refused before anything moves, naming
the topic, and no broker stops. Exits 1 when any of this
fails. Bounded: six runs and one refusal, ``--seconds`` of steady state around them.
"""

from __future__ import annotations

import argparse
import json
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
    TOOL_JVM,
    brokers,
    phases_under_load,
    sh,
)

ADMIN = "/usr/local/sbin/kafkaform-kafka"
PROGRESS = re.compile(r"msg: (?P<line>\d+ of \d+ partitions still moving[^\n]*"
                      r"|\d+ partition\(s\) move[^\n]*)")
RECAP = re.compile(r"changed=(\d+)")


def run_playbook(inventory: str, name: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).with_name("ansible-playbook")), "-i",
                           inventory, str(ROOT / "playbooks" / name), *extra],
                          capture_output=True, text=True, check=False, cwd=ROOT)


def phase(inventory: str, name: str, *extra: str) -> tuple[float, int]:
    """A playbook's time and how many tasks it changed; its progress lines printed."""
    start = time.monotonic()
    run = run_playbook(inventory, name, *extra)
    took = time.monotonic() - start
    if run.returncode != 0:
        print("\n".join((run.stdout + run.stderr).splitlines()[-60:]))
        run.check_returncode()
    for match in PROGRESS.finditer(run.stdout):
        print(f"  {' '.join(match.group('line').split())}", flush=True)
    changed = sum(int(n) for n in RECAP.findall(run.stdout))
    print(f"{name} {' '.join(extra)}: {took:.1f} s, {changed} changed", flush=True)
    return took, changed


def pyinfra_phase(inventory: str, deploy: str, *data: str) -> tuple[float, bool]:
    """A pyinfra deploy of kafkaform.deploys.day_two: its time, and whether it moved anything
    (its moves operation ran); its progress lines printed."""
    start = time.monotonic()
    run = subprocess.run([str(Path(sys.executable).with_name("pyinfra")), "--yes",
                          f"@kafkaform/{inventory}", f"kafkaform.deploys.day_two.{deploy}",
                          *(arg for item in data for arg in ("--data", item))],
                         capture_output=True, text=True, check=False, cwd=ROOT)
    took = time.monotonic() - start
    said = run.stdout + run.stderr
    if run.returncode != 0:
        print("\n".join(said.splitlines()[-60:]))
        run.check_returncode()
    for line in said.splitlines():
        if "partitions still moving" in line or "partition(s) move" in line:
            print(f"  {line.strip()}", flush=True)
    moved = "Move the replicas" in said
    print(f"pyinfra {deploy} {' '.join(data)}: {took:.1f} s, moves operation ran: {moved}",
          flush=True)
    return took, moved


def fill(host: str, boot: str, topic: str, megabytes: int) -> None:
    tool = f"{JAVA} {TOOL_JVM} -cp \"{CP}\" org.apache.kafka.tools"
    sh(host, f"{tool}.TopicCommand --bootstrap-server {boot} --command-config {ADMIN_CONFIG} "
             f"--create --topic {topic} --partitions 6 --replication-factor 3")
    sh(host, f"{tool}.ProducerPerformance --topic {topic} --num-records {megabytes * 1024} "
             f"--record-size 1024 --throughput -1 --producer.config {ADMIN_CONFIG} "
             f"--producer-props bootstrap.servers={boot} acks=all > /dev/null", timeout=900)


def settled(host: str, boot: str) -> bool:
    """Every partition at 3 replicas over 3 racks (the internal ones at theirs), no
    replication throttle on any broker, the cluster's default or any topic, no cordon on any
    broker, and every broker holding replicas (the last scale-out gave the returning broker its
    share)."""
    answer = json.loads(sh(host, f"{ADMIN} placement"))
    racks = {b["id"]: b["rack"] for b in answer["brokers"]}
    short = [f"{p['topic']}-{p['partition']}" for p in answer["partitions"]
             if not p["topic"].startswith("__")
             and (len(p["replicas"]) != 3 or len({racks[r] for r in p["replicas"]}) != 3
                  or sorted(p["isr"]) != sorted(p["replicas"]))]
    config = f"{JAVA} {TOOL_JVM} -cp \"{CP}\" org.apache.kafka.tools.ConfigCommand " \
             f"--bootstrap-server {boot} --command-config {ADMIN_CONFIG} --describe"
    described = {kind: sh(host, f"{config} --entity-type {kind}").splitlines()
                 for kind in ("brokers", "topics")}
    throttles = [line.strip() for lines in described.values() for line in lines
                 if "throttled" in line]
    # A cordon left on a broker (OP-08) would keep it from every new topic.
    cordons = [line.strip() for line in described["brokers"] if "cordoned.log.dirs" in line]
    throttles += [line.strip() for line in sh(
        host, f"{config} --entity-type brokers --entity-default").splitlines()
        if "throttled" in line]
    held = {r for p in answer["partitions"] for r in p["replicas"]}
    empty = sorted(set(racks) - held)
    print(f"settled: {len(answer['partitions'])} partitions, {len(short)} not at 3 replicas over "
          f"3 racks in sync {short[:5]}, throttles left: {throttles or 'none'}, brokers holding "
          f"nothing: {empty or 'none'}, cordons left: {cordons or 'none'}", flush=True)
    return not short and not throttles and not empty and not cordons


def refused(inventory: str) -> bool:
    """Decommissioning a whole rack (brokers 5 and 6, rack c) is refused before anything
    moves, naming the topic; no broker's process changes."""
    hosts, _, _ = brokers(inventory)
    before = main_pids(hosts)
    run = run_playbook(inventory, "decommission.yml", "-e",
                       f"kafka_broker_decommission_hosts={hosts[-2]},{hosts[-1]}")
    said = run.stdout + run.stderr
    line = next((x.strip() for x in said.splitlines() if "No replica moved" in x), "")
    untouched = main_pids(hosts) == before
    print(f"refusal: exit {run.returncode}, no broker stopped: {untouched}\n  {line[:400]}",
          flush=True)
    return run.returncode != 0 and "a rack's loss could take a partition" in said and untouched


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-i", "--inventory", default="benchmarks/inventory/roll6")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--throughput", type=int, default=50, help="messages a second")
    parser.add_argument("--fill-mb", type=int, default=150,
                        help="MiB written to a new topic first; 0: the topics already there")
    parser.add_argument("--throttle-mb-s", type=float, default=2.0)
    args = parser.parse_args()
    hosts, boot, _ = brokers(args.inventory)
    filled = f"kf.day-two-fill-{int(time.time())}"
    if args.fill_mb:
        fill(hosts[0], boot, filled, args.fill_mb)
    try:
        return run_drill(args, hosts, boot)
    finally:  # the lab's data disks are small: a second run must find them as the first did
        if args.fill_mb:
            sh(hosts[0], f"{JAVA} {TOOL_JVM} -cp \"{CP}\" org.apache.kafka.tools.TopicCommand "
                         f"--bootstrap-server {boot} --command-config {ADMIN_CONFIG} "
                         f"--delete --topic {filled}", check=False)


def run_drill(args: argparse.Namespace, hosts: list[str], boot: str) -> int:
    leaving = hosts[-1]
    throttle = f"kafka_broker_reassignment_throttle_mb_s={args.throttle_mb_s}"
    changed: dict[str, int] = {}
    moved: dict[str, bool] = {}

    def step(label: str, name: str, *extra: str) -> float:
        took, changed[label] = phase(args.inventory, name, *extra)
        return took

    def pyinfra_step(label: str, *data: str) -> float:
        deploy = "decommission" if label == "again" else label
        took, moved[label] = pyinfra_phase(args.inventory, deploy, *data)
        return took

    named = f"kafka_broker_decommission_hosts={leaving}"
    ok = phases_under_load(args.inventory, "day-two", [
        ("decommission", lambda: step("decommission", "decommission.yml", "-e", named,
                                      "-e", throttle)),
        ("decommission again", lambda: step("again", "decommission.yml", "-e",
                                            f"kafka_broker_decommission_hosts={leaving}")),
        ("scale-out", lambda: step("scale-out", "scale_out.yml", "-e", throttle)),
        ("pyinfra decommission", lambda: pyinfra_step("decommission", named, throttle)),
        ("pyinfra decommission again", lambda: pyinfra_step("again", named)),
        ("pyinfra scale-out", lambda: pyinfra_step("scale_out", throttle)),
    ], args.seconds, args.throughput, check=lambda hosts: settled(hosts[0], boot))
    print(f"decommission again changed {changed.get('again')}, pyinfra's moved: "
          f"{moved.get('again')} (0 and False expected)", flush=True)
    return 0 if ok and changed.get("again") == 0 and moved.get("again") is False \
        and refused(args.inventory) else 1


if __name__ == "__main__":
    raise SystemExit(main())
