"""Spark node and pipeline contexts, and the pipeline's Spark-free parts (settings, checkpoints)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from kafkaform.contexts.spark_node import settings_problems, spark_node_context, worker_resources
from kafkaform.contexts.spark_pipeline import client_files, spark_pipeline_context
from kafkaform.model import InventoryView, build
from kafkaform.pipeline import checkpoint
from kafkaform.pipeline.config import PipelineConfig
from kafkaform.template_filters import parse_java_properties

from .test_pki import make_ca

ROLES = Path(__file__).resolve().parents[2] / "roles"


def cluster(brokers: int = 3, **spark_vars: Any) -> dict[str, Any]:
    groups = {"zookeeper": ["zk1"], "kafka_broker": [f"k{i}" for i in range(1, brokers + 1)],
              "spark_master": ["sm"], "spark_worker": ["sw1", "sw2"]}
    hostvars: dict[str, dict[str, Any]] = {"zk1": {"zookeeper_id": 1}}
    for i in range(1, brokers + 1):
        hostvars[f"k{i}"] = {"kafka_broker_id": i}
    for host in ("sm", "sw1", "sw2"):
        hostvars[host] = dict(spark_vars)
    return build(InventoryView(groups, hostvars)).to_dict()


def test_worker_offers_the_host_less_the_reserve_unless_told() -> None:
    assert worker_resources({}, host_cores=8, host_memory_mb=32768) == (8, 32768 - 2048)
    assert worker_resources({}, host_cores=0, host_memory_mb=1500) == (1, 1024)  # floors
    told = {"spark_node_worker_cores": 3, "spark_node_worker_memory_mb": 4096}
    assert worker_resources(told, host_cores=8, host_memory_mb=32768) == (3, 4096)


@pytest.mark.parametrize(("settings", "words"), [
    ({"spark_node_defaults_extra": {"spark.master": "local"}}, "set by the role"),
    ({"spark_node_defaults_extra": {"executor.memory": "1g"}}, "not a spark.* property"),
    ({"spark_node_master_recovery_mode": "ZOOKEEPER"}, "choose FILESYSTEM or NONE"),
    ({"spark_node_worker_memory_mb": 512}, "at least 1024 MB"),
    ({"spark_node_worker_cores": -1}, "may not be negative"),
])
def test_bad_spark_settings_are_named(settings: dict[str, Any], words: str) -> None:
    problems = settings_problems(settings)
    assert len(problems) == 1 and words in problems[0]


def test_master_and_worker_get_their_own_daemons_and_one_master_url() -> None:
    model = cluster(spark_node_history_server_enabled=True)
    settings = {"spark_node_history_server_enabled": True}
    master = spark_node_context(model, "sm", settings, {"cores": 4, "memory_mb": 8192})
    worker = spark_node_context(model, "sw1", settings, {"cores": 4, "memory_mb": 8192})
    assert [d["name"] for d in master["daemons"]] == ["spark-master", "spark-history"]
    assert [d["name"] for d in worker["daemons"]] == ["spark-worker"]
    assert worker["daemons"][0]["arguments"] == ["spark://sm:7077"]
    assert "/srv/kafkaform/shared" in worker["daemons"][0]["read_write_paths"]
    assert worker["environment"]["SPARK_WORKER_MEMORY"] == "6144m"
    assert worker["environment"]["SPARK_LOCAL_IP"] == "sw1"
    assert "SPARK_MASTER_HOST" not in worker["environment"]
    assert "spark.sql.session.timeZone=UTC" in master["defaults"]
    assert "spark.master.rest.enabled=false" in master["defaults"]
    assert "spark.ui.killEnabled=false" in master["defaults"]
    # Each daemon restarts for its own unit and the files every daemon reads (OP-03).
    assert worker["daemons"][0]["restart_files"][-1] == "/etc/systemd/system/spark-worker.service"
    assert "/etc/spark/spark-defaults.conf" in master["daemons"][1]["restart_files"]


def test_the_spark_users_directories_are_the_masters_and_the_workers_own() -> None:
    model = cluster(spark_node_history_server_enabled=True)
    settings = {"spark_node_history_server_enabled": True}
    master = spark_node_context(model, "sm", settings, {"cores": 4, "memory_mb": 8192})
    worker = spark_node_context(model, "sw1", settings, {"cores": 4, "memory_mb": 8192})
    assert master["event_log_dir"] in master["spark_dirs"]
    assert master["shared_dir"] == master["spark_dirs"][-1] == worker["spark_dirs"][-1]
    assert master["event_log_dir"] not in worker["spark_dirs"]
    assert worker["spark_dirs"] == [worker["home_dir"], worker["work_dir"], worker["local_dir"],
                                    worker["log_dir"], worker["shared_dir"]]


def test_a_host_outside_the_spark_groups_is_refused() -> None:
    with pytest.raises(ValueError, match="neither the spark_master nor the spark_worker"):
        spark_node_context(cluster(), "k1", {}, {"cores": 1, "memory_mb": 4096})


def test_pipeline_reads_every_broker_and_writes_under_the_shared_dir() -> None:
    context = spark_pipeline_context(cluster(spark_node_shared_dir="/nfs/spark"), "sm", {})
    assert context["config"]["bootstrap_servers"] == "k1:9092,k2:9092,k3:9092"
    assert context["data_dir"] == "/nfs/spark/events"
    assert "--deploy-mode" in context["submit"] and "client" in context["submit"]
    assert context["read_write_paths"][-1] == "/nfs/spark/events"
    assert context["master_state_url"] == "https://sm:8480/json/"
    # The master's own port, from the model: the driver's settings do not move it.
    moved = spark_pipeline_context(cluster(spark_node_master_webui_port=8090), "sm",
                                   {"spark_node_master_webui_port": 8070})
    assert moved["master_state_url"] == "https://sm:8490/json/"


def test_the_job_restarts_for_the_spark_node_files_spark_submit_reads() -> None:
    """The driver reads the node's settings, keystore and connectors at submit (OP-03): a
    changed secret, history server or release reaches it only through a restart."""
    model = cluster()
    job = spark_pipeline_context(model, "sm", {})["restart_files"]
    master = spark_node_context(model, "sm", {}, {"cores": 4, "memory_mb": 8192})
    node_reads = master["daemons"][0]["restart_files"][:-1]  # all but the daemon's own unit
    assert "/etc/spark/spark-defaults.conf" in node_reads
    assert set(node_reads) <= set(job)
    assert job[-1] == "/etc/systemd/system/kafkaform-pipeline.service"


def test_each_identitys_client_file_carries_its_users_password() -> None:
    job = spark_pipeline_context(cluster(), "sm", {})
    users = [{"name": client["user"], "password": f"secret-{identity}"}
             for identity, client in job["clients"].items()]
    written = client_files(job, users, "kafka-client.properties.j2")
    assert [f["dest"] for f in written] == [c["config"] for c in job["clients"].values()]
    assert [f["vars"]["spark_pipeline_client"] for f in written] == [
        {"identity": i, "password": f"secret-{i}"} for i in job["clients"]]
    assert {(f["owner"], f["group"], f["mode"]) for f in written} == {
        ("root", job["group"], "0640")}
    first = next(iter(job["clients"]))
    with pytest.raises(ValueError, match=f"pipeline's {first} the Kafka user .* Fix: declare"):
        client_files(job, users[1:], "kafka-client.properties.j2")


def test_pipeline_refuses_one_broker_a_worker_host_and_bad_settings() -> None:
    with pytest.raises(ValueError) as raised:
        spark_pipeline_context(cluster(brokers=1), "sw1",
                               {"spark_pipeline_trigger_interval": "soon",
                                "spark_pipeline_topic": "__consumer_offsets"})
    message = str(raised.value)
    for words in ("at least two bootstrap brokers", "not in the spark_master group",
                  "'2 seconds'", "not a valid user topic"):
        assert words in message


def test_pipeline_settings_round_trip_through_the_properties_file(tmp_path: Path) -> None:
    path = tmp_path / "pipeline.properties"
    path.write_text("# comment\nbootstrap_servers=a:9092,b:9092\ndata_dir=/d/\nname=events\n"
                    "topic=kf.events\ntrigger_interval=2 seconds\nmax_offsets_per_trigger=10\n")
    config = PipelineConfig.load(path)
    assert config.events_dir == "/d/events" and config.checkpoint_dir("events") == \
        "/d/checkpoints/events"
    assert config.trigger_interval == "2 seconds"
    with pytest.raises(ValueError, match="at least two brokers"):
        PipelineConfig.from_mapping({**parse_java_properties(path.read_text()),
                                     "bootstrap_servers": "a:9092"})


class RecordingReader:
    """Spark's DataStreamReader as kafka_source drives it: ``load`` returns the options set."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}
        self.readStream = self
        self.read = self

    def format(self, name: str) -> RecordingReader:
        self.seen["format"] = name
        return self

    def options(self, **values: str) -> RecordingReader:
        self.seen.update(values)
        return self

    def option(self, key: str, value: Any) -> RecordingReader:
        self.seen[key] = str(value)
        return self

    def load(self) -> dict[str, str]:
        return self.seen


def job_config() -> Any:
    """What kafka_source and kafka_batch read of a PipelineConfig."""
    from types import SimpleNamespace

    return SimpleNamespace(
        kafka_options=lambda identity: {"kafka.security.protocol": "SASL_SSL",
                                        "groupIdPrefix": f"kafkaform-x-{identity}"},
        bootstrap_servers="a:9093,b:9093", topic="kf.events", max_offsets_per_trigger=1000)


def test_the_source_never_skips_data_and_does_not_idle_on_each_fetch() -> None:
    from kafkaform.pipeline.job import kafka_source

    options = kafka_source(RecordingReader(), job_config())
    assert options["format"] == "kafka" and options["subscribe"] == "kf.events"
    assert options["kafka.security.protocol"] == "SASL_SSL"
    assert options["groupIdPrefix"] == "kafkaform-x-job"
    # Exactly once: from the start of the topic, failing rather than skipping, committed only.
    assert options["startingOffsets"] == "earliest"
    assert options["failOnDataLoss"] == "true"
    assert options["kafka.isolation.level"] == "read_committed"
    # Latency: a fetch that finds nothing new returns well within a trigger interval.
    assert int(options["kafka.fetch.max.wait.ms"]) <= 100


def test_the_batch_read_connects_and_reads_as_the_stream_does() -> None:
    from kafkaform.pipeline.job import kafka_batch, kafka_source

    batch = kafka_batch(RecordingReader(), job_config())
    stream = kafka_source(RecordingReader(), job_config())
    # Everything the topic holds now, with the stream's client, topic and isolation.
    assert batch.pop("endingOffsets") == "latest"
    assert batch == {k: v for k, v in stream.items()
                     if k not in ("failOnDataLoss", "maxOffsetsPerTrigger")}


def write_batch(directory: Path, batch: int, offsets: str, committed: bool) -> None:
    (directory / "offsets").mkdir(parents=True, exist_ok=True)
    (directory / "commits").mkdir(parents=True, exist_ok=True)
    (directory / "offsets" / str(batch)).write_text(
        'v1\n{"batchWatermarkMs":0,"batchTimestampMs":1}\n' + offsets + "\n")
    if committed:
        (directory / "commits" / str(batch)).write_text('v1\n{"nextBatchWatermarkMs":0}\n')


def test_consumed_range_is_the_newest_committed_batch(tmp_path: Path) -> None:
    events, quarantine = tmp_path / "events", tmp_path / "quarantine"
    assert checkpoint.committed_end_offsets(events, "t") == {}
    write_batch(events, 0, '{"t":{"0":5,"1":7}}', committed=True)
    write_batch(events, 1, '{"t":{"0":9,"1":9}}', committed=False)  # planned, not committed
    write_batch(quarantine, 0, '{"t":{"0":4,"1":8}}', committed=True)
    ends = [checkpoint.committed_end_offsets(d, "t") for d in (events, quarantine)]
    assert ends == [{0: 5, 1: 7}, {0: 4, 1: 8}]
    assert checkpoint.common_range(ends) == {0: 4, 1: 7}
    assert not checkpoint.caught_up({0: 4, 1: 7}, {0: 5, 1: 7})
    assert checkpoint.caught_up({0: 5, 1: 7}, {0: 5, 1: 7})


def test_an_offset_log_without_the_topic_is_an_error(tmp_path: Path) -> None:
    write_batch(tmp_path, 0, '{"other":{"0":1}}', committed=True)
    with pytest.raises(ValueError, match="no offsets for topic t"):
        checkpoint.committed_end_offsets(tmp_path, "t")


def test_available_now_summary_spans_every_query_batch() -> None:
    from kafkaform.pipeline.job import progress_summary

    progress = [
        {"name": "events", "timestamp": "2026-11-21T10:00:00.000Z", "numInputRows": 600,
         "durationMs": {"triggerExecution": 2000, "addBatch": 1700, "walCommit": 100}},
        {"name": "quarantine", "timestamp": "2026-11-21T10:00:00.500Z", "numInputRows": 1000,
         "durationMs": {"triggerExecution": 1000}},
        {"name": "events", "timestamp": "2026-11-21T10:00:02.000Z", "numInputRows": 400,
         "durationMs": {"triggerExecution": 1500, "addBatch": 1200, "walCommit": 50}},
        {"name": "events", "timestamp": "2026-11-21T10:00:04.000Z", "numInputRows": 0,
         "durationMs": {"triggerExecution": 10}},  # an empty batch does not count
    ]
    summary = progress_summary(progress)
    assert summary["records"] == 1000 and summary["batches"] == 3
    assert summary["seconds"] == 3.5
    # Where the time went, per query, over the batches that read records.
    assert summary["phases_ms"] == {
        "events": {"triggerExecution": 3500, "addBatch": 2900, "walCommit": 150},
        "quarantine": {"triggerExecution": 1000}}
    assert progress_summary([])["records"] == 0


def serve_states(states: dict[str, Any]) -> tuple[ThreadingHTTPServer, str]:
    """A loopback HTTP server answering ``/<name>/json/`` with ``states[name]``; a list of states
    is answered one per request, its last one ever after."""

    class Answer(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            answers = states[self.path.strip("/").split("/")[0]]
            answer = answers.pop(0) if isinstance(answers, list) and len(answers) > 1 \
                else answers[0] if isinstance(answers, list) else answers
            body = json.dumps(answer).encode()
            self.send_response(200)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def run_apps_served(trust: Path, master_url: str,
                    worker_urls: list[str]) -> subprocess.CompletedProcess[str]:
    """The role's SP-10 probe, as the role runs it, against these URLs."""
    script = (ROLES / "spark_node" / "files" / "spark-apps-served.py").read_text()
    assert "settle_s = 10\n" in script
    script = script.replace("settle_s = 10\n", "settle_s = 0.2\n")  # the same checks, sooner
    return subprocess.run([sys.executable, "-c", script, master_url, str(trust), *worker_urls],
                          capture_output=True, text=True, check=False, timeout=30)


def apps_served(trust: Path, master: dict[str, Any],
                *workers: Any) -> subprocess.CompletedProcess[str]:
    """The SP-10 probe against a master and workers in the given states."""
    states = {"master": master, **{f"w{i}": w for i, w in enumerate(workers)}}
    server, url = serve_states(states)
    try:
        return run_apps_served(trust, f"{url}/master",
                               [f"{url}/w{i}" for i in range(len(workers))])
    finally:
        server.shutdown()


def master(granted: int, free: int, status: str = "ALIVE") -> dict[str, Any]:
    """The master's state: app-1 RUNNING with ``granted`` cores, app-2 WAITING, and one ALIVE
    worker with ``free`` cores by the master's count (a DEAD one's are never free)."""
    return {"status": status,
            "activeapps": [{"id": "app-1", "state": "RUNNING", "cores": granted},
                           {"id": "app-2", "state": "WAITING", "cores": 0}],
            "workers": [{"state": "ALIVE", "coresfree": free},
                        {"state": "DEAD", "coresfree": 2}]}


RUNNING = master(granted=2, free=0)


def test_the_master_restart_probe_finds_an_application_left_without_executors(
        tmp_path: Path) -> None:
    """The race SP-10 heals: the master has free cores, the running app has no executor."""
    trust = make_ca(tmp_path)[0]
    lost = apps_served(trust, master(granted=0, free=2),
                       {"cores": 2, "coresused": 0, "executors": []})
    assert lost.returncode == 1, lost.stdout + lost.stderr
    assert "without an executor ['app-1']" in lost.stdout
    served = apps_served(trust, RUNNING, {"cores": 2, "coresused": 1, "executors": []},
                         {"cores": 2, "coresused": 2, "executors": [{"appid": "app-1", "id": 0}]})
    assert served.returncode == 0, served.stdout + served.stderr
    # Every core taken by other applications: waiting for one is not the race.
    busy = apps_served(trust, master(granted=0, free=0),
                       {"cores": 2, "coresused": 2, "executors": [{"appid": "app-9"}]})
    assert busy.returncode == 0, busy.stdout + busy.stderr


def test_the_master_restart_probe_finds_cores_granted_to_an_executor_no_worker_runs(
        tmp_path: Path) -> None:
    """After the race the worker can still count the ended executor's cores as used, and the master
    may still count them as granted: no free core anywhere, yet the application has nothing to
    run on. Only the master's count of free cores and grants tells it from a full cluster."""
    trust = make_ca(tmp_path)[0]
    leaked = {"cores": 2, "coresused": 2, "executors": []}
    ghost = apps_served(trust, master(granted=2, free=0), leaked)
    assert ghost.returncode == 1, ghost.stdout + ghost.stderr
    assert "their granted cores {'app-1': 2}; free cores 0" in ghost.stdout
    freed = apps_served(trust, master(granted=0, free=2), leaked)
    assert freed.returncode == 1, freed.stdout + freed.stderr


def test_the_master_restart_probe_waits_for_the_end_of_the_masters_recovery(
        tmp_path: Path) -> None:
    """Until the master is ALIVE again, the executors a worker lists may still be killed."""
    trust = make_ca(tmp_path)[0]
    executor = {"cores": 2, "coresused": 1, "executors": [{"appid": "app-1", "id": 0}]}
    for status in ("RECOVERING", "COMPLETING_RECOVERY"):
        recovering = apps_served(trust, master(granted=2, free=0, status=status), executor)
        assert recovering.returncode == 1, recovering.stdout + recovering.stderr
        assert f"master {status};" in recovering.stdout
    assert apps_served(trust, RUNNING, executor).returncode == 0


def test_the_master_restart_probe_passes_only_a_state_that_holds(tmp_path: Path) -> None:
    """Just after the master turns ALIVE, its relaunch of an executor the worker runs can end it:
    the first look passes, the second finds the application without an executor."""
    trust = make_ca(tmp_path)[0]
    executor = {"cores": 2, "coresused": 2, "executors": [{"appid": "app-1", "id": 0}]}
    killed = {"cores": 2, "coresused": 0, "executors": []}
    lost = apps_served(trust, RUNNING, [executor, killed])
    assert lost.returncode == 1, lost.stdout + lost.stderr
    assert "without an executor ['app-1']" in lost.stdout
    assert "the executors changed" in lost.stdout
    # Another executor in its place is a change too: the next check decides.
    relaunched = {**executor, "executors": [{"appid": "app-1", "id": 1}]}
    assert apps_served(trust, RUNNING, [executor, relaunched]).returncode == 1
    assert apps_served(trust, RUNNING, [executor, executor]).returncode == 0


def test_the_master_restart_probe_fails_when_a_worker_does_not_answer(tmp_path: Path) -> None:
    silent = "http://127.0.0.1:9"  # the discard port: nothing listens there
    server, url = serve_states({"master": RUNNING})
    try:
        ran = run_apps_served(make_ca(tmp_path)[0], f"{url}/master", [silent])
    finally:
        server.shutdown()
    assert ran.returncode == 1 and "cannot read" in ran.stderr
