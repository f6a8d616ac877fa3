"""Pipeline throughput against Kafka's own consumer, and end-to-end latency, on a podman inventory.

    .venv/bin/python benchmarks/pipeline.py -i inventory/lab [--records N] [--warm-runs N]
        [--latency-events N]

Throughput: a fresh topic (as many partitions as the pipeline's) is filled with ``--records`` events
by the pipeline's generator; Kafka's ConsumerPerformance reads them all on a broker host; then the
pipeline job itself, submitted to the standalone master with ``--available-now`` and a scratch
directory, reads, parses and lands them as Parquet (both outputs), twice: freshly submitted (the
cold ratio: its executors compile their code and connect to Kafka during the first micro-batch),
and ``--warm-runs`` times in an application that has done the same work once
(``pipeline_warm_job.py``): each run's ratio, and their median as the ratio, what a running job
sustains. The JIT is still compiling during the first of those runs (about two thirds of the later
runs' rate on the lab); a streaming job is past that after its first few batches. The lab's
pipeline service is stopped meanwhile (it would hold the workers' cores) and started again
afterwards. Printed: each rate in records/s and pipeline / ConsumerPerformance as a ratio.

Latency: with the service running, ``--latency-events`` events at ``--latency-rate``/s into the
pipeline's topic; for each, Kafka's append time to the moment its Parquet file was written (the
file's modification time); p50 and p99 in milliseconds. Measured in steady state: first
``--warmup-seconds`` of the same rate, landed and audited, because a job (re)started a moment
before (as the throughput run leaves it) still opens its consumers and compiles its code, and
its first minute runs about twice as slow.

Bounded: fixed record counts, every wait has a timeout; the scratch topic and directory are deleted.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import _podman

TOOL = "/usr/local/bin/kafkaform-pipeline"
CONFIG = "/etc/kafkaform-pipeline/pipeline.properties"
# The admin client configuration each broker carries (kafka_broker role): TLS as the brokers.
ADMIN_CONFIG = "/etc/kafka/admin-client.properties"
SPARK_SUBMIT = "/opt/kafkaform/spark/bin/spark-submit"
JOB = "/opt/kafkaform/pipeline/kafkaform/pipeline/job.py"
WARM_JOB = Path(__file__).with_name("pipeline_warm_job.py")
KAFKA_JAVA = ("/usr/lib/jvm/java-17-openjdk-amd64/bin/java -Xmx256m -XX:+UseSerialGC "
              "-cp '/opt/kafkaform/kafka/libs/*'")


def sh(container: str, command: str, timeout: float = 900) -> str:
    # A failure shows only the end of each output.
    return _podman.sh(container, command, timeout=timeout, tail=(2000, 3000))


def executor_options(master: str) -> str:
    """The executors' memory and cores the pipeline's service submits with (its unit)."""
    unit = sh(master, "systemctl cat kafkaform-pipeline")
    memory = re.search(r"--executor-memory (\S+)", unit)
    cores = re.search(r"spark\.executor\.cores=(\d+)", unit)
    if not memory or not cores:
        raise RuntimeError(f"{master}: no executor memory or cores in kafkaform-pipeline's unit")
    return f"--executor-memory {memory.group(1)} --conf spark.executor.cores={cores.group(1)}"


def put(container: str, source: Path, path: str) -> None:
    """Copy a file of this folder into ``container``, readable by every user there."""
    subprocess.run(["podman", "cp", str(source), f"{container}:{path}"], check=True)
    sh(container, f"chmod 644 {path}")


def last_json(output: str) -> Any:
    return json.loads([line for line in output.splitlines() if line.startswith("{")][-1])


def groups(inventory: str) -> dict[str, list[str]]:
    data = json.loads(subprocess.run(["ansible-inventory", "-i", inventory, "--list"],
                                     capture_output=True, text=True, check=True).stdout)
    return {g: data.get(g, {}).get("hosts", []) for g in ("kafka_broker", "spark_master")}


def settings(master: str) -> dict[str, str]:
    lines = sh(master, f"cat {CONFIG}").splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))


def admin_bootstrap(broker: str) -> str:
    """The BROKER listeners, where the broker's admin client configuration authenticates."""
    return sh(broker, f"sed -n 's/^bootstrap.servers=//p' {ADMIN_CONFIG}").strip()


def client_user(master: str, config: dict[str, str], identity: str) -> str:
    """The SCRAM user of one pipeline identity, from its client configuration."""
    out = sh(master, f"grep -o 'username=\"[^\"]*\"' {config[f'client.{identity}.config']}")
    return out.strip().split('"')[1]


def grant(broker: str, boot: str, principal: str, topic: str, operations: list[str],
          add: bool = True) -> None:
    """Give (or take back) one pipeline identity the bench topic, as its ACLs give kf.events."""
    ops = " ".join(f"--operation {o}" for o in operations)
    sh(broker, f"{KAFKA_JAVA} kafka.admin.AclCommand --bootstrap-server {boot} "
               f"--command-config {ADMIN_CONFIG} {'--add' if add else '--remove --force'} "
               f"--allow-principal User:{principal} {ops} --topic {topic} 2>/dev/null")


def partitions(broker: str, boot: str, topic: str) -> int:
    out = sh(broker, f"{KAFKA_JAVA} org.apache.kafka.tools.TopicCommand --bootstrap-server {boot} "
                     f"--command-config {ADMIN_CONFIG} --describe --topic {topic} 2>/dev/null")
    return int(re.search(r"PartitionCount:\s*(\d+)", out).group(1))  # type: ignore[union-attr]


def consumer_performance(broker: str, boot: str, topic: str, records: int) -> float:
    out = sh(broker, f"{KAFKA_JAVA} org.apache.kafka.tools.ConsumerPerformance "
                     f"--bootstrap-server {boot} --consumer.config {ADMIN_CONFIG} "
                     f"--topic {topic} --messages {records} "
                     "--timeout 60000 2>/dev/null")
    header, row = [line for line in out.splitlines() if line.strip()][-2:]
    values = dict(zip([h.strip() for h in header.split(",")], [v.strip() for v in row.split(",")],
                      strict=True))
    consumed = int(values["data.consumed.in.nMsg"])
    if consumed < records:
        raise RuntimeError(f"ConsumerPerformance read {consumed} of {records} records")
    return float(values["nMsg.sec"])


def throughput(master: str, broker: str, config: dict[str, str], records: int,
               confs: list[str], warm_runs: int) -> dict[str, Any]:
    run = uuid.uuid4().hex[:8]
    topic, scratch = f"kf.bench-{run}", f"{config['data_dir'].rsplit('/', 1)[0]}/bench-{run}"
    boot = admin_bootstrap(broker)
    count = partitions(broker, boot, config["topic"])
    sh(broker, f"{KAFKA_JAVA} org.apache.kafka.tools.TopicCommand --bootstrap-server {boot} "
               f"--command-config {ADMIN_CONFIG} "
               f"--create --topic {topic} --partitions {count} --replication-factor 2 2>/dev/null")
    grants = {client_user(master, config, "generator"): ["Write", "Describe"],
              client_user(master, config, "job"): ["Read", "Describe"]}
    for principal, operations in grants.items():
        grant(broker, boot, principal, topic, operations)
    bench = {**config, "topic": topic, "data_dir": scratch, "name": f"bench-{run}"}
    body = "\\n".join(f"{k}={v}" for k, v in sorted(bench.items()))
    sh(master, f"printf '{body}\\n' > /tmp/bench-{run}.properties && "
               f"chmod 644 /tmp/bench-{run}.properties")
    try:
        print(f"filling {topic} ({count} partitions) with {records} events ...", flush=True)
        sh(master, f"{TOOL} generate --config /tmp/bench-{run}.properties --count {records} "
                   "--rate 100000 2>/dev/null")
        consumer = [consumer_performance(broker, boot, topic, records) for _ in range(2)]
        print(f"ConsumerPerformance: {consumer} records/s", flush=True)
        executors = executor_options(master) + "".join(f" --conf '{c}'" for c in confs)
        sh(master, "systemctl stop kafkaform-pipeline")
        put(master, WARM_JOB, f"/tmp/warm-{run}.py")
        submit = (f"cd /var/lib/spark && runuser -u spark -- env SPARK_CONF_DIR=/etc/spark "
                  f"PYTHONPATH=/opt/kafkaform/pipeline {SPARK_SUBMIT} --name kafkaform-bench "
                  f"{executors} ")
        started = time.monotonic()
        cold = last_json(sh(master, f"{submit} {JOB} --config /tmp/bench-{run}.properties "
                                    "--available-now 2>/dev/null"))
        wall = time.monotonic() - started
        sh(master, f"rm -rf {scratch}")
        warm_summaries = last_json(sh(master, f"{submit} /tmp/warm-{run}.py "
                                              f"/tmp/bench-{run}.properties {scratch}-warmup "
                                              f"{warm_runs} 2>/dev/null"))["runs"]
    finally:
        sh(master, "systemctl start kafkaform-pipeline")
        sh(master, f"rm -rf {scratch} {scratch}-warmup /tmp/bench-{run}.properties "
                   f"/tmp/warm-{run}.py")
        for principal, operations in grants.items():
            grant(broker, boot, principal, topic, operations, add=False)
        sh(broker, f"{KAFKA_JAVA} org.apache.kafka.tools.TopicCommand --bootstrap-server {boot} "
                   f"--command-config {ADMIN_CONFIG} --delete --topic {topic} 2>/dev/null")
    for summary in (cold, *warm_summaries):
        if summary["records"] != records:
            raise RuntimeError(f"the pipeline read {summary['records']} of {records} records")
    best = max(consumer)
    warm = sorted(warm_summaries, key=lambda s: s["seconds"])[len(warm_summaries) // 2]
    steady, started_cold = records / warm["seconds"], records / cold["seconds"]
    return {"records": records, "partitions": count, "consumer_records_per_s": round(best),
            "pipeline_records_per_s": round(steady), "ratio": round(steady / best, 3),
            "ratios": [round(records / s["seconds"] / best, 3) for s in warm_summaries],
            "pipeline_batches": warm["batches"], "pipeline_batch_seconds": warm["seconds"],
            "pipeline_phases_ms": warm["phases_ms"],
            "cold_records_per_s": round(started_cold),
            "cold_ratio": round(started_cold / best, 3), "cold_batch_seconds": cold["seconds"],
            "cold_wall_seconds_with_startup": round(wall, 1), "cold_phases_ms": cold["phases_ms"]}


def latency(master: str, events: int, rate: int, warmup_seconds: int) -> dict[str, Any]:
    # Warm up at the measured rate; a caught-up audit means no backlog in the figures.
    print(f"warming up: {warmup_seconds} s at {rate} events/s ...", flush=True)
    sh(master, f"{TOOL} generate --count {max(rate * warmup_seconds, 200)} --rate {rate} "
               "2>/dev/null")
    sh(master, f"{TOOL} audit --wait 300 2>/dev/null")
    since = int(time.time() * 1000)
    sh(master, f"{TOOL} generate --count {events} --rate {rate} 2>/dev/null")
    sh(master, f"{TOOL} audit --wait 300 2>/dev/null")
    report: dict[str, Any] = last_json(sh(master, f"{TOOL} latency --since-ms {since} --json "
                                                  "2>/dev/null"))
    if report["records"] < events:
        raise RuntimeError(f"only {report['records']} of {events} events were found")
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-i", "--inventory", default="inventory/lab")
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--latency-events", type=int, default=5000)
    parser.add_argument("--latency-rate", type=int, default=500)
    parser.add_argument("--warmup-seconds", type=int, default=60,
                        help="traffic at the latency rate before measuring")
    parser.add_argument("--warm-runs", type=int, default=3,
                        help="runs of the query in the warm application; the median is reported")
    parser.add_argument("--only", choices=("throughput", "latency"), help="measure one of the two")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Spark setting both throughput jobs are submitted with, to try it "
                             "(it replaces the node's own value of that key)")
    args = parser.parse_args()
    hosts = groups(args.inventory)
    master, broker = hosts["spark_master"][0], hosts["kafka_broker"][0]
    config = settings(master)
    if args.only != "latency":
        t = throughput(master, broker, config, args.records, args.conf, args.warm_runs)
        print(json.dumps(t), flush=True)
        print(f"pipeline {t['pipeline_records_per_s']} records/s (warm application) vs "
              f"ConsumerPerformance {t['consumer_records_per_s']} records/s on {t['records']} "
              f"records: ratio {t['ratio']} (median of {t['ratios']})", flush=True)
        print(f"freshly submitted: {t['cold_records_per_s']} records/s, cold ratio "
              f"{t['cold_ratio']} ({t['cold_wall_seconds_with_startup']} s with the "
              "application's start)", flush=True)
    if args.only != "throughput":
        lat = latency(master, args.latency_events, args.latency_rate, args.warmup_seconds)
        print(json.dumps(lat), flush=True)
        print(f"end-to-end latency at {args.latency_rate} events/s (trigger "
              f"{config['trigger_interval']}): p50 {lat['p50_ms']} ms, p99 {lat['p99_ms']} ms "
              f"over {lat['records']} events", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
