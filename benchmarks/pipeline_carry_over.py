"""Drill: a pipeline the two-query job ran, stopped mid-stream, carried over by this tree's job.

    .venv/bin/python benchmarks/pipeline_carry_over.py -i inventory/lab [--from 76e7b93]

On the lab's Spark master, with a scratch topic and data directory (the lab's own pipeline is
stopped meanwhile and started again after):

1. ``--records`` events into the scratch topic;
2. the job of ``--from`` (the last release with two queries, each with a file sink), submitted
   with ``--available-now`` in micro-batches of ``--batch`` records, killed (SIGKILL) once its
   events query has committed two batches: each sink's log and checkpoint left mid-stream;
3. ``--records`` more events;
4. this tree's job (as the spark_pipeline role installed it) with ``--available-now``: it carries
   the two sinks over and lands the rest;
5. the pipeline's audit over the scratch topic: every record in exactly one output, exactly once.

Printed: the batches the old job committed before the kill, what the carry-over moved, and the
audit. Bounded: fixed record counts, every wait has a timeout; the scratch topic and directory
are deleted.
"""

from __future__ import annotations

import argparse
import io
import subprocess
import tarfile
import time
import uuid
from pathlib import Path

import pipeline as bench

OLD_DIR = "/tmp/kafkaform-old-job"
ROOT = Path(__file__).resolve().parents[1]


def put_old_job(master: str, commit: str) -> None:
    """The job modules of ``commit`` on the master, beside the installed package's other files."""
    tree = subprocess.run(["git", "archive", "--format=tar", commit,
                           "plugins/plugin_utils/kafkaform/pipeline"],
                          capture_output=True, check=True, cwd=ROOT).stdout
    bench.sh(master, f"rm -rf {OLD_DIR} && mkdir -p {OLD_DIR}/kafkaform/pipeline && "
                     f"cp /opt/kafkaform/pipeline/kafkaform/__init__.py "
                     f"/opt/kafkaform/pipeline/kafkaform/template_filters.py {OLD_DIR}/kafkaform/")
    with tarfile.open(fileobj=io.BytesIO(tree)) as archive:
        for member in archive.getmembers():
            if member.isfile():
                data = archive.extractfile(member)
                assert data is not None
                name = member.name.rsplit("/", 1)[1]
                subprocess.run(["podman", "exec", "-i", master, "sh", "-c",
                                f"cat > {OLD_DIR}/kafkaform/pipeline/{name}"],
                               input=data.read(), check=True)
    bench.sh(master, f"chmod -R a+rX {OLD_DIR}")


def committed_batches(master: str, checkpoint: str) -> int:
    out = bench.sh(master, f"ls {checkpoint}/commits 2>/dev/null | grep -c '^[0-9]*$' || true")
    return int(out.strip() or 0)


def drill(master: str, broker: str, config: dict[str, str], records: int, batch: int,
          commit: str) -> dict[str, object]:
    run = uuid.uuid4().hex[:8]
    topic, scratch = f"kf.carry-{run}", f"{config['data_dir'].rsplit('/', 1)[0]}/carry-{run}"
    boot = bench.admin_bootstrap(broker)
    count = bench.partitions(broker, boot, config["topic"])
    bench.sh(broker, f"{bench.KAFKA_JAVA} org.apache.kafka.tools.TopicCommand "
                     f"--bootstrap-server {boot} --command-config {bench.ADMIN_CONFIG} --create "
                     f"--topic {topic} --partitions {count} --replication-factor 2 2>/dev/null")
    grants = {bench.client_user(master, config, "generator"): ["Write", "Describe"],
              bench.client_user(master, config, "job"): ["Read", "Describe"],
              bench.client_user(master, config, "audit"): ["Read", "Describe"]}
    for principal, operations in grants.items():
        bench.grant(broker, boot, principal, topic, operations)
    props = f"/tmp/carry-{run}.properties"
    settings = {**config, "topic": topic, "data_dir": scratch, "name": f"carry-{run}",
                "max_offsets_per_trigger": str(batch), "progress_file": ""}
    body = "\\n".join(f"{k}={v}" for k, v in sorted(settings.items()))
    bench.sh(master, f"printf '{body}\\n' > {props} && chmod 644 {props}")
    executors = bench.executor_options(master)
    submit = ("cd /var/lib/spark && runuser -u spark -- env SPARK_CONF_DIR=/etc/spark "
              f"PYTHONPATH={{path}} {bench.SPARK_SUBMIT} --name kafkaform-carry {executors} "
              f"{{path}}/kafkaform/pipeline/job.py --config {props} --available-now")
    try:
        put_old_job(master, commit)
        bench.sh(master, "systemctl stop kafkaform-pipeline")
        print(f"1. {records} events into {topic} ({count} partitions)", flush=True)
        bench.sh(master, f"{bench.TOOL} generate --config {props} --count {records} "
                         "--rate 100000 --malformed 3 2>/dev/null")
        print(f"2. the job of {commit} (two queries), killed mid-stream", flush=True)
        old = subprocess.Popen(["podman", "exec", master, "sh", "-c",
                                submit.format(path=OLD_DIR) + " >/dev/null 2>&1"])
        checkpoint = f"{scratch}/checkpoints/events"
        deadline = time.monotonic() + 600
        while committed_batches(master, checkpoint) < 2:
            if old.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the old job ended or stalled before two batches "
                                   f"(rc {old.poll()}): nothing to carry over mid-stream")
            time.sleep(0.5)
        # The driver's JVM and Python both name the scratch settings; the pattern does not
        # match the shell that runs pkill.
        bench.sh(master, f"pkill -9 -f 'carr[y]-{run}' || true")
        old.wait(timeout=60)
        before = {q: committed_batches(master, f"{scratch}/checkpoints/{q}")
                  for q in ("events", "quarantine")}
        print(f"   killed with {before} batches committed", flush=True)
        print(f"3. {records} more events", flush=True)
        bench.sh(master, f"{bench.TOOL} generate --config {props} --count {records} "
                         "--rate 100000 --malformed 2 2>/dev/null")
        print("4. this tree's job (one query)", flush=True)
        out = bench.sh(master, submit.format(path="/opt/kafkaform/pipeline") + " 2>/dev/null")
        carried = [line for line in out.splitlines() if "carried over" in line]
        for line in carried:
            print(f"   {line}", flush=True)
        print("5. the audit", flush=True)
        audit = bench.last_json(bench.sh(master, f"{bench.TOOL} audit --config {props} "
                                                 f"--expect {2 * records + 5} --json "
                                                 "2>/dev/null || true"))
    finally:
        bench.sh(master, "systemctl start kafkaform-pipeline")
        bench.sh(master, f"rm -rf {scratch} {props} {OLD_DIR}")
        for principal, operations in grants.items():
            bench.grant(broker, boot, principal, topic, operations, add=False)
        bench.sh(broker, f"{bench.KAFKA_JAVA} org.apache.kafka.tools.TopicCommand "
                         f"--bootstrap-server {boot} --command-config {bench.ADMIN_CONFIG} "
                         f"--delete --topic {topic} 2>/dev/null")
    return {"old_commits_at_kill": before, "carried_over": carried, "audit": audit}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-i", "--inventory", default="inventory/lab")
    parser.add_argument("--from", dest="commit", default="76e7b93",
                        help="a commit whose job runs two queries with file sinks")
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=1_000, help="the old job's batch size")
    args = parser.parse_args()
    hosts = bench.groups(args.inventory)
    master, broker = hosts["spark_master"][0], hosts["kafka_broker"][0]
    result = drill(master, broker, bench.settings(master), args.records, args.batch, args.commit)
    audit = result["audit"]
    assert isinstance(audit, dict)
    print(f"audit: expected {audit['expected']}, found {audit['found']} (events "
          f"{audit['events']}, quarantine {audit['quarantine']}), missing {audit['missing']}, "
          f"duplicated {audit['duplicated']}, unexpected {audit['unexpected']}: "
          f"{'exactly once' if audit['exactly_once'] else 'MISMATCH'}", flush=True)
    return 0 if audit["exactly_once"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
