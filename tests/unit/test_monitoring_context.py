"""The monitoring template context and alert rules: who runs what, what Prometheus scrapes, and
every alert actionable and tested, the JVMs' metrics agents (MO-05, MO-06, MO-07)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from kafkaform import model
from kafkaform.contexts.kafka_broker import kafka_broker_context
from kafkaform.contexts.monitoring import (
    ALERTMANAGER,
    NODE_EXPORTER,
    PROMETHEUS,
    monitoring_context,
    node_targets,
)
from kafkaform.contexts.zookeeper import zookeeper_context
from tests.unit.test_checks import lab_like, view_of

TESTS = Path(__file__).resolve().parents[1]


def platform() -> tuple[dict[str, Any], dict[str, list[str]]]:
    """A lab-like cluster where sm is also a worker, and a monitoring host mon."""
    spec = lab_like()
    spec["spark_worker"]["sm"] = {}
    view = view_of(spec)
    groups = {**view.groups, model.MONITORING: ["mon"]}
    return model.build(view).to_dict(), groups


def test_every_host_of_the_platform_is_one_node_target_with_its_first_role_and_rack() -> None:
    cluster, _ = platform()
    targets = node_targets(cluster)
    assert [t["host"] for t in targets] == ["zk1", "zk2", "zk3", "k1", "k2", "k3", "sm", "sw1"]
    by_host = {t["host"]: t for t in targets}
    assert by_host["sm"]["role"] == "spark_master"
    assert (by_host["k3"]["role"], by_host["k3"]["rack"]) == ("kafka_broker", "b")
    assert by_host["sw1"]["rack"] == ""


def test_cluster_hosts_run_node_exporter_and_the_monitoring_host_prometheus() -> None:
    cluster, groups = platform()
    broker = monitoring_context(cluster, "k1", {}, groups)
    assert [u["name"] for u in broker["units"]] == [NODE_EXPORTER]
    assert (broker["is_cluster_host"], broker["is_monitoring_host"]) == (True, False)
    monitor = monitoring_context(cluster, "mon", {"monitoring_prometheus_port": 9190}, groups)
    assert [u["name"] for u in monitor["units"]] == [PROMETHEUS, ALERTMANAGER]
    assert monitor["prometheus_url"] == "https://mon:9190"
    assert monitor["alertmanagers"] == ["mon:9093"]
    prometheus = monitor["units"][0]
    assert "/etc/prometheus/prometheus.yml" in prometheus["restart_files"]
    assert monitor["rules_file"] in prometheus["restart_files"]


def test_the_web_configuration_and_certificates_restart_no_monitoring_service() -> None:
    """SE-15: node exporter, Prometheus and Alertmanager read them again on every connection,
    so a renewed certificate or a CA rotation restarts none of them."""
    cluster, groups = platform()
    for host in ("k1", "mon"):
        context = monitoring_context(cluster, host, {}, groups)
        tls = context["tls"]
        assert context["tls_names"] == [host]
        for unit in context["units"]:
            kept = {tls["web_config"], tls["cert"], tls["key"], tls["trust"]}
            assert not kept & set(unit["restart_files"]), (host, unit["name"])


def test_a_host_outside_every_group_runs_nothing() -> None:
    cluster, groups = platform()
    assert monitoring_context(cluster, "elsewhere", {}, groups)["units"] == []


def alert_rules() -> list[dict[str, Any]]:
    rules = TESTS / "golden" / "monitoring" / "etc" / "prometheus" / "rules" / "kafkaform.yml"
    rendered = yaml.safe_load(rules.read_text())
    return [rule for group in rendered["groups"] for rule in group["rules"] if "alert" in rule]


def test_every_alert_has_a_severity_a_summary_and_a_runbook_line() -> None:
    for rule in alert_rules():
        assert rule["labels"]["severity"] in ("critical", "warning"), rule["alert"]
        assert rule["annotations"]["summary"].strip(), rule["alert"]
        assert rule["annotations"]["runbook"].strip(), rule["alert"]


def test_every_alert_has_a_promtool_case_that_fires_it() -> None:
    cases = yaml.safe_load((TESTS / "promtool" / "alerts.test.yml").read_text())
    fired = {check["alertname"] for case in cases["tests"]
             for check in case.get("alert_rule_test", []) if check.get("exp_alerts")}
    assert sorted({rule["alert"] for rule in alert_rules()} - fired) == []


def lab_view() -> model.InventoryView:
    """inventory/lab read as plain YAML (hosts.yml and group_vars/all.yml): Ansible's inventory
    loader, run in this process, would change how later tests import the collection."""
    lab = TESTS.parent / "inventory" / "lab"
    children = yaml.safe_load((lab / "hosts.yml").read_text())["all"]["children"]
    cluster = yaml.safe_load((lab / "group_vars" / "all.yml").read_text())
    spec = {group: {host: dict(host_vars or {}) for host, host_vars in entry["hosts"].items()}
            for group, entry in children.items()}
    return view_of(spec, cluster)


def test_the_golden_sample_is_the_context_of_kf_monitor_in_the_lab() -> None:
    view = lab_view()
    golden = yaml.safe_load((TESTS / "golden" / "monitoring" / "context.yml").read_text())
    computed = monitoring_context(model.build(view).to_dict(), "kf-monitor",
                                  view.hostvars["kf-monitor"], view.groups)
    assert computed == golden["monitoring"]
    assert golden["monitoring_unit"] == computed["units"][-1]
    assert {t["host"] for t in computed["nodes"]} == set(view.cluster_hosts())


def test_every_broker_and_member_jvm_is_scraped_on_its_agent_port_unless_turned_off() -> None:
    spec = lab_like()
    spec["kafka_broker"]["k2"]["kafka_broker_metrics_enabled"] = "false"
    spec["zookeeper"]["zk3"]["zookeeper_metrics_port"] = 7172
    view = view_of(spec)
    groups = {**view.groups, model.MONITORING: ["mon"]}
    jvms = monitoring_context(model.build(view).to_dict(), "mon", {}, groups)["jvms"]
    assert [(t["host"], t["port"]) for t in jvms["kafka"]] == [("k1", 7071), ("k3", 7071)]
    assert [(t["host"], t["port"], t["rack"]) for t in jvms["zookeeper"]] == [
        ("zk1", 7072, "a"), ("zk2", 7072, "b"), ("zk3", 7172, "c")]


def test_the_agent_listens_on_the_cluster_address_and_comes_from_the_mirror() -> None:
    cluster = model.build(view_of(lab_like())).to_dict()
    settings = {"kafkaform_apache_mirror_url": "http://mirror.internal:8000/dist/"}
    broker = kafka_broker_context(cluster, "k2", settings)
    agent = broker["metrics"]
    assert agent["option"] in broker["java"]["options"]
    assert agent["option"] == (f"-javaagent:{agent['jar']}={broker['address']}:7071:"
                               "/etc/kafka/jmx-exporter.yml")
    assert agent["url"] == ("http://mirror.internal:8000/dist/maven/io/prometheus/jmx/"
                            "jmx_prometheus_javaagent/1.0.1/jmx_prometheus_javaagent-1.0.1.jar")
    off = kafka_broker_context(cluster, "k2", {"kafka_broker_metrics_enabled": False})
    assert not [o for o in off["java"]["options"] if o.startswith("-javaagent")]
    member = zookeeper_context(cluster, "zk1", {"zookeeper_metrics_port": 7172})
    assert member["metrics"]["option"].endswith("=zk1:7172:/etc/zookeeper/jmx-exporter.yml")
    assert member["metrics"]["option"] in member["java"]["options"]
