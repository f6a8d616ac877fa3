"""A node's log directories as its host read finds them, and the refusal to drop one that holds
replicas (kafkaform.plans.log_dirs, OP-10): the read's shell run for real on a directory tree."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from kafkaform.plans import hostread, log_dirs
from kafkaform.plans.kafka_broker import KafkaBrokerHost, kafka_broker_plan, parse_host
from tests.unit.test_kafka_broker_plan import CONVERGED, zk_cluster

SECURED = "broker.id=1\nlisteners=BROKER://k1:9091,CLIENT://k1:9093\n"


def read(tmp_path: Path, properties: str) -> dict[str, int]:
    config = tmp_path / "server.properties"
    config.write_text(properties)
    answer = subprocess.run(["sh", "-c", hostread.command([log_dirs.question(str(config))])[-1]],
                            capture_output=True, text=True, check=True).stdout
    return parse_host(answer).log_dir_replicas


def test_the_read_counts_each_log_directorys_replicas_and_nothing_else(tmp_path: Path) -> None:
    full, empty = tmp_path / "data0" / "kafka-logs", tmp_path / "data1" / "kafka-logs"
    for name in ("kf.events-0", "kf.events-11", "__consumer_offsets-7",
                 "kf.old-0.5f1c0e7a-delete", "kf.moving-1.b2e9-future", "kf.gone-2.9a7f-stray"):
        (full / name).mkdir(parents=True)
    (full / "meta.properties").write_text("version=1\n")
    empty.mkdir(parents=True)
    missing = tmp_path / "data2" / "kafka-logs"
    found = read(tmp_path, f"broker.id=1\nlog.dirs={full},{empty},{missing}\n")
    assert found == {str(full): 3, str(empty): 0, str(missing): 0}
    assert read(tmp_path, "broker.id=1\n") == {}


def test_a_log_directory_with_replicas_is_never_dropped() -> None:
    running = {"/var/lib/kafka/data0/kafka-logs": 14, "/var/lib/kafka/data1/kafka-logs": 9}
    refused = log_dirs.refusal("k1", running, ["/var/lib/kafka/data0/kafka-logs"])
    assert refused.startswith("k1: log.dirs would lose /var/lib/kafka/data1/kafka-logs "
                              "(9 replica(s))")
    assert "(OP-10)" in refused and "Fix: declare the disk again" in refused
    assert log_dirs.refusal("k1", running, list(running)) == ""
    # An empty directory, or one added, goes or comes with nothing to lose.
    assert log_dirs.refusal("k1", {**running, "/var/lib/kafka/data1/kafka-logs": 0},
                            ["/var/lib/kafka/data0/kafka-logs"]) == ""
    assert log_dirs.refusal("k1", running, [*running, "/var/lib/kafka/data2/kafka-logs"]) == ""


def test_the_plan_refuses_before_changing_the_node() -> None:
    cluster = zk_cluster()
    declared = cluster["brokers_by_host"]["k1"]["log_dirs"]
    dropped = "/var/lib/kafka/retired/kafka-logs"
    node = KafkaBrokerHost(**{**CONVERGED.__dict__, "running_config": SECURED,
                              "log_dir_replicas": {**dict.fromkeys(declared, 5), dropped: 12}})
    assert f"{dropped} (12 replica(s))" in kafka_broker_plan(cluster, "k1", {}, node).refusal
    kept = KafkaBrokerHost(**{**node.__dict__, "log_dir_replicas": dict.fromkeys(declared, 5)})
    assert kafka_broker_plan(cluster, "k1", {}, kept).refusal == ""


# --- a failed disk (OP-13) -------------------------------------------------------------------

def test_the_read_tells_formatted_blank_and_failed_log_directories(
        tmp_path: Path, failing_ls: Callable[[Path], dict[str, str]]) -> None:
    """The read's shell run here, its ``ls`` failing on one directory as a shut-down XFS does
    (EIO); a directory that does not exist yet is blank, not failed."""
    formatted, blank = tmp_path / "data0" / "kafka-logs", tmp_path / "data1" / "kafka-logs"
    failed, missing = tmp_path / "data2" / "kafka-logs", tmp_path / "data3" / "kafka-logs"
    formatted.mkdir(parents=True)
    (formatted / "meta.properties").write_text("version=1\n")
    (formatted / "kf.events-0").mkdir()
    blank.mkdir(parents=True)
    config = tmp_path / "server.properties"
    config.write_text(f"log.dirs={formatted},{blank},{failed},{missing}\n")
    answer = subprocess.run(
        ["sh", "-c", hostread.command([log_dirs.question(str(config))])[-1]],
        capture_output=True, text=True, check=True, env=failing_ls(failed)).stdout
    assert parse_host(answer).log_dir_states == {
        str(formatted): "formatted", str(blank): "blank", str(failed): "failed",
        str(missing): "blank"}
    assert parse_host(answer).log_dir_replicas == {
        str(formatted): 1, str(blank): 0, str(failed): 0, str(missing): 0}


def test_a_log_directory_on_a_failed_disk_stops_the_run_first() -> None:
    cluster = zk_cluster()
    declared = cluster["brokers_by_host"]["k1"]["log_dirs"]
    failed = declared[-1]
    node = KafkaBrokerHost(**{**CONVERGED.__dict__, "running_config": SECURED,
                              "log_dir_replicas": dict.fromkeys(declared, 5),
                              "log_dir_states": {**dict.fromkeys(declared, "formatted"),
                                                 failed: "failed"}})
    refused = kafka_broker_plan(cluster, "k1", {}, node).refusal
    assert refused.startswith(f"k1: {failed} fails with I/O errors: a failed data disk.")
    assert "(OP-13)" in refused and "systemctl stop kafka on k1" in refused
    # Before the refusal to drop a directory with replicas (OP-10): the disk is the cause.
    dropping = KafkaBrokerHost(**{**node.__dict__, "log_dir_replicas": {
        **dict.fromkeys(declared, 5), "/var/lib/kafka/retired/kafka-logs": 3}})
    assert kafka_broker_plan(cluster, "k1", {}, dropping).refusal == refused
    # A replaced, blank directory is no refusal: the run formats it (KR-07).
    replaced = KafkaBrokerHost(**{**node.__dict__, "log_dir_states": {
        **dict.fromkeys(declared, "formatted"), failed: "blank"}})
    assert kafka_broker_plan(cluster, "k1", {}, replaced).refusal == ""
