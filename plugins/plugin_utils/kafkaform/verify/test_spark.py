"""Spark node and pipeline checks: a working cluster running the pipeline.

    kafkaform verify -i inventory/lab --checks spark [--limit spark_master:spark_worker]

Nodes, paths, ports and the pipeline's name come from the kafkaform model over the inventory, never
from constants here. Nothing here writes: the data path end to end is the pipeline check
(test_pipeline.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest
import testinfra.host  # type: ignore[import-untyped]

from kafkaform.contexts.spark_node import TLS_UI_PORT_OFFSET, spark_node_context
from kafkaform.contexts.spark_pipeline import spark_pipeline_context
from kafkaform.verify.conftest import Inventory, Node, Nodes, stat_paths


@dataclass(frozen=True)
class SparkNode:
    name: str
    host: testinfra.host.Host
    expected: Mapping[str, Any]  # the spark_node role's template context for this node

    def master_state(self) -> dict[str, Any]:
        url = f"{self.expected['master_webui_urls'][0]}/json/"
        state: dict[str, Any] = json.loads(self.host.check_output(
            "curl -sf --cacert %s %s", self.expected["tls"]["trust"], url))
        return state


def resources(host: testinfra.host.Host) -> dict[str, int]:
    """What the role's facts would say: cores and memory of the host."""
    memory_kb = int(host.check_output("awk '/^MemTotal:/ {print $2}' /proc/meminfo"))
    return {"cores": int(host.check_output("nproc")), "memory_mb": memory_kb // 1024}


@pytest.fixture(scope="module")
def spark_nodes(nodes: Nodes, inventory: Inventory) -> list[SparkNode]:
    # A master without workers, or a --limit to one of them, still checks what it visits.
    found: dict[str, Node] = {}
    for node in nodes.reach("spark_masters") + nodes.reach("spark_workers"):
        found.setdefault(node.name, node)
    if not found:
        spark = inventory.cluster["spark_masters"] + inventory.cluster["spark_workers"]
        pytest.skip("--kafkaform-hosts (kafkaform verify --limit) leaves out every Spark node"
                    if spark else "the inventory has no Spark nodes")
    return [SparkNode(n.name, n.host, spark_node_context(inventory.cluster, n.name, n.variables,
                                                         resources(n.host)))
            for n in found.values()]


@pytest.fixture(scope="module")
def master(spark_nodes: list[SparkNode]) -> SparkNode:
    visited = next((n for n in spark_nodes if n.expected["is_master"]), None)
    if visited is None:
        pytest.skip("no Spark master visited (--limit leaves it out, or the inventory has none)")
    return visited


@pytest.fixture(scope="module")
def pipeline(master: SparkNode, inventory: Inventory) -> Mapping[str, Any]:
    variables = inventory.hostvars.get(master.name, {})
    return spark_pipeline_context(inventory.cluster, master.name, variables)


def test_daemons_run_their_main_class_as_the_spark_user(spark_nodes: list[SparkNode]) -> None:
    for node in spark_nodes:
        for daemon in node.expected["daemons"]:
            service = node.host.service(daemon["name"])
            assert service.is_running and service.is_enabled, f"{node.name}: {daemon['name']}"
            pid = node.host.check_output("systemctl show --property=MainPID --value %s",
                                         daemon["name"])
            owner = node.host.check_output("ps -o user= -p %s", pid)
            command = node.host.check_output("tr '\\0' ' ' < /proc/%s/cmdline", pid)
            assert owner == node.expected["user"], f"{node.name}: {daemon['name']} runs as {owner}"
            assert daemon["main_class"] in command and "spark-daemon.sh" not in command


def test_master_lists_every_worker_alive_with_what_it_offers(
        master: SparkNode, spark_nodes: list[SparkNode]) -> None:
    state = master.master_state()
    assert state["status"] == "ALIVE"
    alive = {w["host"]: w for w in state["workers"] if w["state"] == "ALIVE"}
    for node in (n for n in spark_nodes if n.expected["is_worker"]):
        address = node.expected["environment"]["SPARK_LOCAL_HOSTNAME"]
        assert address in alive, f"{node.name} is not ALIVE on the master: {state['workers']}"
        assert alive[address]["cores"] == node.expected["worker_cores"]
        assert alive[address]["memory"] == node.expected["worker_memory_mb"]


def test_ports_listen_on_the_node_address_only(spark_nodes: list[SparkNode]) -> None:
    for node in spark_nodes:
        listening = node.host.check_output("ss -Hltn | awk '{print $4}'").split()
        everywhere = [a for a in listening if a.split(":")[0] in ("0.0.0.0", "*", "[::]")]
        assert everywhere == [], f"{node.name} listens on every interface: {everywhere}"
        assert not any(a.endswith(":6066") for a in listening), "REST submission is enabled"


def test_web_uis_speak_tls_and_plain_ports_only_redirect(spark_nodes: list[SparkNode]) -> None:
    """SE-09: each UI's certificate verifies against the cluster CA for the node's name; its
    plain port answers with a redirect and no content."""
    for node in spark_nodes:
        assert node.expected["ui_urls"], f"{node.name} runs no web UI"
        for url in node.expected["ui_urls"]:
            secure = node.host.run("curl -sf -o /dev/null --cacert %s %s",
                                   node.expected["tls"]["trust"], url)
            assert secure.rc == 0, f"{node.name}: {url} does not verify: {secure.stderr}"
            address, port = url.removeprefix("https://").rsplit(":", 1)
            plain = f"http://{address}:{int(port) - TLS_UI_PORT_OFFSET}/json/"
            answer = node.host.check_output("curl -s -o /dev/null -w '%%{http_code}' %s", plain)
            assert answer.startswith("3"), f"{node.name}: {plain} answers {answer}, not a redirect"


def test_configuration_is_readable_by_the_spark_group_only(spark_nodes: list[SparkNode]) -> None:
    for node in spark_nodes:
        conf = node.expected["conf_dir"]
        paths = [f"{conf}/{name}"
                 for name in ("spark-env.sh", "spark-defaults.conf", "log4j2.properties")]
        found = stat_paths(node.host, paths)
        for path in paths:
            item = found.get(path)
            assert item is not None and (item.user, item.group, item.mode) == (
                "root", node.expected["group"], 0o640), f"{node.name}: {path} is {item}"
        unit = node.host.file("/etc/systemd/system/spark-master.service"
                              if node.expected["is_master"]
                              else "/etc/systemd/system/spark-worker.service")
        assert "ProtectSystem=strict" in unit.content_string
        assert "NoNewPrivileges=yes" in unit.content_string


def test_python_environment_has_the_release_pyspark(spark_nodes: list[SparkNode]) -> None:
    for node in spark_nodes:
        python = node.expected["python"]
        version = node.host.check_output("%s -c 'import pyspark; print(pyspark.__version__)'",
                                         python)
        release = node.host.file(f"{node.expected['conf_dir']}/release").content_string.split()
        assert version == release[-1], f"{node.name}: pyspark {version}, release {release}"
        for jar in ("spark-sql-kafka-0-10", "kafka-clients", "commons-pool2"):
            found = node.host.run("ls %s", node.expected["connector_dir"]).stdout
            assert jar in found, f"{node.name}: no {jar} jar in {node.expected['connector_dir']}"


def test_pipeline_runs_on_the_master_as_spark(master: SparkNode,
                                              pipeline: Mapping[str, Any]) -> None:
    apps = master.master_state()["activeapps"]
    running = [a for a in apps if a["name"] == pipeline["application"]]
    assert [a["state"] for a in running] == ["RUNNING"], apps
    assert running[0]["cores"] > 0, f"{pipeline['application']} has no executor: {apps}"
    service = master.host.service(pipeline["unit"])
    assert service.is_running and service.is_enabled
    pid = master.host.check_output("systemctl show --property=MainPID --value %s",
                                   pipeline["unit"])
    assert master.host.check_output("ps -o user= -p %s", pid) == pipeline["user"]


def test_history_server_shows_the_pipeline(master: SparkNode,
                                           pipeline: Mapping[str, Any]) -> None:
    if not master.expected["event_log_dir"]:
        pytest.skip("the history server is off (spark_node_history_server_enabled)")
    port = next(line.split("=")[1] for line in master.expected["defaults"].splitlines()
                if line.startswith("spark.history.ui.port="))
    url = next(u for u in master.expected["ui_urls"]
               if u.endswith(f":{int(port) + TLS_UI_PORT_OFFSET}")) + "/api/v1/applications"
    apps = json.loads(master.host.check_output("curl -sf --cacert %s %s",
                                               master.expected["tls"]["trust"], url))
    assert pipeline["application"] in {a["name"] for a in apps}
