"""The brokers' admin helper (roles/kafka_broker/files/kafkaform-kafka) without a cluster: the
paths that must not touch one."""

from __future__ import annotations

import contextlib
import importlib.machinery
import importlib.util
import io
import json
import re
import signal
import socket
import ssl
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from kafka.protocol.sasl import SaslAuthenticateResponse, SaslHandshakeResponse

from kafkaform import acls, topics
from kafkaform.jvm import KAFKA_TOOL
from kafkaform.plans.kafka_broker import ADMIN_LIB

HELPER = Path(__file__).resolve().parents[2] / "roles/kafka_broker/files/kafkaform-kafka"


@pytest.fixture(scope="module")
def helper() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("kafkaform_kafka_helper", str(HELPER))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


@pytest.fixture
def no_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any process the helper starts fails the test: these paths must not touch a cluster."""
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"the helper started {args}")

    monkeypatch.setattr(subprocess, "run", refuse)
    monkeypatch.setattr(subprocess, "Popen", refuse)


@pytest.mark.usefixtures("no_process")
def test_reload_tls_dry_run_names_the_listeners_and_runs_nothing(
        helper: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "server.properties").write_text(
        "broker.id=7\n"
        "listeners=BROKER://10.0.0.7:9091,CLIENT://10.0.0.7:9093,LOCAL://127.0.0.1:9094\n"
        "listener.security.protocol.map=BROKER:SSL,CLIENT:SASL_SSL,LOCAL:PLAINTEXT\n"
        "ssl.keystore.location=/etc/kafka/tls/keystore.p12\n"
        "ssl.truststore.location=/etc/kafka/tls/trust.pem\n"
        "ssl.keystore.password=${file:/etc/kafka/secrets.properties:keystore}\n")
    assert helper.main(["kafkaform-kafka", "--conf", str(tmp_path), "--dry-run",
                        "reload-tls"]) == 0
    assert capsys.readouterr().out == "(dry run) would reload BROKER, CLIENT on broker 7\n"


def test_a_request_that_timed_out_is_sent_again_and_the_last_error_reported(
        helper: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reload-tls alter on a loaded broker can outlast its request timeout and still apply:
    the same request is sent again, up to three times, 2 s apart."""
    sleeps: list[float] = []
    monkeypatch.setattr(helper.time, "sleep", sleeps.append)
    calls: list[int] = []

    def slow_twice() -> None:
        calls.append(1)
        if len(calls) < 3:
            raise TimeoutError("Request timed out after 19845 ms")

    assert helper.retried(slow_twice) == ""
    assert (len(calls), sleeps) == (3, [2, 2])
    calls.clear()

    def always() -> None:
        calls.append(1)
        raise SystemExit("kafkaform-kafka: INVALID_CONFIG")

    assert helper.retried(always) == "kafkaform-kafka: INVALID_CONFIG"
    assert len(calls) == 3


# The ZooKeeper shell's merged output for four `get`s on stdin, as Kafka 3.9's shell printed it on
# the lab's brokers (registrations shortened), then one session that lost its connection.
SHELL_OUTPUT = """Connecting to zk1:2181,zk2:2181,zk3:2181/kafka/lab
log4j:WARN No appenders could be found for logger (org.apache.zookeeper.ZooKeeper).
Welcome to ZooKeeper!
JLine support is disabled

WATCHER::

WatchedEvent state:SyncConnected type:None path:null
{"version":2,"brokerid":2,"timestamp":"1795651500041","kraftControllerEpoch":-1}
Node does not exist: /brokers/ids/9
{"endpoints":["BROKER://kafka-1:9091"],"rack":"rack-a"}
KeeperErrorCode = ConnectionLoss for /brokers/ids/2
"""


def test_zookeeper_reads_share_one_shell_and_each_answer_goes_to_its_path(
        helper: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "server.properties").write_text(
        "zookeeper.connect=zk1:2181,zk2:2181,zk3:2181/kafka/lab\n")
    runs: list[tuple[list[str], str]] = []

    def shell(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        runs.append((argv, str(kwargs["input"])))
        return subprocess.CompletedProcess(argv, 0, SHELL_OUTPUT, None)

    monkeypatch.setattr(subprocess, "run", shell)
    args = SimpleNamespace(conf=str(tmp_path), bootstrap="", java="java", libs="/libs",
                           dry_run=False)
    paths = ["/controller", "/brokers/ids/9", "/brokers/ids/1", "/brokers/ids/2"]
    found = helper.Tools(args).zk_get_all(paths)
    assert len(runs) == 1
    assert runs[0][1] == "".join(f"get {path}\n" for path in paths)
    assert found == {"/controller": {"version": 2, "brokerid": 2,
                                     "timestamp": "1795651500041", "kraftControllerEpoch": -1},
                     "/brokers/ids/9": None,
                     "/brokers/ids/1": {"endpoints": ["BROKER://kafka-1:9091"], "rack": "rack-a"},
                     "/brokers/ids/2": None}


@pytest.mark.usefixtures("no_process")
def test_health_of_a_broker_whose_listener_is_closed_starts_no_tool(
        helper: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as probe:  # a port nothing listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (tmp_path / "server.properties").write_text(
        f"advertised.listeners=BROKER://127.0.0.1:{port},CLIENT://127.0.0.1:9093\n"
        "zookeeper.connect=zk1:2181/kafka/lab\n")
    assert helper.main(["kafkaform-kafka", "--conf", str(tmp_path), "health",
                        "--ids", "1,2,3"]) == 1
    assert json.loads(capsys.readouterr().out)["problems"] == [
        f"this broker's listener 127.0.0.1:{port} does not accept connections"]


def test_health_watches_the_listener_the_tools_were_pointed_at(helper: ModuleType,
                                                              tmp_path: Path) -> None:
    """While a cluster built open is secured (SE-10), server.properties already names the BROKER
    listener a running broker does not serve yet: the check watches the plaintext one the tools
    use, as --bootstrap says."""
    (tmp_path / "server.properties").write_text(
        "advertised.listeners=BROKER://k1:9091,CLIENT://k1:9093,PLAINTEXT://k1:9092\n")

    def own(*bootstrap: str) -> str:
        args = helper.argparse.Namespace(conf=str(tmp_path), bootstrap=",".join(bootstrap))
        return str(helper.Tools(args).own_listener)

    assert own("k1:9092", "k2:9092", "k3:9092") == "k1:9092"
    assert own("k2:9091", "k1:9091") == "k1:9091"
    assert own() == "k1:9091"


class Cluster:
    """The answers of kafka-python's KafkaAdminClient the helper reads, shaped as the lab's
    brokers gave them: the registered brokers, the controller and one topic's partitions (the
    second one under-replicated)."""

    def __init__(self, brokers: list[int], controller: int = 1) -> None:
        self.brokers, self.controller, self.topics_asked = brokers, controller, 0

    def describe_cluster(self) -> dict[str, object]:
        return {"controller_id": self.controller, "cluster_id": "x",
                "brokers": [{"broker_id": b, "host": f"k{b}", "port": 9091, "rack": None,
                             "is_fenced": False} for b in self.brokers]}

    def describe_topics(self) -> list[dict[str, object]]:
        self.topics_asked += 1
        return [{"name": "kf.events", "is_internal": False, "partitions": [
            {"partition_index": 0, "leader_id": 1, "replica_nodes": [1, 2], "isr_nodes": [1, 2]},
            {"partition_index": 1, "leader_id": 2, "replica_nodes": [2, 1], "isr_nodes": [2]},
        ]}, {"name": "__consumer_offsets", "is_internal": True, "partitions": []}]

    def close(self) -> None:
        pass


def tools_of(helper: ModuleType, cluster: object, **given: object) -> SimpleNamespace:
    """A node's tools whose admin client is ``cluster``."""
    tools = SimpleNamespace(**{"own_listener": "", "roles": "", "controllers": "", **given})
    tools.session = lambda: helper.kafka_admin.Session("", "", opener=lambda *_: cluster)
    return tools


@pytest.mark.parametrize("brokers, problems", [
    ([1], ["brokers not registered: 2"]),
    ([1, 2], ["1 under-replicated partitions: kf.events-1"]),
])
def test_health_asks_the_registrations_then_only_with_every_broker_in_the_partitions(
        helper: ModuleType, capsys: pytest.CaptureFixture[str], brokers: list[int],
        problems: list[str]) -> None:
    cluster = Cluster(brokers)
    assert helper.health(tools_of(helper, cluster), ["1", "2"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["problems"] == problems
    assert cluster.topics_asked == (1 if brokers == [1, 2] else 0)
    assert report["under_replicated"] == cluster.topics_asked


def test_health_in_migration_counts_a_broker_registered_with_the_quorum(
        helper: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    # Broker 2 already runs in KRaft mode: it registers with the controllers, not ZooKeeper.
    tools = tools_of(helper, Cluster([1]), controllers="kf-ctl1:9093",
                     quorum=lambda: {"leader": 3001, "nodes": {"2": {"lag": 0}}})
    assert helper.health(tools, ["1", "2"]) == 1
    assert json.loads(capsys.readouterr().out)["problems"] == [
        "1 under-replicated partitions: kf.events-1"]


def test_health_reports_a_cluster_it_cannot_reach_and_connects_anew_for_the_next_check(
        helper: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    opened: list[int] = []

    def opener(*_: object) -> Cluster:
        opened.append(1)
        if len(opened) == 1:
            raise ConnectionError("NoBrokersAvailable")
        return Cluster([1, 2])

    tools = SimpleNamespace(own_listener="", roles="", controllers="")
    tools.session = lambda: helper.kafka_admin.Session("", "", opener=opener)
    clock = Clock()
    assert helper.health(tools, ["1", "2"], 5, sleep=clock.sleep, clock=lambda: clock.now) == 1
    assert len(opened) == 2
    assert json.loads(capsys.readouterr().out)["problems"] == [
        "1 under-replicated partitions: kf.events-1"]


#: The tools of a ZooKeeper-mode broker, for tests that replace the check itself.
ZOOKEEPER_MODE = SimpleNamespace(roles="", controllers="", session=lambda: contextlib.nullcontext())


class Clock:
    """Time that passes only when the helper sleeps, or when a check takes it."""

    def __init__(self) -> None:
        self.now, self.slept = 0.0, []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_health_wait_checks_again_soon_while_closed_then_each_second_until_healthy(
        helper: ModuleType, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    answer = helper.kafka_admin.health_answer
    answers = iter([
        (answer(["this broker's listener k1:9091 does not accept connections"]),
         True),
        (answer(["1 under-replicated partitions: kf.events-1"], 1, ["1", "2"], under=1), False),
        (answer([], 1, ["1", "2"]), False),
    ])
    monkeypatch.setattr(helper, "check_health",
                        lambda tools, session, ids, max_lag: next(answers))
    clock = Clock()
    assert helper.health(ZOOKEEPER_MODE, ["1", "2"], 30, sleep=clock.sleep,
                         clock=lambda: clock.now) == 0
    assert clock.slept == [helper.LISTENER_POLL_S, helper.CHECK_POLL_S]
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 1 and json.loads(printed[0])["problems"] == []


def test_health_wait_gives_up_with_the_last_answer_when_the_time_is_up(
        helper: ModuleType, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    checks = []

    def unhealthy(tools: object, session: object, ids: list[str],
                  max_lag: int) -> tuple[dict[str, object], bool]:
        checks.append(1)
        return helper.kafka_admin.health_answer([f"no active controller ({len(checks)})"]), False

    monkeypatch.setattr(helper, "check_health", unhealthy)
    clock = Clock()
    assert helper.health(ZOOKEEPER_MODE, ["1"], 3, sleep=clock.sleep,
                         clock=lambda: clock.now) == 1
    assert len(checks) == 4  # at 0, 1, 2 and 3 s
    assert json.loads(capsys.readouterr().out)["problems"] == ["no active controller (4)"]


def test_health_wait_waits_as_long_as_a_slow_check_took(
        helper: ModuleType, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On a loaded host a check takes seconds: the checks take at most half of the time."""
    clock = Clock()
    took = iter([4.0, 0.2, 3.0])

    def slow(tools: object, session: object, ids: list[str],
             max_lag: int) -> tuple[dict[str, object], bool]:
        clock.now += next(took)
        problem = "1 under-replicated partitions: kf.events-1"
        return helper.kafka_admin.health_answer([problem]), False

    monkeypatch.setattr(helper, "check_health", slow)
    assert helper.health(ZOOKEEPER_MODE, ["1"], 10, sleep=clock.sleep,
                         clock=lambda: clock.now) == 1
    # Checks at 0 (4 s), 8 (0.2 s) and 9.2 s, which ends past the 10 s.
    assert clock.slept == [4.0, helper.CHECK_POLL_S]
    assert next(took, None) is None
    assert json.loads(capsys.readouterr().out)["problems"]


def test_a_tool_starts_from_its_class_archive_kept_only_after_a_clean_exit(
        helper: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archives, libs = tmp_path / "archives", tmp_path / "libs"
    libs.mkdir()
    (libs / "kafka_2.13-3.9.1.jar").write_text("")
    monkeypatch.setattr(helper.kafka_tools, "CLASS_ARCHIVES", str(archives))
    args = SimpleNamespace(conf=str(tmp_path), bootstrap="", java=sys.executable,
                           libs=str(libs), dry_run=False)
    (tmp_path / "server.properties").write_text("advertised.listeners=BROKER://k1:9091\n")
    exits = iter([1, 0, 0, -signal.SIGABRT])
    started: list[list[str]] = []

    def tool(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        started.append(argv)
        writes = [a.split("=", 1)[1] for a in argv if a.startswith("-XX:ArchiveClassesAtExit=")]
        for path in writes:  # the JVM writes its archive as it exits
            Path(path).write_text("archive")
        return subprocess.CompletedProcess(argv, next(exits, 0), "", "")

    def reads_archive() -> list[str]:
        return [a for a in started[-1] if a.startswith("-XX:SharedArchiveFile=")]

    monkeypatch.setattr(subprocess, "run", tool)
    quorum_tool = helper.kafka_tools.METADATA_QUORUM
    tools = helper.Tools(args)
    tools.run(quorum_tool, "describe", check=False)  # fails: its archive is dropped
    assert list(archives.iterdir()) == []
    tools.run(quorum_tool, "describe")  # a clean exit: its archive is kept
    (kept,) = archives.iterdir()
    assert kept.name.startswith("MetadataQuorumCommand-") and not reads_archive()
    helper.Tools(args).run(quorum_tool, "describe")
    assert reads_archive() == [f"-XX:SharedArchiveFile={kept}"]
    # A JVM that aborts on its archive (a damaged file) drops it: the next run writes it anew.
    helper.Tools(args).run(quorum_tool, "describe", check=False)
    assert list(archives.iterdir()) == []
    helper.Tools(args).run(quorum_tool, "describe")
    (kept,) = archives.iterdir()
    (libs / "kafka_2.13-3.9.2.jar").write_text("")  # an upgrade: the archive no longer serves
    helper.Tools(args).run(quorum_tool, "describe")  # and its first run replaces it
    assert not reads_archive()
    (newer,) = archives.iterdir()
    assert newer.name.startswith("MetadataQuorumCommand-") and newer != kept


# MetadataQuorumCommand describe --replication as Kafka 3.9 printed it on the kraft scenario's
# controllers (columns padded, tab-separated), with 3003 behind and broker 1 observing.
REPLICATION = """\
NodeId\tDirectoryId           \tLogEndOffset\tLag\tLastFetchTimestamp\tLastCaughtUpTimestamp\tStatus  \t
3002  \tAAAAAAAAAAAAAAAAAAAAAA\t1207        \t0  \t1795743616895     \t1795743616895        \tLeader  \t
3001  \tAAAAAAAAAAAAAAAAAAAAAA\t1207        \t0  \t1795743616580     \t1795743616580        \tFollower\t
3003  \tAAAAAAAAAAAAAAAAAAAAAA\t1100        \t107\t1795743616786     \t1795743616786        \tFollower\t
1     \tAAAAAAAAAAAAAAAAAAAAAA\t1207        \t0  \t1795743616786     \t1795743616786        \tObserver\t
"""  # noqa: E501


def test_the_quorum_table_gives_the_leader_and_each_nodes_lag(helper: ModuleType) -> None:
    rows = helper.kafka_tools.quorum_rows
    quorum = rows("[2026-11-27] WARN a line before the table\n" + REPLICATION)
    assert quorum["leader"] == "3002"
    assert quorum["nodes"]["3003"] == {"lag": 107, "status": "Follower"}
    assert quorum["nodes"]["1"]["status"] == "Observer"
    assert rows("") == {"leader": None, "nodes": {}}


# describe --replication in Kafka 4.4.0's layout (padded, tab-separated) on a dynamic quorum
# whose controller 3003 was replaced: its dead host's directory is still a voter, behind, and
# its new one observes. Then the same table without the DirectoryId column, as a release before
# directory ids (KIP-853) prints it.
TABLE_44 = """\
NodeId\tDirectoryId           \tLogEndOffset\tLag\tLastFetchTimestamp\tLastCaughtUpTimestamp\tStatus  \t
3001  \t5Kke2xHDRfCzP3scJi6LkA\t812         \t0  \t1796627960626     \t1796627960626        \tLeader  \t
3002  \tq1Hk3dAfR4uJ2yq9gk-tbw\t809         \t3  \t1796627960626     \t1796627960626        \tFollower\t
3003  \tOldDirOfTheDeadHost0AA\t500         \t312\t1796627950000     \t1796627950000        \tFollower\t
3003  \tNewDirOfTheNewHost00AA\t812         \t0  \t1796627960626     \t1796627960626        \tObserver\t
1     \tt8bBp8FIUVUGxCkcjrJFCg\t812         \t0  \t1796627960626     \t1796627960626        \tObserver\t
"""  # noqa: E501
NO_DIRECTORY = "\n".join("\t".join(cell for i, cell in enumerate(line.split("\t")) if i != 1)
                         for line in TABLE_44.splitlines()) + "\n"
BY_DIRECTORY = {(3001, "5Kke2xHDRfCzP3scJi6LkA"): {"lag": 0, "status": "Leader"},
                (3002, "q1Hk3dAfR4uJ2yq9gk-tbw"): {"lag": 3, "status": "Follower"},
                (3003, "OldDirOfTheDeadHost0AA"): {"lag": 312, "status": "Follower"},
                (3003, "NewDirOfTheNewHost00AA"): {"lag": 0, "status": "Observer"},
                (1, "t8bBp8FIUVUGxCkcjrJFCg"): {"lag": 0, "status": "Observer"}}


@pytest.mark.parametrize("table, rows", [
    (TABLE_44, BY_DIRECTORY),
    # Without directory ids, one row per id: of 3003's two, the later one.
    (NO_DIRECTORY, {(3001, ""): {"lag": 0, "status": "Leader"},
                    (3002, ""): {"lag": 3, "status": "Follower"},
                    (3003, ""): {"lag": 0, "status": "Observer"},
                    (1, ""): {"lag": 0, "status": "Observer"}}),
], ids=["4.4.0", "no DirectoryId column"])
def test_one_parser_reads_the_quorum_table_by_directory_and_by_node(
        helper: ModuleType, table: str, rows: dict[tuple[int, str], dict[str, Any]]) -> None:
    """kafkaform_tools.replication_rows reads the table once for both callers: the quorum
    membership (kafkaform_quorum, by node and directory) and the health gates (quorum_rows, by
    node, the later row of an id kept)."""
    assert "DirectoryId" not in NO_DIRECTORY and "\tLag\t" in NO_DIRECTORY
    tools = helper.kafka_tools
    assert tools.replication_rows("[2026-11-27] WARN a line before the table\n" + table) == rows
    assert tools.quorum_rows(table) == {"leader": "3001", "nodes": {
        "3001": {"lag": 0, "status": "Leader"}, "3002": {"lag": 3, "status": "Follower"},
        "3003": {"lag": 0, "status": "Observer"}, "1": {"lag": 0, "status": "Observer"}}}
    # The membership's look at the quorum reads the same rows, the leader by its directory.
    described: list[str] = []

    def run(main_class: str, *args: str, check: bool = True) -> SimpleNamespace:
        assert main_class == tools.METADATA_QUORUM and not check
        described.append(args[args.index("describe") + 1])
        return SimpleNamespace(stdout=table if "--replication" in args else "", returncode=0)

    look = SimpleNamespace(run=run, controllers="c1:9094", admin_config="admin.properties")
    state = helper.kafka_quorum.quorum_state(look)
    assert (state["rows"], state["leader"]) == (rows, next(iter(rows)))
    assert described == ["--status", "--replication"]
    assert tools.replication_rows("") == {} and tools.replication_rows(
        "NodeId\tLag\tStatus\nx\t0\tLeader\n3001\tbehind\tFollower\n3002\t0\n") == {}


@pytest.mark.parametrize("roles, max_lag, problems", [
    ("controller", 1000, []),
    ("controller", 100, ["not fetching the metadata log within 100 records: 3003"]),
    ("broker", 1000, ["1 under-replicated partitions: kf.events-1"]),
])
def test_kraft_health_checks_the_quorum_and_for_brokers_the_partitions(
        helper: ModuleType, capsys: pytest.CaptureFixture[str], roles: str, max_lag: int,
        problems: list[str]) -> None:
    ids = ["3001", "3002", "3003"] if roles == "controller" else ["1"]
    cluster = Cluster([1, 2])
    rows = helper.kafka_tools.quorum_rows
    tools = tools_of(helper, cluster, roles=roles, quorum=lambda: rows(REPLICATION))
    assert helper.health(tools, ids, max_lag=max_lag) == (1 if problems else 0)
    assert cluster.topics_asked == (1 if roles == "broker" else 0)
    report = json.loads(capsys.readouterr().out)
    assert report["problems"] == problems
    assert report["controller"] == "3002"


@pytest.mark.parametrize("running, catching, problems", [
    ([1, 2], "", ["1 under-replicated partitions: kf.events-1"]),
    # Broker 1 copies the replicas of moves in flight: its replica out of sync is excused...
    ([1, 2], "1", []),
    # ...never its absence: a broker down still fails the gate (OP-06).
    ([2], "1", ["brokers not registered: 1"]),
    ([2], "", ["1 under-replicated partitions: kf.events-1"]),
])
def test_kraft_health_excuses_replicas_catching_up_never_a_broker_down(
        helper: ModuleType, capsys: pytest.CaptureFixture[str], running: list[int],
        catching: str, problems: list[str]) -> None:
    rows = helper.kafka_tools.quorum_rows
    tools = tools_of(helper, Cluster(running), roles="broker", quorum=lambda: rows(REPLICATION),
                     args=SimpleNamespace(catching_up=catching))
    assert helper.health(tools, ["1"], max_lag=1000) == (1 if problems else 0)
    assert json.loads(capsys.readouterr().out)["problems"] == problems


@pytest.mark.usefixtures("no_process")
def test_storage_refuses_a_directory_of_another_cluster_before_formatting_any(
        helper: ModuleType, tmp_path: Path) -> None:
    used, blank = tmp_path / "used", tmp_path / "blank"
    used.mkdir()
    (used / "meta.properties").write_text("version=1\ncluster.id=OtherClusterId000000000\n")
    (tmp_path / "server.properties").write_text(f"process.roles=broker\nlog.dirs={blank},{used}\n")
    with pytest.raises(SystemExit) as refused:
        helper.main(["kafkaform-kafka", "--conf", str(tmp_path), "storage",
                     "--cluster-id", "MkU3OEVBNTcwNTJENDM2Qg"])
    assert f"{used} is formatted for cluster OtherClusterId000000000" in str(refused.value)
    assert "kafka_cluster_id: OtherClusterId000000000" in str(refused.value)
    assert not blank.exists()


@pytest.mark.usefixtures("no_process")
def test_storage_formats_nothing_when_every_directory_is_this_clusters(
        helper: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "meta.properties").write_text("cluster.id=MkU3OEVBNTcwNTJENDM2Qg\n")
    (tmp_path / "server.properties").write_text(f"process.roles=controller\nlog.dirs={tmp_path}\n")
    assert helper.main(["kafkaform-kafka", "--conf", str(tmp_path), "storage",
                        "--cluster-id", "MkU3OEVBNTcwNTJENDM2Qg"]) == 0
    assert json.loads(capsys.readouterr().out) == {"formatted": []}


def test_kraft_health_reports_an_unreadable_quorum_as_a_problem_to_wait_on(
        helper: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    def no_controller() -> None:
        raise SystemExit("kafkaform-kafka: org.apache.kafka.tools.MetadataQuorumCommand exited 1")

    cluster = Cluster([1])
    tools = tools_of(helper, cluster, roles="broker", quorum=no_controller)
    assert helper.health(tools, ["1"], max_lag=1000) == 1
    assert cluster.topics_asked == 0
    assert json.loads(capsys.readouterr().out)["problems"] == [
        "cannot read the metadata quorum: kafkaform-kafka: "
        "org.apache.kafka.tools.MetadataQuorumCommand exited 1"]


def test_a_broker_in_migration_mode_finds_kraft_brokers_in_the_quorum_not_in_zookeeper(
        helper: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    """KR-09: while the brokers roll between ZooKeeper and KRaft mode, a broker already in KRaft
    mode is registered with the controllers' quorum; one in neither is still missing."""
    tools = tools_of(helper, Cluster([2]), controllers="c1:9094",
                     quorum=lambda: helper.kafka_tools.quorum_rows(REPLICATION))
    assert helper.health(tools, ["1", "2", "7"], max_lag=1000) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["problems"] == ["brokers not registered: 7"]
    assert report["registered"] == ["1", "2"]


# FeatureCommand's answers, as Kafka 4.1's tool prints them (tab-separated fields).
FEATURES = ("Feature: kraft.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\t"
            "FinalizedVersionLevel: 0\tEpoch: 412\n"
            "Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\t"
            "SupportedMaxVersion: 4.1-IV1\tFinalizedVersionLevel: {finalized}\tEpoch: 412\n")
MAPPING = "metadata.version=27 (4.1-IV1)\nkraft.version=1\ntransaction.version=2\n"


@pytest.mark.parametrize(("finalized", "raised"), [("3.9-IV0", True), ("4.1-IV1", False)])
def test_features_raises_metadata_version_alone_to_the_newest_the_release_supports(
        helper: ModuleType, capsys: pytest.CaptureFixture[str], finalized: str,
        raised: bool) -> None:
    """KR-10: metadata.version follows the release; kraft.version and the other features are
    left alone (they change what the quorum and clients do)."""
    changed = feature_calls(helper, FEATURES.format(finalized=finalized))
    assert json.loads(capsys.readouterr().out) == {
        "finalized": finalized, "supported": "4.1-IV1", "raised": raised, "features": {},
        "changed": raised, "levels": {"kraft.version": "0", "metadata.version": finalized}}
    assert changed == ([("--bootstrap-server", "k1:9091", "upgrade", "--feature",
                         "metadata.version=27")] if raised else [])


# The features of a cluster whose metadata.version is behind and whose transaction.version and
# group.version are not yet raised, as Kafka 4.4's tool prints them.
FEATURES_44 = FEATURES.replace("4.1-IV1", "4.4-IV0") + (
    "Feature: group.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\t"
    "FinalizedVersionLevel: 0\tEpoch: 412\n"
    "Feature: transaction.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 2\t"
    "FinalizedVersionLevel: 1\tEpoch: 412\n")


def feature_calls(helper: ModuleType, described: str, wanted: tuple[str, ...] = ()
                  ) -> list[tuple[str, ...]]:
    """The changes ``features`` makes on a cluster describing ``described``."""
    answers = {"describe": described,
               "version-mapping": MAPPING.replace("27 (4.1-IV1)", "30 (4.4-IV0)")
               if "4.4-IV0" in described else MAPPING}
    changed: list[tuple[str, ...]] = []
    tools = SimpleNamespace(
        admin=lambda: ["--bootstrap-server", "k1:9091"],
        run=lambda main, *args, check=True: SimpleNamespace(stdout=answers[args[2]], stderr=""),
        change=lambda main, *args: changed.append(args))
    assert helper.features(tools, "", wanted) == 0
    return changed


def test_features_raises_the_named_features_one_by_one_after_metadata_version_never_kraft(
        helper: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    """KR-13: each named feature is raised on its own, after metadata.version; one already at
    or above its level stays; kraft.version, not named, is never changed."""
    described = FEATURES_44.format(finalized="4.1-IV1")
    changed = feature_calls(helper, described, ("transaction.version=2", "group.version=1"))
    upgrades = [call[call.index("--feature") + 1] for call in changed]
    assert upgrades == ["metadata.version=30", "transaction.version=2", "group.version=1"]
    assert not [u for u in upgrades if u.startswith("kraft.version")]
    report = json.loads(capsys.readouterr().out)
    assert report["features"] == {"transaction.version": {"from": 1, "to": 2},
                                  "group.version": {"from": 0, "to": 1}}
    assert report["changed"] and report["levels"]["kraft.version"] == "0"
    assert feature_calls(helper, described.replace("4.1-IV1", "4.4-IV0"),
                         ("transaction.version=1",)) == []


@pytest.mark.parametrize(("wanted", "message"), [
    (("share.version=1",), r"no feature share\.version; it has group\.version, kraft\.version"),
    (("transaction.version=3",), r"transaction\.version 3 is past the newest level this "
                                 r"release supports, 2"),
])
def test_features_refuses_a_feature_the_release_does_not_have(
        helper: ModuleType, wanted: tuple[str, ...], message: str) -> None:
    with pytest.raises(SystemExit, match=message):
        feature_calls(helper, FEATURES_44.format(finalized="4.4-IV0"), wanted)


class Recorder:
    """An admin client that keeps the ACLs and SCRAM changes it is sent, and answers with the
    SCRAM users it has."""

    def __init__(self, users: dict[str, object]) -> None:
        self.users, self.created, self.sent = users, [], []
        self._manager = SimpleNamespace(run=lambda call, *args: call(*args))

    def create_acls(self, acls: list[object]) -> dict[str, list[object]]:
        self.created += acls
        return {"succeeded": acls, "failed": []}

    def describe_user_scram_credentials(self) -> dict[str, object]:
        return self.users

    def _send_request_to_controller(self, request: object) -> object:
        self.sent.append(request)
        return SimpleNamespace(results=[])


def test_an_acl_action_becomes_one_binding_per_operation_in_kafkas_names(
        helper: ModuleType) -> None:
    admin = helper.kafka_admin
    client = Recorder({})
    action = {"action": "add", "principal": "User:ops", "resource_type": "transactional_id",
              "resource_name": "tx-", "pattern_type": "prefixed", "permission": "allow",
              "host": "*", "operations": ["Write", "DescribeConfigs"], "message": "add ops"}
    assert admin.apply_acl(client, action, dry_run=True) == "(dry run) add ops"
    assert client.created == []
    assert admin.apply_acl(client, action, dry_run=False) == "add ops"
    assert [(a.operation.name, a.resource_pattern.resource_type.name,
             a.resource_pattern.pattern_type.name) for a in client.created] == [
        ("WRITE", "TRANSACTIONAL_ID", "PREFIXED"), ("DESCRIBE_CONFIGS", "TRANSACTIONAL_ID",
                                                    "PREFIXED")]


def scram_512(helper: ModuleType, iterations: int = 8192) -> dict[str, object]:
    """describe_user_scram_credentials' answer for a user with a SCRAM-SHA-512 credential."""
    return {"error": None, "credential_infos": [
        {"mechanism": helper.kafka_scram.ScramMechanism.SCRAM_SHA_512,
         "iterations": iterations}]}


class Logins:
    """Logins on a cluster that holds ``passwords``, each one tried kept by name."""

    def __init__(self, passwords: dict[str, str]) -> None:
        self.passwords, self.tried = passwords, []

    def __call__(self, name: str, password: str) -> bool:
        self.tried.append(name)
        return self.passwords.get(name) == password


def test_a_password_is_set_only_for_the_user_who_does_not_log_in_with_it(
        helper: ModuleType, tmp_path: Path) -> None:
    scram = helper.kafka_scram
    client = Recorder({"app": scram_512(helper), "ops": scram_512(helper)})
    login = Logins({"app": "one", "ops": "set-by-hand"})
    spec = {"iterations": 8192, "users": [{"name": "app", "password": "one"},
                                          {"name": "ops", "password": "two"}]}
    state = tmp_path / "users.json"
    assert scram.converge_users(client, spec, True, login, str(state)) == ["ops"]
    assert sorted(login.tried) == ["app", "ops"] and client.sent == []
    assert scram.converge_users(client, spec, False, login, str(state)) == ["ops"]
    (request,) = client.sent
    assert request.deletions == []
    assert [(u[0], u[1], u[2]) for u in request.upsertions] == [("ops", 2, 8192)]
    assert not state.exists()  # a broker that logs users in keeps no hashes


def test_other_iterations_a_missing_credential_and_absent_users_need_no_login(
        helper: ModuleType) -> None:
    sha_256 = {"error": None, "credential_infos": [
        {"mechanism": helper.kafka_scram.ScramMechanism.SCRAM_SHA_256, "iterations": 8192}]}
    client = Recorder({"app": scram_512(helper, 4096), "old": scram_512(helper),
                       "web": sha_256})
    login = Logins({"app": "one", "web": "three"})
    spec = {"iterations": 8192, "users": [
        {"name": "app", "password": "one"}, {"name": "web", "password": "three"},
        {"name": "new", "password": "four"}, {"name": "old", "state": "absent"},
        {"name": "gone", "state": "absent"}]}
    assert helper.kafka_scram.converge_users(client, spec, False, login) == [
        "app", "web", "new", "old"]
    assert login.tried == []
    (request,) = client.sent
    assert [d[0] for d in request.deletions] == ["old"]
    assert [(u[0], u[2]) for u in request.upsertions] == [("app", 8192), ("web", 8192),
                                                           ("new", 8192)]


def test_logins_are_tried_at_once(helper: ModuleType) -> None:
    """Three logins that each wait for the other two: tried one after another, none returns."""
    arrived = threading.Barrier(3, timeout=10)
    login = Logins({"a": "x", "b": "y", "c": "z"})

    def waiting(name: str, password: str) -> bool:
        arrived.wait()
        return login(name, password)

    users = [{"name": name, "password": "x"} for name in "abc"]
    assert helper.kafka_scram.converge_users(
        Recorder({n: scram_512(helper) for n in "abc"}), {"iterations": 8192, "users": users},
        True, waiting) == ["b", "c"]


@contextlib.contextmanager
def silent_listener() -> Iterator[str]:
    """A listener that takes connections and never answers."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield f"127.0.0.1:{server.getsockname()[1]}"


@contextlib.contextmanager
def closed_listener() -> Iterator[str]:
    """A port nothing listens on: the connection is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    yield f"127.0.0.1:{port}"


@pytest.mark.parametrize(("listener", "why"), [
    (closed_listener, "ConnectionRefusedError"),
    (silent_listener, "TimeoutError: _ssl.c:[0-9]+: The handshake operation timed out"),
])
@pytest.mark.usefixtures("no_process")
def test_a_login_that_cannot_be_tried_fails_the_answer_naming_the_listener(
        helper: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], listener: Callable[[], Any], why: str) -> None:
    """A refused connection or a listener that does not answer says nothing of the password:
    the state command fails, naming the listener, and reports no user as changed."""
    scram = helper.kafka_scram
    monkeypatch.setattr(scram, "LOGIN_TIMEOUT_S", 0.5)
    monkeypatch.setattr(scram, "tls_context", lambda _server: ssl.create_default_context())
    client = StateAdmin({"app": scram_512(helper)})
    wanted = {"users": {"iterations": 8192, "users": [{"name": "app", "password": "s3cret"}]}}
    monkeypatch.setattr(sys, "stdin", SimpleNamespace(read=lambda: json.dumps(wanted)))
    with listener() as address:
        conf = (f"listeners=CLIENT://0.0.0.0:{address.rpartition(':')[2]}\n"
                f"advertised.listeners=CLIENT://{address}\n"
                "listener.security.protocol.map=CLIENT:SASL_SSL\n"
                "listener.name.client.sasl.enabled.mechanisms=SCRAM-SHA-512\n")
        with pytest.raises(SystemExit) as failed:
            run_admin_command(helper, tmp_path, monkeypatch, client, "state", conf=conf)
    assert re.search(f"cannot log in on the SASL listener {address}: {why}", str(failed.value))
    assert "s3cret" not in str(failed.value)
    assert capsys.readouterr().out == "" and client.sent == []


def fake_broker(end: socket.socket, answers: list[Any]) -> None:
    """Answer each request read from ``end`` with the next of ``answers``, then hang up at once,
    as a broker does after a failed login."""
    for answer in answers:
        size = struct.unpack(">i", end.recv(4))[0]
        request = end.recv(size, socket.MSG_WAITALL)
        answer.with_header(correlation_id=struct.unpack(">i", request[4:8])[0])
        end.sendall(answer.encode(header=True, framed=True))
    end.close()


@pytest.mark.parametrize(("answers", "logged_in"), [
    ([SaslHandshakeResponse(error_code=0, mechanisms=["SCRAM-SHA-512"], version=1),
      SaslAuthenticateResponse(error_code=58, error_message="Authentication failed",
                               auth_bytes=b"", session_lifetime_ms=0, version=1)], False),
    ([SaslHandshakeResponse(error_code=0, mechanisms=["PLAIN"], version=1)], None),
    ([SaslHandshakeResponse(error_code=0, mechanisms=["SCRAM-SHA-512"], version=1)], None),
])
def test_only_kafkas_authentication_failure_says_the_password_differs(
        helper: ModuleType, answers: list[Any], logged_in: bool | None) -> None:
    """SASL_AUTHENTICATION_FAILED, the connection closed right behind it: the password differs.
    A listener without SCRAM-SHA-512, or one that hangs up mid-exchange: an error."""
    client, broker = socket.socketpair()
    serving = threading.Thread(target=fake_broker, args=(broker, answers))
    serving.start()
    try:
        if logged_in is None:
            with pytest.raises((ValueError, ConnectionError)):
                helper.kafka_scram._scram_exchange(client, "app", "s3cret")
        else:
            assert helper.kafka_scram._scram_exchange(client, "app", "s3cret") is logged_in
    finally:
        serving.join(timeout=10)
        client.close()


@pytest.mark.parametrize(("server", "listener"), [
    # As kafkaform writes it: the advertised name, the one in the broker's certificate.
    ("listeners=BROKER://0.0.0.0:9091,CLIENT://0.0.0.0:9092\n"
     "advertised.listeners=BROKER://k1:9091,CLIENT://k1:9092\n"
     "listener.security.protocol.map=BROKER:SSL,CLIENT:SASL_SSL\n"
     "sasl.enabled.mechanisms=SCRAM-SHA-512\n"
     "listener.name.client.sasl.enabled.mechanisms=SCRAM-SHA-512\n", "k1:9092"),
    ("listeners=SASL_SSL://k1:9094\nsasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512\n", "k1:9094"),
    ("listeners=CLIENT://k1:9092\nlistener.security.protocol.map=CLIENT:SASL_SSL\n"
     "sasl.enabled.mechanisms=SCRAM-SHA-512\n"
     "listener.name.client.sasl.enabled.mechanisms=PLAIN\n", None),
    ("listeners=SASL_SSL://k1:9094\n", None),  # Kafka's default mechanism: GSSAPI
    ("listeners=BROKER://k1:9091\nlistener.security.protocol.map=BROKER:SSL\n", None),
])
def test_the_login_listener_is_the_sasl_ssl_one_offering_scram(
        helper: ModuleType, tmp_path: Path, server: str, listener: str | None) -> None:
    (tmp_path / "server.properties").write_text(server)
    properties = helper.properties(str(tmp_path / "server.properties"))
    assert helper.kafka_scram.scram_listener(properties) == listener


def test_without_a_sasl_listener_the_hash_kept_of_what_was_set_decides(
        helper: ModuleType, tmp_path: Path) -> None:
    scram = helper.kafka_scram
    state = str(tmp_path / "state" / "users.json")
    spec = {"iterations": 8192, "users": [{"name": "app", "password": "one"},
                                          {"name": "old", "state": "absent"}]}
    client = Recorder({"old": scram_512(helper)})
    assert scram.converge_users(client, spec, False, None, state) == ["app", "old"]
    (request,) = client.sent
    assert [d[0] for d in request.deletions] == ["old"]
    assert [(u[0], u[1], u[2]) for u in request.upsertions] == [("app", 2, 8192)]
    assert "one" not in Path(state).read_text(encoding="utf-8")
    again = Recorder({"app": scram_512(helper)})
    assert scram.converge_users(again, spec, False, None, state) == []
    assert again.sent == []
    changed = {**spec, "users": [{"name": "app", "password": "two"}]}
    assert scram.converge_users(again, changed, True, None, state) == ["app"]
    assert scram.converge_users(again, {**spec, "iterations": 4096}, True, None,
                                state) == ["app"]
    assert again.sent == []


class TopicAdmin:
    """An admin client that keeps the topic changes it is sent, in order, and refuses to raise
    the partitions of ``refused``."""

    def __init__(self, refused: str = "") -> None:
        self.refused, self.calls = refused, []

    def create_topics(self, new: dict[str, object]) -> None:
        self.calls += [("create", name) for name in new]

    def create_partitions(self, raised: dict[str, int]) -> None:
        if self.refused in raised:
            raise RuntimeError(f"InvalidPartitionsError: {self.refused}")
        self.calls += [("partitions", name) for name in raised]

    def alter_configs(self, resources: list[object], **kwargs: object) -> dict[str, object]:
        self.calls += [("configs", resource.name) for resource in resources]
        return {}

    def close(self) -> None:
        pass


#: kafkaform.topics.plan's actions for a new topic a and a topic b with more partitions and a
#: config declared: three, in this order.
TOPIC_ACTIONS = topics.plan(
    [{"name": "a", "partitions": 3, "replication_factor": 2},
     {"name": "b", "partitions": 4, "replication_factor": 2, "configs": {"retention.ms": 60000}}],
    {"b": {"partitions": 2, "replication_factor": 2, "configs": {}}})["actions"]


def run_admin_command(helper: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                      client: object, *argv: str,
                      conf: str = "advertised.listeners=BROKER://k1:9091\n") -> tuple[int, int]:
    """The helper's exit code for ``argv`` with ``client`` as its admin client (``conf``: its
    server.properties), and how many clients it opened."""
    (tmp_path / "server.properties").write_text(conf)
    opened: list[object] = []

    def opener(*_given: object) -> object:
        opened.append(client)
        return client

    monkeypatch.setattr(helper.Tools, "session",
                        lambda _tools: helper.kafka_admin.Session("", "", opener=opener))
    return helper.main(["kafkaform-kafka", "--conf", str(tmp_path), *argv]), len(opened)


@pytest.mark.usefixtures("no_process")
def test_apply_takes_a_list_of_actions_and_applies_each_in_order_with_one_client(
        helper: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert [a["action"] for a in TOPIC_ACTIONS] == ["create", "partitions", "configs"]
    client = TopicAdmin()
    assert run_admin_command(helper, tmp_path, monkeypatch, client,
                             "apply", json.dumps(TOPIC_ACTIONS)) == (0, 1)
    assert client.calls == [("create", "a"), ("partitions", "b"), ("configs", "b")]
    assert capsys.readouterr().out.splitlines() == [a["message"] for a in TOPIC_ACTIONS]


@pytest.mark.usefixtures("no_process")
def test_apply_still_takes_one_action_and_an_empty_list_opens_no_client(
        helper: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    client = TopicAdmin()
    assert run_admin_command(helper, tmp_path, monkeypatch, client,
                             "apply", json.dumps(TOPIC_ACTIONS[1])) == (0, 1)
    assert client.calls == [("partitions", "b")]
    assert capsys.readouterr().out == f"{TOPIC_ACTIONS[1]['message']}\n"
    assert run_admin_command(helper, tmp_path, monkeypatch, client, "apply", "[]") == (0, 0)
    assert capsys.readouterr().out == ""


@pytest.mark.usefixtures("no_process")
def test_the_first_action_that_fails_stops_the_run_and_is_named(
        helper: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    client = TopicAdmin(refused="b")
    with pytest.raises(SystemExit, match=re.escape(
            "action 2 of 3 failed, 'raise partitions of b from 2 to 4': "
            "RuntimeError('InvalidPartitionsError: b') (the 1 before it were applied, the 1 "
            "after it were not tried)")):
        run_admin_command(helper, tmp_path, monkeypatch, client,
                          "apply", json.dumps(TOPIC_ACTIONS))
    assert client.calls == [("create", "a")]
    assert capsys.readouterr().out == f"{TOPIC_ACTIONS[0]['message']}\n"


#: kafkaform.acls.plan's actions on a cluster with no ACLs: two adds.
ACL_ACTIONS = acls.plan(
    [{"principal": "User:app", "resource_type": "topic", "resource_name": "orders",
      "operations": ["Read", "Describe"]},
     {"principal": "User:app", "resource_type": "group", "resource_name": "app-",
      "pattern_type": "prefixed", "operations": ["Read"]}], "")


@pytest.mark.usefixtures("no_process")
@pytest.mark.parametrize("dry_run", [False, True])
def test_acl_apply_takes_a_list_of_actions_on_stdin(
        helper: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], dry_run: bool) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(ACL_ACTIONS) + "\n"))
    client = Recorder({})
    assert run_admin_command(helper, tmp_path, monkeypatch, client,
                             *(["--dry-run"] if dry_run else []), "acl-apply", "-")[0] == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{'(dry run) ' if dry_run else ''}{a['message']}" for a in ACL_ACTIONS]
    assert [(a.resource_pattern.resource_name, a.operation.name) for a in client.created] == (
        [] if dry_run else [("orders", "READ"), ("orders", "DESCRIBE"), ("app-", "READ")])


def test_actions_that_are_not_json_objects_are_refused_before_any_is_applied(
        helper: ModuleType) -> None:
    refused = re.escape("one action (a JSON object) or a JSON list of them")
    with pytest.raises(SystemExit, match=refused):
        helper.kafka_admin.planned_actions(json.dumps([TOPIC_ACTIONS[0], "b"]))


@pytest.mark.parametrize(("release", "refused"), [("3.9.2", True), ("4.0.1", True),
                                                  ("4.1.2", False), ("4.2.0", False)])
def test_features_refuses_a_release_older_than_the_clusters_metadata_version(
        helper: ModuleType, capsys: pytest.CaptureFixture[str], release: str,
        refused: bool) -> None:
    """KR-10: a node restarted on a release that cannot read the cluster's metadata.version would
    not start; the roll is refused before its first restart."""
    tools = SimpleNamespace(
        admin=lambda: [],
        run=lambda main, *args, check=True: SimpleNamespace(
            stdout=FEATURES.format(finalized="4.1-IV1"), stderr=""),
        change=lambda main, *args: pytest.fail("a refused check changes nothing"))
    if refused:
        with pytest.raises(SystemExit, match=re.escape(f"4.1-IV1, newer than Kafka {release}")):
            helper.features(tools, release)
    else:
        assert helper.features(tools, release) == 0
        assert json.loads(capsys.readouterr().out)["raised"] is False


def test_features_says_why_when_the_release_cannot_read_the_cluster(
        helper: ModuleType) -> None:
    tools = SimpleNamespace(
        admin=lambda: [],
        run=lambda main, *args, check=True: SimpleNamespace(
            stdout="", stderr="Unknown metadata.version feature level: 27"))
    with pytest.raises(SystemExit, match=r"cannot read the cluster's metadata\.version with "
                                         r"Kafka 3\.9\.2.*level: 27.*cannot go back"):
        helper.features(tools, "3.9.2")


def test_the_helper_imports_its_client_from_where_the_role_installs_it(
        helper: ModuleType) -> None:
    """The helper is a standalone script with its own copy of the plan's directory."""
    assert helper.ADMIN_LIB == ADMIN_LIB


def test_tools_start_with_the_short_lived_jvm_options(helper: ModuleType) -> None:
    """The helper's tools module (kafkaform_tools.py) is standalone, with its own copy of
    kafkaform.jvm's options."""
    assert helper.kafka_tools.JVM[:len(KAFKA_TOOL)] == list(KAFKA_TOOL)


# A controller's journal lines as Kafka 3.9 logs its registration (KR-11), shortened.
SENT = ("[2026-11-28 23:09:01,120] INFO [ControllerRegistrationManager id=3001 incarnation=x] "
        "sendControllerRegistration: attempting to send ControllerRegistrationRequestData(...)")
DROPPED = ("[2026-11-28 23:09:06,131] ERROR [ControllerRegistrationManager id=3001 incarnation=x] "
           "RegistrationResponseHandler: channel manager timed out before sending the request.")
PERSISTED = ("[2026-11-28 23:09:02,480] INFO [ControllerRegistrationManager id=3001 "
             "incarnation=x] Our registration has been persisted to the metadata log.")


def controller_conf(tmp_path: Path, roles: str = "controller") -> list[str]:
    (tmp_path / "server.properties").write_text(
        f"process.roles={roles}\nnode.id=3001\nlisteners=CONTROLLER://c1:9093\n")
    return ["kafkaform-kafka", "--conf", str(tmp_path), "registration"]


@pytest.mark.parametrize(("journal", "state", "code"), [
    ([SENT, PERSISTED], "registered", 0),
    ([SENT, DROPPED], "dropped", 1),
    # A Kafka that retries after the timeout registers in the same process.
    ([SENT, DROPPED, SENT, PERSISTED], "registered", 0),
    # Still waiting when the wait ends: the health gates judge the node.
    ([SENT], "pending", 0),
])
def test_a_controllers_start_fails_only_when_kafka_dropped_its_registration(
        helper: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        journal: list[str], state: str, code: int) -> None:
    controller_conf(tmp_path)
    tools = helper.Tools(SimpleNamespace(conf=str(tmp_path), bootstrap="", libs="", java=""))
    assert helper.registration(tools, 0.0, read=lambda: journal) == code
    assert json.loads(capsys.readouterr().out) == {"registration": state}


def test_a_starting_controller_is_waited_for_until_its_registration_lands(
        helper: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    controller_conf(tmp_path)
    tools = helper.Tools(SimpleNamespace(conf=str(tmp_path), bootstrap="", libs="", java=""))
    reads = iter([[], [SENT], [SENT, PERSISTED]])
    now = [0.0]
    assert helper.registration(tools, 60.0, read=lambda: next(reads),
                               sleep=lambda s: now.__setitem__(0, now[0] + s),
                               clock=lambda: now[0]) == 0
    assert json.loads(capsys.readouterr().out) == {"registration": "registered"}
    assert now[0] == 2 * helper.REGISTRATION_POLL_S


@pytest.mark.usefixtures("no_process")
@pytest.mark.parametrize("roles", ["broker", "broker,controller", ""])
def test_only_a_dedicated_controller_waits_for_a_registration(
        helper: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        roles: str) -> None:
    assert helper.main(controller_conf(tmp_path, roles)) == 0
    assert "not a dedicated controller" in capsys.readouterr().out


def test_a_cluster_id_beginning_with_a_dash_reaches_kafkas_storage_tool_whole(
        helper: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A base64url cluster id may begin with "-" (a running cluster's did, in a migration):
    passed as a separate value, the helper's and Kafka's parsers both took it for an option."""
    blank = tmp_path / "blank"
    (tmp_path / "server.properties").write_text(f"process.roles=controller\nlog.dirs={blank}\n")
    ran: list[list[str]] = []

    def storage_tool(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        ran.append(argv)
        blank.mkdir()
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(subprocess, "run", storage_tool)
    assert helper.main(["kafkaform-kafka", "--conf", str(tmp_path), "storage",
                        "--cluster-id=-3tiUGnOQzGepXxILMP_TA", "--owner", "root:root"]) == 0
    assert "--cluster-id=-3tiUGnOQzGepXxILMP_TA" in ran[0]
    assert json.loads(capsys.readouterr().out) == {"formatted": [str(blank)]}


class StateAdmin(Recorder):
    """An admin client with one topic, one ACL binding and one SCRAM user."""

    def describe_topics(self) -> list[dict[str, object]]:
        return [{"name": "orders", "is_internal": False, "partitions": [
            {"replica_nodes": [1, 2]}, {"replica_nodes": [2, 3]}]},
                {"name": "__consumer_offsets", "is_internal": True, "partitions": []}]

    def describe_configs(self, resources: list[object], **kwargs: object) -> dict[str, object]:
        return {"topic": {"orders": {"retention.ms": {"value": "60000",
                                                      "config_source": "TOPIC_CONFIG"}}}}

    def describe_acls(self, acl_filter: object) -> tuple[list[object], None]:
        kinds = SimpleNamespace
        pattern = kinds(resource_type=kinds(name="TOPIC"), resource_name="orders",
                        pattern_type=kinds(name="LITERAL"))
        return [kinds(resource_pattern=pattern, principal="User:app", host="*",
                      operation=kinds(name="READ"), permission_type=kinds(name="ALLOW"))], None

    def close(self) -> None:
        pass


def test_state_answers_topics_acls_and_users_in_one_client_and_changes_nothing(
        helper: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    client = StateAdmin({"app": scram_512(helper)})
    # No SASL listener in server.properties: the hashes kept of what was set decide.
    monkeypatch.setattr(helper.kafka_scram, "SCRAM_STATE", str(tmp_path / "users.json"))
    wanted = {"topics": True, "acls": True,
              "users": {"iterations": 8192, "users": [{"name": "app", "password": "pw"}]}}
    monkeypatch.setattr(sys, "stdin", SimpleNamespace(read=lambda: json.dumps(wanted)))
    assert run_admin_command(helper, tmp_path, monkeypatch, client, "state") == (0, 1)
    answer = json.loads(capsys.readouterr().out)
    assert topics.parse_describe(json.dumps(answer)) == {
        "orders": {"partitions": 2, "replication_factor": 2,
                   "configs": {"retention.ms": "60000"}}}
    assert answer["bindings"] == [["TOPIC", "orders", "LITERAL", "User:app", "*", "READ",
                                   "ALLOW"]]
    assert answer["users_changed"] == ["app"]  # no hash of its password kept yet
    assert client.sent == [] and client.created == []
    monkeypatch.setattr(sys, "stdin", SimpleNamespace(read=lambda: json.dumps({"acls": True})))
    assert run_admin_command(helper, tmp_path, monkeypatch, client, "state") == (0, 1)
    assert json.loads(capsys.readouterr().out) == {"bindings": answer["bindings"]}


class PlacementAdmin(StateAdmin):
    """Partitions of a user topic that sets min.insync.replicas and of an internal one that
    inherits the brokers' value."""

    def describe_topics(self) -> list[dict[str, object]]:
        return [{"name": "orders", "is_internal": False, "partitions": [
            {"partition_index": 0, "leader_id": 1, "replica_nodes": [1, 2, 3],
             "isr_nodes": [1, 3]}]},
                {"name": "__consumer_offsets", "is_internal": True, "partitions": [
                    {"partition_index": 7, "leader_id": 2, "replica_nodes": [2, 3, 1],
                     "isr_nodes": [2, 3, 1]}]}]

    def describe_cluster(self) -> dict[str, object]:
        return {"controller_id": 1, "brokers": [
            {"broker_id": 2, "rack": "b", "is_fenced": False},
            {"broker_id": 1, "rack": "a", "is_fenced": False},
            {"broker_id": 3, "rack": None, "is_fenced": False}]}

    def describe_log_dirs(self, brokers: list[int]) -> list[dict[str, object]]:
        """Broker 1 answers in full (two directories, one failed), 2 not at all, 3 without its
        disks' sizes (a Kafka older than 3.3)."""
        if brokers == [2]:
            raise OSError("broker 2 did not answer")
        parts = [{"name": "orders", "partitions": [
            {"partition_index": 0, "partition_size": 300 if brokers == [1] else 500}]}]
        if brokers == [3]:
            return [{"broker": 3, "log_dirs": [{"error_code": 0, "log_dir": "/d0",
                                                "topics": parts}]}]
        return [{"broker": 1, "log_dirs": [
            {"error_code": 0, "log_dir": "/d0", "topics": parts, "total_bytes": 1000,
             "usable_bytes": 400},
            {"error_code": 0, "log_dir": "/d1", "topics": [], "total_bytes": 1000,
             "usable_bytes": 900},
            {"error_code": 57, "log_dir": "/d2", "topics": [], "total_bytes": 1000,
             "usable_bytes": 1000}]}]

    def describe_features(self) -> dict[str, object]:
        """A KRaft cluster at metadata.version 4.4-IV2 (level 33)."""
        return {"metadata.version": {"supported": (7, 33), "finalized": (1, 33)}}

    def describe_configs(self, resources: list[object], **kwargs: object) -> dict[str, object]:
        assert kwargs == {"config_filter": "all"}  # the effective value, the brokers' included
        return {"topic": {
            "orders": {"min.insync.replicas": {"value": "2", "config_source": "TOPIC_CONFIG"}},
            "__consumer_offsets": {"min.insync.replicas": {
                "value": "3", "config_source": "STATIC_BROKER_CONFIG"}}}}


def test_placement_gives_each_partitions_replicas_isr_and_effective_min_insync(
        helper: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from kafkaform.plans.restart_batches import batch_problem, placement

    client = PlacementAdmin({})
    assert run_admin_command(helper, tmp_path, monkeypatch, client, "placement") == (0, 1)
    answer = json.loads(capsys.readouterr().out)
    assert answer == {"partitions": [
        {"topic": "orders", "partition": 0, "leader": 1, "replicas": [1, 2, 3], "isr": [1, 3],
         "min_insync": 2, "size": 500},
        {"topic": "__consumer_offsets", "partition": 7, "leader": 2, "replicas": [2, 3, 1],
         "isr": [2, 3, 1], "min_insync": 3, "size": 0}],
        # Each registered broker's rack and disks (the failed directory not counted), where
        # replicas may move (plans.broker_moves); a partition's size is its largest copy's.
        # Each log directory's bytes and replicas too: where a broker's replicas move between
        # its own directories (plans.log_dir_moves).
        "brokers": [{"id": 1, "rack": "a", "total": 2000, "usable": 1300, "log_dirs": {
                        "/d0": {"total": 1000, "usable": 400, "replicas": {"orders-0": 300}},
                        "/d1": {"total": 1000, "usable": 900, "replicas": {}}}},
                    {"id": 2, "rack": "b", "total": None, "usable": None, "log_dirs": {}},
                    {"id": 3, "rack": None, "total": None, "usable": None, "log_dirs": {
                        "/d0": {"total": None, "usable": None, "replicas": {"orders-0": 500}}}}],
        # Whether brokers can be cordoned (plans.cordon, OP-08).
        "metadata_level": 33}
    # What the plan makes of it: broker 2 holds a replica of the internal topic, whose every
    # replica must stay in sync.
    assert "__consumer_offsets-7" in batch_problem([2], placement(answer))
    assert "orders-0" in batch_problem([3], placement(answer))


def test_status_answers_the_listener_and_the_cluster_with_its_controller_and_leaders(
        helper: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """kafkaform status's question to each broker (kafkaform.status_collect): a node without TLS
    has no keystore to read; in ZooKeeper mode no quorum is asked."""
    monkeypatch.setattr(helper.kafka_admin, "accepts_connections",
                        lambda address, timeout=2.0: address == "k1:9091")
    assert run_admin_command(helper, tmp_path, monkeypatch, PlacementAdmin({}), "status") == (0, 1)
    answer = json.loads(capsys.readouterr().out)
    assert (answer["listener"], answer["listening"], answer["certificate"]) == ("k1:9091", True, "")
    assert "quorum" not in answer and "cluster_error" not in answer
    cluster = answer["cluster"]
    assert (cluster["controller"], cluster["registered"]) == (1, [1, 2, 3])
    assert [(p["topic"], p["leader"], p["isr"]) for p in cluster["partitions"]] == [
        ("orders", 1, [1, 3]), ("__consumer_offsets", 2, [2, 3, 1])]
    assert cluster["brokers"][0] == {"id": 1, "rack": "a", "total": 2000, "usable": 1300}


def test_status_of_a_broker_whose_listener_is_closed_opens_no_client(
        helper: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(helper.kafka_admin, "accepts_connections",
                        lambda address, timeout=2.0: False)
    assert run_admin_command(helper, tmp_path, monkeypatch, PlacementAdmin({}), "status") == (0, 0)
    answer = json.loads(capsys.readouterr().out)
    assert answer["listening"] is False and "cluster" not in answer


def test_the_keystores_certificate_is_read_with_the_password_server_properties_names(
        helper: ModuleType, tmp_path: Path) -> None:
    """The certificate status reports the expiry of, and reload-tls compares with what the
    listeners present: a real PKCS12 keystore opened by openssl with its ${file:} password."""
    from datetime import UTC, datetime, timedelta

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import pkcs12

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, "k1")])
    now = datetime.now(UTC)
    cert = x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(
        key.public_key()).serial_number(7).not_valid_before(now).not_valid_after(
        now + timedelta(days=20)).sign(key, hashes.SHA256())
    (tmp_path / "keystore.p12").write_bytes(pkcs12.serialize_key_and_certificates(
        b"k1", key, cert, None, serialization.BestAvailableEncryption(b"s3cret")))
    (tmp_path / "secrets.properties").write_text("keystore=s3cret\n")
    server = {"ssl.keystore.location": str(tmp_path / "keystore.p12"),
              "ssl.keystore.password": f"${{file:{tmp_path}/secrets.properties:keystore}}"}
    pem = helper.kafka_admin.keystore_certificate(server)
    assert x509.load_pem_x509_certificate(pem.encode()) == cert
    assert helper.kafka_admin.keystore_certificate({}) == ""  # a node without TLS
    server["ssl.keystore.password"] = "wrong"
    found = helper.kafka_admin.node_status(helper.kafka_admin.Session("", ""), "k1:1", server)
    assert found["certificate_error"].startswith("cannot read the keystore")


def test_cluster_defaults_sets_only_the_named_defaults_that_differ(
        helper: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    described = ("Default configs for brokers in the cluster are:\n"
                 "  min.insync.replicas=1 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:"
                 "min.insync.replicas=1}\n"
                 "  log.cleaner.threads=2 sensitive=false synonyms={}\n")
    ran: list[tuple[str, ...]] = []

    def run(main_class: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        ran.append((main_class, *args))
        return subprocess.CompletedProcess(args, 0, described if "--describe" in args else "", "")

    tools = SimpleNamespace(args=SimpleNamespace(libs=str(tmp_path), dry_run=False),
                            admin=lambda: ["--bootstrap-server", "k1:9091"], run=run)
    tools.change = lambda *a: run(*a)
    assert helper.cluster_defaults(tools, {"min.insync.replicas": "2"}) == 0
    assert json.loads(capsys.readouterr().out) == {"changed": ["min.insync.replicas"],
                                                   "was": {"min.insync.replicas": "1"}}
    # No tools jar here: Kafka 3.9's Scala class. Only the named key is set.
    assert ran[-1] == ("kafka.admin.ConfigCommand", "--bootstrap-server", "k1:9091",
                       "--entity-type", "brokers", "--entity-default", "--alter",
                       "--add-config", "min.insync.replicas=2")
    ran.clear()
    assert helper.cluster_defaults(tools, {"min.insync.replicas": "1"}) == 0
    assert json.loads(capsys.readouterr().out) == {"changed": [], "was": {}}
    assert len(ran) == 1  # described, nothing set
    # No cluster-wide value at all (a cluster migrated from ZooKeeper, without eligible leader
    # replicas): each broker's own min.insync.replicas applies, and nothing is set.
    described = "Default configs for brokers in the cluster are:\n"
    ran.clear()
    assert helper.cluster_defaults(tools, {"min.insync.replicas": "2"}) == 0
    assert json.loads(capsys.readouterr().out) == {"changed": [], "was": {}}
    assert len(ran) == 1
