"""A dead broker's host replaced by a new, empty one under the same broker id (OP-09), under
acks=all load, on 6 brokers over 3 racks (replication 3, min.insync.replicas 2).

    kafkaform lab up --inventory benchmarks/inventory/roll6
    ansible-playbook -i benchmarks/inventory/roll6 playbooks/site.yml
    .venv/bin/python benchmarks/replace_broker.py -i benchmarks/inventory/roll6 \\
        [--fill-mb 100] [--throttle-mb-s 1.5]

A topic is filled first (``--fill-mb``, 6 partitions, 3 replicas). Under one producer (Kafka's
VerifiableProducer, acks=all and idempotent, on the first broker), the last broker's host
"dies": its Kafka stops and is disabled, and every log directory on its XFS data disks is
emptied (meta.properties too: a new machine's empty disks). Once the cluster has dropped it from
every ISR, ``replace_broker.yml --check`` must set no throttle and start nothing; then
``replace_broker.yml`` runs under ``--throttle-mb-s``, while a watcher reads every 2 s
whether the throttle configs are set (the fill topic's follower.replication.throttled.replicas,
as kafka-python reads it on the first broker) and whether the new host's Kafka is active, and how
many bytes its log segments hold. Printed: the playbook's time and the progress it said, when
the throttle appeared against when the host's Kafka started, the catch-up rate (the bytes the
host gained over the time it was copying) against the throttle, then the checks: every partition
at 3 replicas over 3 racks and in sync, no throttle or cordon left (day_two.py's ``settled``),
every partition led by its preferred replica, a rerun changes nothing, and the no-loss count.
Exits 1 when any of this fails. Bounded: two playbook runs, ``--seconds`` of load around them.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from itertools import pairwise
from typing import Any

import day_two
from day_two import ADMIN, fill, phase, settled
from kafka_drills import (
    ADMIN_CONFIG,
    CP,
    JAVA,
    TOOL_JVM,
    acked,
    brokers,
    consume,
    create_topic,
    sh,
    start_producer,
    stop_producer,
    validate,
    wait_healthy,
)

#: Reads one topic's follower throttle list on a broker, with the helper's admin client.
WATCH = """
import glob, sys
sys.path[:0] = ["/opt/kafkaform/kafka-admin",
                *sorted(glob.glob("/opt/kafkaform/kafka-admin/kafka_python-*.whl"))[-1:]]
import kafkaform_admin as a
from kafka.admin import ConfigResource, ConfigResourceType
admin = a.connect("/etc/kafka/admin-client.properties", sys.argv[1])
found = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, sys.argv[2])],
                               config_filter="all")["topic"][sys.argv[2]]
print((found.get("follower.replication.throttled.replicas") or {}).get("value") or "")
"""
MIB = 1024 * 1024


def log_dirs(host: str) -> list[str]:
    line = sh(host, "grep '^log.dirs=' /etc/kafka/server.properties").strip()
    return [d for d in line.split("=", 1)[1].split(",") if d]


def kill_host(host: str, dirs: list[str]) -> None:
    """The host dies and comes back a new machine with empty disks: Kafka stopped and disabled,
    every log directory emptied (the XFS mounts stay: a new machine's disks, formatted)."""
    sh(host, "systemctl disable --now kafka")
    for found in dirs:
        sh(host, f"find {found} -mindepth 1 -delete")


def out_of_every_isr(host: str, broker: int, timeout: float = 180) -> float:
    """Seconds until no partition lists ``broker`` in sync (Kafka drops it after
    replica.lag.time.max.ms)."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        answer = json.loads(sh(host, f"{ADMIN} placement"))
        if not any(broker in p["isr"] for p in answer["partitions"]):
            return time.monotonic() - start
        time.sleep(3)
    raise RuntimeError(f"broker {broker} still in some ISR after {timeout} s")


class Watcher(threading.Thread):
    """Every 2 s: the fill topic's follower throttle list (read on ``reader``), whether the new
    host's Kafka is active, and how many bytes its log segments hold."""

    def __init__(self, reader: str, boot: str, topic: str, host: str, host_id: int,
                 dirs: list[str]) -> None:
        super().__init__(daemon=True)
        self.reader, self.boot, self.topic, self.host, self.dirs = reader, boot, topic, host, dirs
        self.host_id = str(host_id)
        self.samples: list[dict[str, Any]] = []
        self.done = threading.Event()
        self.broker_rate = ""

    def run(self) -> None:
        while not self.done.is_set():
            listed = sh(self.reader, f"python3 -c '{WATCH}' {self.boot} {self.topic}",
                        check=False).strip()
            active = sh(self.host, "systemctl is-active kafka", check=False).strip() == "active"
            # The segments' bytes: du would count the 10 MiB each new index is preallocated.
            held = int(sh(self.host, f"find {' '.join(self.dirs)} -name '*.log' -printf "
                                     "'%s\\n' | awk '{n += $1} END {print n + 0}'",
                          check=False).strip() or 0)
            self.samples.append({"t": time.monotonic(), "throttled": bool(listed),
                                 "active": active, "bytes": held})
            # As soon as the new host's Kafka has registered (Kafka's tools describe no broker
            # that is not): the rate the run set on its id while it was down.
            if active and listed and "throttled.rate" not in self.broker_rate:
                self.broker_rate = sh(self.reader, (
                    f"{JAVA} {TOOL_JVM} -cp \"{CP}\" org.apache.kafka.tools.ConfigCommand "
                    f"--bootstrap-server {self.boot} --command-config {ADMIN_CONFIG} "
                    f"--describe --entity-type brokers --entity-name {self.host_id}"),
                    check=False).strip().replace("\n", " ")
            self.done.wait(2)

    def report(self, throttle_mb_s: float) -> bool:
        """Throttle before start, and the catch-up rate against the throttle."""
        first_throttle = next((s["t"] for s in self.samples if s["throttled"]), None)
        first_active = next((s["t"] for s in self.samples if s["active"]), None)
        before = first_throttle is not None and first_active is not None \
            and first_throttle < first_active
        copying = [s for s in self.samples if s["active"] and s["throttled"]]
        # Until the bytes stop growing (then only the producer's few KiB/s come in).
        growing = [b for a, b in pairwise(copying)
                   if b["bytes"] - a["bytes"] > 0.2 * MIB]
        window = copying[:copying.index(growing[-1]) + 1] if growing else copying
        rates = [(b["bytes"] - a["bytes"]) / MIB / max(b["t"] - a["t"], 1e-3)
                 for a, b in pairwise(window)]
        rate = (window[-1]["bytes"] - window[0]["bytes"]) / MIB / max(
            window[-1]["t"] - window[0]["t"], 1e-3) if len(window) > 1 else 0.0
        start = self.samples[0]["t"] if self.samples else 0.0
        print(f"throttle seen at {(first_throttle or start) - start:.0f} s, host's Kafka active "
              f"at {(first_active or start) - start:.0f} s: throttle before start: {before}",
              flush=True)
        print(f"broker {self.host_id}'s dynamic configs as Kafka describes them then: "
              f"{self.broker_rate or 'not read'}", flush=True)
        took = window[-1]["t"] - window[0]["t"] if len(window) > 1 else 0.0
        copied = (window[-1]["bytes"] - window[0]["bytes"]) / MIB if window else 0.0
        print(f"catch-up: {copied:.1f} MiB of segments in {took:.0f} s, {rate:.2f} MiB/s on "
              f"average, {max(rates, default=0.0):.2f} MiB/s at most between two samples, "
              f"against a throttle of {throttle_mb_s} MiB/s", flush=True)
        return before


def leaders_preferred(host: str) -> bool:
    answer = json.loads(sh(host, f"{ADMIN} placement"))
    off = [f"{p['topic']}-{p['partition']}" for p in answer["partitions"]
           if p["replicas"] and p["leader"] != p["replicas"][0]]
    counts: dict[int, int] = {}
    for p in answer["partitions"]:
        counts[p["leader"]] = counts.get(p["leader"], 0) + 1
    print(f"leaders: {dict(sorted(counts.items()))}, not on the preferred replica: "
          f"{off[:5] or 'none'}", flush=True)
    return not off


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-i", "--inventory", default="benchmarks/inventory/roll6")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--throughput", type=int, default=50, help="messages a second")
    parser.add_argument("--fill-mb", type=int, default=100)
    parser.add_argument("--throttle-mb-s", type=float, default=1.5)
    args = parser.parse_args()
    # The catch-up's progress, as the run says it (plans.replace, kafkaform_catchup).
    day_two.PROGRESS = re.compile(r"msg: (?P<line>\d+ of \d+ partitions not in sync[^\n]*"
                                  r"|broker\(s\) \d+ \(\S+\) hold[^\n]*)")
    hosts, boot, ids = brokers(args.inventory)
    client, victim, victim_id = hosts[0], hosts[-1], ids[-1]
    filled = f"kf.replace-fill-{int(time.time())}"
    fill(client, boot, filled, args.fill_mb)
    topic = f"kf.drill-replace-{int(time.time())}"
    create_topic(client, boot, topic)
    wait_healthy(client, boot, ids)
    dirs = log_dirs(victim)
    run = start_producer(client, boot, topic, args.throughput)
    ok = True
    try:
        time.sleep(args.seconds)
        kill_host(victim, dirs)
        print(f"{victim} died (Kafka stopped, {', '.join(dirs)} emptied); out of every ISR "
              f"after {out_of_every_isr(client, victim_id):.0f} s", flush=True)
        named = f"kafka_broker_replace_hosts={victim}"
        throttle = f"kafka_broker_reassignment_throttle_mb_s={args.throttle_mb_s}"
        phase(args.inventory, "replace_broker.yml", "-e", named, "-e", throttle, "--check")
        untouched = not sh(client, f"python3 -c '{WATCH}' {boot} {filled}").strip() \
            and sh(victim, "systemctl is-active kafka", check=False).strip() != "active"
        print(f"check mode: no throttle set and the host not started: {untouched}", flush=True)
        ok = untouched and ok
        watcher = Watcher(client, boot, filled, victim, victim_id, dirs)
        watcher.start()
        took, _ = phase(args.inventory, "replace_broker.yml", "-e", named, "-e", throttle)
        watcher.done.set()
        watcher.join()
        ok = watcher.report(args.throttle_mb_s) and ok
        ok = settled(client, boot) and ok
        ok = leaders_preferred(client) and ok
        _, again = phase(args.inventory, "replace_broker.yml", "-e", named)
        print(f"replace took {took:.0f} s; the rerun changed {again} (0 expected)", flush=True)
        ok = again == 0 and ok
        time.sleep(args.seconds)
    finally:
        events = stop_producer(client, run)
    ok = validate("replace", events, consume(client, boot, topic, set(acked(events))),
                  False) and ok
    sh(client, f"{JAVA} {TOOL_JVM} -cp \"{CP}\" org.apache.kafka.tools.TopicCommand "
               f"--bootstrap-server {boot} --command-config {ADMIN_CONFIG} --delete --topic "
               f"{filled}", check=False)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
