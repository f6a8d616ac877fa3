"""Monitoring checks (MO-05, MO-07, MO-09, SE-15): exporters and the JVMs' metrics agents on the
cluster address only, node exporter, Prometheus and Alertmanager over TLS answering only callers
with a certificate from the cluster CA, Prometheus scraping every target, Spark's master counting
its workers and a running pipeline reporting its progress.

    kafkaform verify -i inventory/lab --checks monitoring

The targets, ports and addresses come from the monitoring role's context over the inventory
(kafkaform.contexts.monitoring), never from constants here. Prometheus is asked through its HTTP
API from its own host, with the host's monitoring certificate, as an operator's curl would.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, TypeVar
from urllib.parse import quote

import pytest
import testinfra.host  # type: ignore[import-untyped]

from kafkaform.contexts.monitoring import (
    ALERTMANAGER,
    NODE_EXPORTER,
    PROMETHEUS,
    monitoring_context,
    node_targets,
)
from kafkaform.contexts.spark_pipeline import UNIT as PIPELINE_UNIT
from kafkaform.model import MONITORING
from kafkaform.pipeline.config import QUERY
from kafkaform.verify.conftest import Inventory, Node, Nodes

#: How long a fresh Prometheus may take to scrape every target once (a few scrape intervals).
SCRAPE_WAIT_SECONDS = 120
#: Local addresses that mean "every interface".
WILDCARDS = ("0.0.0.0", "*", "[::]", "::")


def expected(inventory: Inventory, name: str) -> Mapping[str, Any]:
    return monitoring_context(inventory.cluster, name, inventory.hostvars.get(name, {}),
                              inventory.view.groups)


def listeners(host: testinfra.host.Host, port: int) -> list[str]:
    """The local addresses of the TCP sockets listening on ``port``; a JVM's IPv4 address on a
    dual-stack socket (``[::ffff:10.0.0.5]``) as the IPv4 address it is."""
    out = host.check_output("ss -Hltn 'sport = :%s'", str(port))
    found = [line.split()[3].rsplit(":", 1)[0] for line in out.splitlines() if line.strip()]
    return [a[len("[::ffff:"):-1] if a.startswith("[::ffff:") else a for a in found]


def assert_bound_to(name: str, host: testinfra.host.Host, port: int, address: str) -> None:
    bound = listeners(host, port)
    assert bound, f"{name}: nothing listens on port {port}"
    wide = [a for a in bound if a in WILDCARDS]
    assert not wide, f"{name}: port {port} is bound to every interface ({', '.join(wide)})"
    resolved = host.check_output("getent ahostsv4 %s | awk 'NR==1 {print $1}'", address)
    assert resolved in bound, f"{name}: port {port} listens on {bound}, not on {address}"


@pytest.fixture(scope="module")
def platform_nodes(nodes: Nodes, inventory: Inventory) -> list[Node]:
    found = [nodes.host(t["host"], t["address"], t) for t in node_targets(inventory.cluster)
             if nodes.visit is None or t["host"] in nodes.visit]
    if not found:
        pytest.skip("--kafkaform-hosts (kafkaform verify --limit) leaves out every host")
    return found


@pytest.fixture(scope="module")
def monitors(nodes: Nodes, inventory: Inventory) -> list[Node]:
    found = nodes.group(MONITORING)
    if not found:
        pytest.skip(f"no host of the {MONITORING} group visited (the inventory has none, or "
                    "--limit leaves them out)")
    return found


def test_node_exporter_runs_on_every_host_bound_to_its_cluster_address(
        platform_nodes: list[Node], inventory: Inventory) -> None:
    for node in platform_nodes:
        context = expected(inventory, node.name)
        service = node.host.service(NODE_EXPORTER)
        assert service.is_running and service.is_enabled, f"{node.name}: {NODE_EXPORTER}"
        user = node.host.check_output("systemctl show -p User --value %s", NODE_EXPORTER)
        assert user and user != "root", f"{node.name}: {NODE_EXPORTER} runs as {user or 'root'}"
        assert_bound_to(node.name, node.host, context["node_exporter_port"], context["address"])


def test_prometheus_and_alertmanager_run_bound_to_the_cluster_address(
        monitors: list[Node], inventory: Inventory) -> None:
    for node in monitors:
        context = expected(inventory, node.name)
        for unit, port in ((PROMETHEUS, context["prometheus_port"]),
                           (ALERTMANAGER, context["alertmanager_port"])):
            service = node.host.service(unit)
            assert service.is_running and service.is_enabled, f"{node.name}: {unit}"
            assert_bound_to(node.name, node.host, port, context["address"])


#: curl presenting the host's monitoring certificate, as Prometheus does: then the trust bundle,
#: the certificate and the key (client_tls) and the URL.
CLIENT_CURL = "curl -sf --cacert %s --cert %s --key %s %s"


def client_tls(context: Mapping[str, Any]) -> tuple[str, str, str]:
    tls = context["tls"]
    return tls["trust"], tls["cert"], tls["key"]


def api(node: Node, context: Mapping[str, Any], path: str) -> Any:
    body = node.host.check_output(CLIENT_CURL, *client_tls(context),
                                  f"{context['prometheus_url']}{path}")
    return json.loads(body)["data"]


def endpoints(context: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The monitoring services of the host as (unit, URL of a page every caller may read)."""
    found = []
    if context["is_cluster_host"]:
        found.append((NODE_EXPORTER, f"{context['address']}:{context['node_exporter_port']}"
                                     "/metrics"))
    if context["is_monitoring_host"]:
        found += [(PROMETHEUS, f"{context['address']}:{context['prometheus_port']}/-/ready"),
                  (ALERTMANAGER, f"{context['address']}:{context['alertmanager_port']}"
                                 "/-/ready")]
    return found


def test_monitoring_services_answer_only_tls_callers_with_a_cluster_certificate(
        platform_nodes: list[Node], nodes: Nodes, inventory: Inventory) -> None:
    """SE-15: node exporter, Prometheus and Alertmanager speak TLS with a certificate of their
    own (not the host's), and refuse plain HTTP and callers without a client certificate."""
    visited = {node.name: node for node in [*platform_nodes, *nodes.group(MONITORING)]}
    for node in visited.values():
        context = expected(inventory, node.name)
        tls = context["tls"]
        subject = node.host.check_output("openssl x509 -noout -subject -nameopt RFC2253 -in %s",
                                         tls["cert"])
        assert f"OU={context['tls_service']}" in subject, f"{node.name}: {tls['cert']} is {subject}"
        key = node.host.file(tls["key"])
        assert (key.user, key.group, key.mode) == ("root", "prometheus", 0o640), (
            f"{node.name}: {tls['key']} is {key.user}:{key.group} {oct(key.mode)}")
        for unit, url in endpoints(context):
            answered = node.host.run(f"{CLIENT_CURL} -o /dev/null", *client_tls(context),
                                     f"https://{url}")
            assert answered.rc == 0, f"{node.name}: {unit} refuses its client: {answered.stderr}"
            anonymous = node.host.run("curl -sf -o /dev/null --cacert %s https://%s",
                                      tls["trust"], url)
            assert anonymous.rc != 0, f"{node.name}: {unit} answers a caller without certificate"
            plain = node.host.check_output("curl -s -o /dev/null -w '%%{http_code}' http://%s",
                                           url)
            assert plain == "400", f"{node.name}: {unit} answers plain HTTP with {plain}"


def test_jvm_metrics_agents_listen_on_the_cluster_address_only(
        platform_nodes: list[Node], inventory: Inventory) -> None:
    for node in platform_nodes:
        jvms = expected(inventory, node.name)["jvms"]
        for job, targets in jvms.items():
            for target in (t for t in targets if t["host"] == node.name):
                assert_bound_to(f"{node.name} ({job})", node.host, target["port"],
                                target["address"])


Found = TypeVar("Found")


def until(fetch: Callable[[], Found], done: Callable[[Found], bool],
          seconds: float = SCRAPE_WAIT_SECONDS) -> Found:
    """``fetch()`` every 5 s until ``done`` holds of what it found or ``seconds`` have passed;
    what it found last."""
    deadline = time.monotonic() + seconds
    while True:
        found = fetch()
        if done(found) or time.monotonic() > deadline:
            return found
        time.sleep(5)


def scraped(target: Mapping[str, Any]) -> tuple[str, str]:
    """A Prometheus target as (job, host:port it scrapes)."""
    return target["labels"]["job"], target["scrapeUrl"].split("//")[1].split("/")[0]


def target_health(node: Node, context: Mapping[str, Any]) -> dict[tuple[str, str], Any]:
    """Prometheus's active targets by (job, host:port)."""
    targets = api(node, context, "/api/v1/targets?state=active")["activeTargets"]
    return {scraped(t): t for t in targets}


def targets_down(health: Mapping[tuple[str, str], Any]) -> dict[tuple[str, str], str]:
    return {k: t.get("lastError") or t["health"] for k, t in health.items()
            if t["health"] != "up"}


def test_prometheus_scrapes_every_host_and_jvm_of_the_model_and_finds_them_up(
        monitors: list[Node], inventory: Inventory) -> None:
    for node in monitors:
        context = expected(inventory, node.name)
        wanted = {("node", f"{t['address']}:{context['node_exporter_port']}"): t
                  for t in context["nodes"]}
        wanted |= {(job, f"{t['address']}:{t['port']}"): t
                   for job, targets in context["jvms"].items() for t in targets}
        wanted |= {(job, f"{t['address']}:{t['port']}"): t
                   for job, spark in context["spark"].items() for t in spark["targets"]}
        wanted_self = ("prometheus", f"{context['address']}:{context['prometheus_port']}")
        health = until(partial(target_health, node, context),
                       lambda health: not targets_down(health))
        down = targets_down(health)
        assert set(health) == set(wanted) | {wanted_self}, (
            f"{node.name}: Prometheus scrapes {sorted(health)}, the model has "
            f"{sorted(set(wanted) | {wanted_self})}")
        assert not down, f"{node.name}: targets not up after {SCRAPE_WAIT_SECONDS} s: {down}"
        for key, target in wanted.items():
            labels = health[key]["labels"]  # Prometheus drops a label with an empty value
            got = (labels["instance"], labels.get("rack", ""), labels.get("role", ""))
            assert got == (target["host"], target["rack"], target.get("role", "")), (
                f"{node.name}: {key} {labels}")


def test_prometheus_loads_the_rules_and_reaches_alertmanager(
        monitors: list[Node], inventory: Inventory) -> None:
    for node in monitors:
        context = expected(inventory, node.name)
        groups = api(node, context, "/api/v1/rules")["groups"]
        assert [g for g in groups if g["file"] == context["rules_file"] and g["rules"]], (
            f"{node.name}: no rule loaded from {context['rules_file']}")
        active = api(node, context, "/api/v1/alertmanagers")["activeAlertmanagers"]
        urls = {a["url"].split("//")[1].split("/")[0] for a in active}
        assert urls == set(context["alertmanagers"]), f"{node.name}: alertmanagers {urls}"


def series(node: Node, context: Mapping[str, Any], metric: str) -> dict[tuple[str, str], float]:
    """The samples of ``metric`` Prometheus holds now, by (instance, service unit)."""
    return {(s["metric"]["instance"], s["metric"].get("name", "")): float(s["value"][1])
            for s in instant(node, context, metric)}


def test_every_running_service_reports_its_memory_maps_and_open_files_against_its_limits(
        monitors: list[Node], platform_nodes: list[Node], inventory: Inventory) -> None:
    """MO-08: each service of the platform running on a host is measured by the host's
    kafkaform-process-metrics, and Prometheus holds the figures with their limits; each
    ZooKeeper member reports its snapshots against the number its purge keeps."""
    running = {
        (node.name, unit)
        for node in platform_nodes
        for unit in expected(inventory, node.name)["process_metrics"]["units"]
        if node.host.run("systemctl is-active --quiet %s", unit).rc == 0}
    assert running, "no service of the platform runs on the visited hosts"
    for monitor in monitors:
        context = expected(inventory, monitor.name)
        maps = until(partial(series, monitor, context, "kafkaform_process_memory_maps"),
                     lambda maps: running <= set(maps))
        assert running <= set(maps), (
            f"{monitor.name}: no memory maps in Prometheus for {sorted(running - set(maps))}")
        limit = {key[0]: value
                 for key, value in series(monitor, context, "kafkaform_vm_max_map_count").items()}
        open_files = series(monitor, context, "kafkaform_process_open_files")
        max_open_files = series(monitor, context, "kafkaform_process_max_open_files")
        for key in sorted(running):
            assert 0 < maps[key] < limit[key[0]], f"{key}: {maps[key]} maps, limit {limit[key[0]]}"
            assert 0 < open_files[key] < max_open_files[key], (
                f"{key}: {open_files[key]} open files, limit {max_open_files[key]}")
        snapshots = series(monitor, context, "kafkaform_zookeeper_snapshots")
        retained = series(monitor, context, "kafkaform_zookeeper_snapshot_retain_count")
        members = {key for key in running if key[1] == "zookeeper.service"}
        assert set(snapshots) == members == set(retained), (
            f"{monitor.name}: snapshots of {sorted(snapshots)}, ZooKeeper runs on "
            f"{sorted(members)}")
        for key in members:
            assert snapshots[key] >= 1 and retained[key] >= 3, (key, snapshots[key], retained[key])


def instant(node: Node, context: Mapping[str, Any], query: str) -> list[dict[str, Any]]:
    """The result of the PromQL ``query`` now."""
    found: list[dict[str, Any]] = api(node, context, f"/api/v1/query?query={quote(query)}")[
        "result"]
    return found


def wait_for(node: Node, context: Mapping[str, Any], query: str, done: Any,
             seconds: float = SCRAPE_WAIT_SECONDS) -> list[dict[str, Any]]:
    """The result of the PromQL ``query`` once ``done(result)`` holds, or at the deadline."""
    return until(lambda: instant(node, context, query), done, seconds)


def test_the_spark_master_counts_every_worker_of_the_inventory(
        monitors: list[Node], inventory: Inventory) -> None:
    """MO-09: the master's own metrics, scraped over its UI's TLS port, count every worker."""
    workers = len(inventory.cluster["spark_workers"])
    if not inventory.cluster["spark_masters"]:
        pytest.skip("the inventory has no Spark master")
    for node in monitors:
        context = expected(inventory, node.name)
        found = wait_for(node, context, "max(metrics_master_aliveWorkers_Value)",
                         lambda r: bool(r) and float(r[0]["value"][1]) == workers)
        alive = float(found[0]["value"][1]) if found else None
        assert alive == workers, (
            f"{node.name}: the Spark master reports {alive} live workers, the inventory has "
            f"{workers}")


#: The job's listener reports at its start and on every batch or idle trigger; the process
#: metrics timer and a scrape add a minute and a half at most.
PROGRESS_WAIT_SECONDS = 180
PROGRESS_FRESH_SECONDS = 150


def test_a_running_pipeline_reports_each_query_s_progress(
        monitors: list[Node], nodes: Nodes, inventory: Inventory) -> None:
    """MO-09: each query of a running pipeline is in Prometheus and heard of lately (its start,
    batches and idle triggers)."""
    drivers = [n.name for n in nodes.reach("spark_masters")
               if n.host.run("systemctl is-active --quiet %s", PIPELINE_UNIT).rc == 0]
    if not drivers:
        pytest.skip(f"{PIPELINE_UNIT} runs on no visited Spark master")
    for node in monitors:
        context = expected(inventory, node.name)
        for driver in drivers:
            wanted = {(driver, QUERY)}

            def reported(result: list[dict[str, Any]]) -> set[tuple[str, str]]:
                return {(r["metric"]["instance"], r["metric"]["query"]) for r in result}

            ages = wait_for(
                node, context, "time() - kafkaform_pipeline_updated_timestamp_seconds",
                lambda r, wanted=wanted: wanted <= reported(r), PROGRESS_WAIT_SECONDS)
            assert wanted <= reported(ages), (
                f"{node.name}: Prometheus has no progress of {sorted(wanted - reported(ages))}")
            for r in ages:
                if (r["metric"]["instance"], r["metric"]["query"]) in wanted:
                    age = float(r["value"][1])
                    assert age < PROGRESS_FRESH_SECONDS, (
                        f"{driver}: query {r['metric']['query']} last reported {age:.0f} s ago")
            # A batch that reads new offsets reports how far behind it ended; a batch a restarted
            # job runs again from its checkpoint, or no batch yet, reports nothing.
            for r in instant(node, context, "kafkaform_pipeline_offsets_behind_latest"):
                assert float(r["value"][1]) >= 0, f"{driver}: {r['metric']} {r['value']}"
