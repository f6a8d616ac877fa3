"""The built mirror's archives really run: Kafka tools, a ZooKeeper server, a Spark master.

Needs a built mirror and Java 17 (~30 s, most of it unpacking Spark); tests/run-all builds the
mirror before it runs tests/integration:

    .venv/bin/kafkaform mirror build
    .venv/bin/python -m pytest tests/integration/test_mirror_archives.py

The mirror directory is $KAFKAFORM_MIRROR_DIR, else the default of `kafkaform mirror build`.
Servers listen on 127.0.0.1 only, on ports from the OS.
"""

from __future__ import annotations

import json
import os
import pwd
import signal
import socket
import subprocess
import tarfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkaform import mirror
from kafkaform.catalog import CATALOG, Component
from kafkaform.checksum import file_sha512, parse_sha512

MIRROR = Path(os.environ.get("KAFKAFORM_MIRROR_DIR") or mirror.default_mirror_dir())



def free_ports(count: int) -> list[int]:
    """Distinct free loopback ports (all probes stay open until each has its own port)."""
    probes = [socket.socket() for _ in range(count)]
    try:
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [int(probe.getsockname()[1]) for probe in probes]
    finally:
        for probe in probes:
            probe.close()


def unpack(component: Component, into: Path) -> Path:
    """Verify the archive against its published .sha512 and unpack it like the role does."""
    archive = MIRROR / component.dist_path
    if not archive.is_file():
        pytest.fail(f"{archive} is missing: run `kafkaform mirror build` first")
    published = (MIRROR / component.sha512_path).read_text()
    assert parse_sha512(published, component.archive) == file_sha512(archive)
    with tarfile.open(archive) as tar:
        assert {name.split("/")[0] for name in tar.getnames()} == {component.top_dir}
        mirror.extract_safely(tar, into)
    return into / component.top_dir


@pytest.fixture(scope="module")
def kafka_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return unpack(CATALOG.kafka, tmp_path_factory.mktemp("kafka"))


def java(home: Path, classpath: str, *args: str, timeout: float = 60) -> str:
    """Run a main class as the roles do (`java -cp ... Main args`); return stdout + stderr."""
    result = subprocess.run(
        ["java", "-cp", classpath, *args],
        cwd=home,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return result.stdout + result.stderr


def test_kafka_broker_and_topic_command_report_the_catalog_version(kafka_home: Path) -> None:
    version = CATALOG.kafka.version
    # The release's tools log4j config: warnings to stderr, and no "no appenders" noise.
    log4j = "-Dlog4j.configuration=file:config/tools-log4j.properties"
    for main in ("kafka.Kafka", "org.apache.kafka.tools.TopicCommand"):
        assert java(kafka_home, "libs/*", log4j, main, "--version").strip() == version


@pytest.mark.parametrize(
    ("main", "expected"),
    [
        ("org.apache.kafka.tools.VerifiableProducer", "usage: verifiable-producer"),
        ("org.apache.kafka.tools.VerifiableConsumer", "usage: verifiable-consumer"),
        ("org.apache.kafka.tools.ProducerPerformance", "usage: producer-performance"),
        ("org.apache.kafka.tools.ConsumerPerformance", "--bootstrap-server"),
        ("org.apache.kafka.tools.LeaderElectionCommand", "--election-type"),
    ],
)
def test_kafka_tools_load(kafka_home: Path, main: str, expected: str) -> None:
    output = java(kafka_home, "libs/*", main, "--help")
    assert expected in output and "ClassNotFoundException" not in output


def test_kafka_ships_the_reload4j_binding(kafka_home: Path) -> None:
    libs = {path.name for path in (kafka_home / "libs").iterdir()}
    assert any(name.startswith("reload4j-") for name in libs)
    assert any(name.startswith("slf4j-reload4j-") for name in libs)


@pytest.fixture(scope="module")
def kafka4_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return unpack(CATALOG.kafka_upgrade, tmp_path_factory.mktemp("kafka4"))


def test_kafka_4_reports_its_version_and_ships_its_tools(kafka4_home: Path) -> None:
    log4j2 = "-Dlog4j2.configurationFile=config/tools-log4j2.yaml"
    for main in ("kafka.Kafka", "org.apache.kafka.tools.TopicCommand"):
        assert java(kafka4_home, "libs/*", log4j2, main, "--version").strip() == \
            CATALOG.kafka_upgrade.version
    for script in ("kafka-acls.sh", "kafka-features.sh", "kafka-storage.sh"):
        main = (kafka4_home / "bin" / script).read_text().split()[-2]
        output = java(kafka4_home, "libs/*", log4j2, main, "--help")
        assert "ClassNotFoundException" not in output and "usage" in output.lower(), script


def test_kafka_4_starts_in_kraft_mode_and_logs_through_log4j2(kafka4_home: Path,
                                                             tmp_path: Path) -> None:
    """The archive's jars, its SLF4J binding and its log4j2.yaml make a broker that starts and
    writes its server.log (Kafka 4's POMs leave the binding out: without it, no log at all)."""
    client, quorum = free_ports(2)
    config = tmp_path / "server.properties"
    config.write_text(
        "process.roles=broker,controller\nnode.id=1\n"
        f"controller.quorum.voters=1@127.0.0.1:{quorum}\n"
        f"listeners=PLAINTEXT://127.0.0.1:{client},CONTROLLER://127.0.0.1:{quorum}\n"
        "controller.listener.names=CONTROLLER\n"
        "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT\n"
        f"log.dirs={tmp_path / 'data'}\noffsets.topic.replication.factor=1\n"
        # The log cleaner allocates its 128 MB dedupe buffer at start: in a 256 MB heap that
        # ran out of memory once in the suite.
        "log.cleaner.dedupe.buffer.size=16777216\n")
    formatted = java(kafka4_home, "libs/*", "-Dlog4j2.configurationFile=config/tools-log4j2.yaml",
                     "kafka.tools.StorageTool", "format", "--cluster-id", "MkU3OEVBNTcwNTJENDM2Qg",
                     "--config", str(config))
    assert "Formatting" in formatted, formatted
    logs = tmp_path / "logs"
    with subprocess.Popen(
        ["java", "-Xmx256m", "-cp", "libs/*", f"-Dkafka.logs.dir={logs}",
         "-Dlog4j2.configurationFile=config/log4j2.yaml", "kafka.Kafka", str(config)],
        cwd=kafka4_home, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    ) as broker:
        try:
            deadline = time.monotonic() + 90
            log = logs / "server.log"
            while time.monotonic() < deadline and broker.poll() is None:
                if log.is_file() and "Kafka Server started" in log.read_text(errors="replace"):
                    break
                time.sleep(1)
            assert log.is_file(), "no server.log: the log4j2 binding or configuration is missing"
            assert "Kafka Server started" in log.read_text(errors="replace")
        finally:
            broker.terminate()
            broker.wait(timeout=60)


@pytest.fixture
def zookeeper(tmp_path: Path) -> Iterator[int]:
    home = unpack(CATALOG.zookeeper, tmp_path)
    (port,) = free_ports(1)
    cfg = tmp_path / "zoo.cfg"
    cfg.write_text(
        f"tickTime=2000\ndataDir={tmp_path / 'data'}\nclientPort={port}\n"
        "clientPortAddress=127.0.0.1\nadmin.enableServer=false\n"
    )
    main = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
    with subprocess.Popen(
        ["java", "-cp", "conf:lib/*", main, str(cfg)],
        cwd=home,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    ) as server:
        try:
            yield port
        finally:
            server.terminate()
            server.wait(timeout=20)


def four_letter(port: int, command: bytes) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=2) as conn:
        conn.sendall(command)
        chunks = []
        while chunk := conn.recv(4096):
            chunks.append(chunk)
    return b"".join(chunks).decode()


def test_zookeeper_serves_standalone_and_answers_srvr(zookeeper: int) -> None:
    deadline = time.monotonic() + 30
    answer = ""
    while time.monotonic() < deadline and "Mode: standalone" not in answer:
        try:
            answer = four_letter(zookeeper, b"srvr")
        except OSError:
            time.sleep(0.3)
    assert f"Zookeeper version: {CATALOG.zookeeper.version}" in answer
    assert "Mode: standalone" in answer


def zk_server(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the archive's bin/zkServer.sh, with no ZOO* settings from this environment."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("ZOO")}
    return subprocess.run([str(home / "bin" / "zkServer.sh"), *args], cwd=home, env=env,
                          capture_output=True, text=True, timeout=90, check=False)


def running(pid: int) -> bool:
    """Whether the process lives (a zombie that its parent has not reaped yet does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.parametrize("component", [CATALOG.zookeeper, CATALOG.zookeeper_previous],
                         ids=lambda component: component.version)
def test_zkserver_sh_starts_reports_and_stops_a_server(component: Component,
                                                       tmp_path: Path) -> None:
    """bin/zkServer.sh does the release script's everyday commands: start (a config named by
    its file name in conf/), status, version, print-cmd, a refused second start, stop."""
    home = unpack(component, tmp_path)
    (port,) = free_ports(1)
    data = tmp_path / "data"
    cfg = home / "conf" / "standalone.cfg"
    cfg.write_text(f"tickTime=2000\ndataDir={data}\nclientPort={port}\n"
                   "clientPortAddress=127.0.0.1\nadmin.enableServer=false\n"
                   "4lw.commands.whitelist=srvr\n")
    pid_file = data / "zookeeper_server.pid"
    pid = 0
    try:
        started = zk_server(home, "start", "standalone.cfg")
        assert started.returncode == 0 and "Starting zookeeper ... STARTED" in started.stdout, \
            started
        pid = int(pid_file.read_text())
        user = os.environ.get("USER") or pwd.getpwuid(os.getuid()).pw_name
        assert (home / "logs" / f"zookeeper-{user}-server-{socket.gethostname()}.out").is_file()
        deadline = time.monotonic() + 30
        status = zk_server(home, "status", str(cfg))
        while status.returncode != 0 and time.monotonic() < deadline:
            time.sleep(0.5)
            status = zk_server(home, "status", str(cfg))
        assert status.returncode == 0, status
        assert f"Client port found: {port}. Client address: 127.0.0.1." in status.stdout
        assert "Mode: standalone" in status.stdout
        version = zk_server(home, "version")
        assert f"Apache ZooKeeper, version {component.version} " in version.stdout, version
        command = zk_server(home, "print-cmd", str(cfg)).stdout
        assert f"org.apache.zookeeper.server.quorum.QuorumPeerMain {cfg}" in command, command
        again = zk_server(home, "start", str(cfg))
        assert again.returncode == 1 and f"already running as process {pid}." in again.stdout
        assert running(pid) and int(pid_file.read_text()) == pid
        stopped = zk_server(home, "stop", str(cfg))
        assert stopped.returncode == 0 and "Stopping zookeeper ... STOPPED" in stopped.stdout
        assert not running(pid) and not pid_file.exists()
        after = zk_server(home, "status", str(cfg))
        assert after.returncode == 1 and "It is probably not running." in after.stdout
    finally:
        if pid_file.exists():
            zk_server(home, "stop", str(cfg))
        if pid and running(pid):
            os.kill(pid, signal.SIGKILL)


def test_zookeeper_purge_tool_loads(tmp_path: Path) -> None:
    home = unpack(CATALOG.zookeeper, tmp_path)
    (tmp_path / "data").mkdir()
    output = java(home, "lib/*", "org.apache.zookeeper.server.PurgeTxnLog", str(tmp_path / "data"))
    assert "count should be greater than or equal to 3" not in output  # default count is 3
    assert "ClassNotFoundException" not in output


def test_spark_master_starts_and_serves_its_json_status(tmp_path: Path) -> None:
    home = unpack(CATALOG.spark, tmp_path)
    port, ui = free_ports(2)
    main = "org.apache.spark.deploy.master.Master"
    args = ["--host", "127.0.0.1", "--port", str(port), "--webui-port", str(ui)]
    with subprocess.Popen(
        ["java", "-cp", "conf:jars/*", main, *args],
        cwd=home,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    ) as master:
        try:
            status = wait_for_json(f"http://127.0.0.1:{ui}/json/", timeout=60)
        finally:
            master.terminate()
            master.wait(timeout=20)
    assert status["status"] == "ALIVE"
    assert status["url"] == f"spark://127.0.0.1:{port}"


def wait_for_json(url: str, timeout: float) -> dict[str, object]:
    """Poll a JSON status page until it says ALIVE (a master starts as STANDBY) or time is up.

    While the master starts, its web UI can answer before the JSON handler is mounted, with a
    body that is not JSON; that is a page not ready yet, like a refused connection.
    """
    deadline = time.monotonic() + timeout
    data: dict[str, object] = {}
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                data = json.load(response)
            if data.get("status") == "ALIVE":
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.3)
    return data


def test_connector_jars_are_published_with_their_sha512() -> None:
    for jar in (j for jars in CATALOG.spark_kafka_connectors.values() for j in jars):
        path = MIRROR / jar.dist_path
        published = (MIRROR / jar.sha512_path).read_text()
        assert parse_sha512(published, jar.file_name) == file_sha512(path)
