"""Kafka broker checks: a working, rack-aware cluster, not just running processes.

    kafkaform verify -i inventory/lab --checks kafka_broker [--limit kafka_broker]

The brokers (ids, racks, chroot, paths, JVM options) come from the kafkaform model over the
inventory (``--ansible-inventory``, else ``$KAFKAFORM_INVENTORY``, else Ansible's configured one),
never from constants here. Brokers are reached with ``--hosts`` when given (matched by inventory
name or address), else through the inventory's own connection (``podman://`` for podman hosts,
``ansible://`` otherwise). The produce/consume and rack tests create one
``kafkaform-verify-*`` topic (replication factor 2, 12 partitions) and delete it afterwards.
"""

from __future__ import annotations

import json
import shlex
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest
import testinfra  # type: ignore[import-untyped]
import testinfra.host  # type: ignore[import-untyped]

from kafkaform.contexts.kafka_broker import kafka_broker_context
from kafkaform.verify.conftest import (
    Inventory,
    Nodes,
    assert_live_jvm,
)

ADMIN = "/usr/local/sbin/kafkaform-kafka"
TOOL_JVM = ["-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]


@dataclass(frozen=True)
class Broker:
    name: str
    host: testinfra.host.Host
    expected: Mapping[str, Any]  # the role's template context for this broker

    def admin(self, *args: str) -> Any:
        exp = self.expected
        argv = [ADMIN, "--bootstrap", exp["bootstrap_servers"], "--conf", exp["conf_dir"],
                "--libs", f"{exp['install_dir']}/libs", "--java", exp["java"]["binary"], *args]
        return self.host.run(shlex.join(argv))

    def tool(self, main_class: str, *args: str) -> Any:
        exp = self.expected
        argv = [exp["java"]["binary"], *TOOL_JVM, "-cp", exp["java"]["classpath"], main_class,
                *args]
        return self.host.run(shlex.join(argv) + " 2>/dev/null")

    def pid(self) -> str:
        return str(self.host.check_output("systemctl show --property=MainPID --value kafka"))


@pytest.fixture(scope="module")
def brokers(nodes: Nodes, inventory: Inventory) -> list[Broker]:
    return [Broker(n.name, n.host, kafka_broker_context(inventory.cluster, n.name, n.variables))
            for n in nodes("brokers", "Kafka brokers")]


@pytest.fixture(scope="module")
def verify_topic(brokers: list[Broker]) -> Iterator[str]:
    """A fresh topic with replication factor 2 and 12 partitions, deleted afterwards."""
    topic = f"kafkaform-verify-{uuid.uuid4().hex[:12]}"
    first = brokers[0]
    boot = first.expected["bootstrap_servers"]
    created = first.tool("org.apache.kafka.tools.TopicCommand", "--bootstrap-server", boot,
                         "--create", "--topic", topic, "--partitions", "12",
                         "--replication-factor", "2")
    assert f"Created topic {topic}." in created.stdout, created.stdout + created.stderr
    yield topic
    first.tool("org.apache.kafka.tools.TopicCommand", "--bootstrap-server", boot, "--delete",
               "--topic", topic)


def test_services_run_as_the_kafka_user(brokers: list[Broker]) -> None:
    for broker in brokers:
        service = broker.host.service("kafka")
        assert service.is_running, f"{broker.name}: kafka is not running"
        assert service.is_enabled, f"{broker.name}: kafka is not enabled"
        user = broker.host.check_output("ps -o user= -p %s", broker.pid())
        assert user == broker.expected["user"], f"{broker.name}: runs as {user}"


def test_every_broker_registered_under_the_chroot_with_its_rack_and_one_controller(
        brokers: list[Broker]) -> None:
    exp = brokers[0].expected
    result = brokers[0].admin("zk-state", "--ids", ",".join(map(str, exp["broker_ids"])))
    assert result.rc == 0, result.stderr
    state = json.loads(result.stdout)
    for broker in brokers:
        registration = state["brokers"][str(broker.expected["id"])]
        assert registration is not None, f"{broker.name}: not registered under " \
            f"{exp['zookeeper_connect']}"
        assert (registration["rack"] or "") == broker.expected["rack"], (broker.name, registration)
        listener = f"PLAINTEXT://{broker.expected['address']}:{broker.expected['port']}"
        assert listener in registration["endpoints"], (broker.name, registration)
    assert state["controller"] in exp["broker_ids"], f"controller: {state['controller']}"


def test_no_under_replicated_or_offline_partitions(brokers: list[Broker]) -> None:
    exp = brokers[0].expected
    result = brokers[0].admin("health", "--ids", ",".join(map(str, exp["broker_ids"])))
    assert result.rc == 0, result.stdout + result.stderr
    health = json.loads(result.stdout)
    assert (health["under_replicated"], health["offline"]) == (0, 0), health


def test_rf2_topic_spans_two_racks_in_every_partition(brokers: list[Broker],
                                                      verify_topic: str) -> None:
    exp = brokers[0].expected
    racks = exp["racks_by_id"]
    if len(set(racks.values()) - {""}) < 2:
        pytest.skip("the brokers span fewer than 2 racks")
    out = brokers[0].tool("org.apache.kafka.tools.TopicCommand", "--bootstrap-server",
                          exp["bootstrap_servers"], "--describe", "--topic", verify_topic).stdout
    lines = [line for line in out.splitlines() if "Partition:" in line]
    assert len(lines) == 12, out
    for line in lines:
        fields = dict(f.split(": ", 1) for f in line.strip().split("\t") if ": " in f)
        replicas = fields["Replicas"].split(",")
        assert len({racks[r] for r in replicas}) == 2, f"{line}: replicas in one rack"


def test_produce_and_consume_with_acks_all(brokers: list[Broker], verify_topic: str) -> None:
    broker = brokers[-1]
    boot = broker.expected["bootstrap_servers"]
    produced = broker.tool("org.apache.kafka.tools.VerifiableProducer", "--topic", verify_topic,
                           "--bootstrap-server", boot, "--max-messages", "200", "--acks", "-1")
    events = [json.loads(line) for line in produced.stdout.splitlines() if line.startswith("{")]
    acked = {e["value"] for e in events if e.get("name") == "producer_send_success"}
    assert len(acked) == 200, produced.stdout[-2000:]
    consumed = broker.tool("org.apache.kafka.tools.consumer.ConsoleConsumer",
                           "--bootstrap-server", boot, "--topic", verify_topic,
                           "--from-beginning", "--max-messages", "200", "--timeout-ms", "60000")
    assert set(consumed.stdout.split()) == acked, consumed.stdout[-2000:]


def test_live_jvm_has_the_configured_heap_gc_and_limits(brokers: list[Broker]) -> None:
    for broker in brokers:
        exp = broker.expected
        pid = broker.pid()
        assert_live_jvm(broker.name, broker.host, pid, exp)
        cmdline = broker.host.file(f"/proc/{pid}/cmdline").content_string.split("\0")
        assert f"-Xms{exp['heap_mb']}m" in cmdline and f"-Xmx{exp['heap_mb']}m" in cmdline


def test_kafka_owns_its_files_and_configs_are_not_world_readable(brokers: list[Broker]) -> None:
    for broker in brokers:
        exp = broker.expected
        for path in [*exp["log_dirs"], exp["log_dir"]]:
            item = broker.host.file(path)
            assert item.is_directory and item.user == exp["user"], (
                f"{broker.name}: {path} is {item.user}")
            assert not path.startswith("/tmp"), f"{broker.name}: log dir {path} under /tmp"
        for name in ("server.properties", "log4j.properties"):
            item = broker.host.file(f"{exp['conf_dir']}/{name}")
            assert item.is_file, f"{broker.name}: {name} missing"
            assert item.mode & 0o007 == 0, f"{broker.name}: {name} is {oct(item.mode)}"
            assert item.group == exp["group"], f"{broker.name}: {name} group {item.group}"
            assert broker.host.run("runuser -u %s -- test -r %s", exp["user"],
                                   item.path).rc == 0
