"""The monitoring role's plan: the host read's command and parser, and each decision the role and
the pyinfra deploy take from it (kafkaform.plans.monitoring)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from kafkaform import model
from kafkaform.contexts import monitoring as context
from kafkaform.contexts.monitoring import ALERTMANAGER, NODE_EXPORTER, PROMETHEUS
from kafkaform.plans.monitoring import (
    GROUP,
    STARTED_UNITS,
    MonitoringHost,
    MonitoringPlan,
    host_read,
    monitoring_plan,
    parse_host,
)
from tests.unit.test_hostread_units import STARTS, systemctl_stub
from tests.unit.test_monitoring_context import platform

PACKAGES = frozenset({"prometheus-node-exporter", "prometheus", "prometheus-alertmanager"})
#: A host as a converged run leaves it.
CONVERGED = MonitoringHost(installed=PACKAGES, web_config=True)
JOB = "kafkaform-process-metrics"
WEB_CONFIG = "/etc/prometheus/web.yml"


def plan(host: str, read: MonitoringHost = CONVERGED, also_monitoring: str = "",
         **settings: Any) -> MonitoringPlan:
    """The plan of ``host`` on the lab-like platform, whose monitoring host is mon (and
    ``also_monitoring``)."""
    cluster, groups = platform()
    if also_monitoring:
        groups = {**groups, model.MONITORING: ["mon", also_monitoring]}
    return monitoring_plan(cluster, host, settings, groups, read)


@pytest.mark.parametrize(("host", "also", "steps", "units", "timers", "files"), [
    # A broker: node exporter and the job, its web configuration and its drop-in.
    ("k1", "", (True, False, True), [NODE_EXPORTER], [f"{JOB}.timer"], 4 + 1 + 1),
    # The monitoring host: Prometheus's and Alertmanager's files, the web configuration and
    # their two drop-ins; no node exporter, no job.
    ("mon", "", (False, True, True), [PROMETHEUS, ALERTMANAGER], [], 5 + 1 + 2),
    # Both on one host.
    ("k1", "k1", (True, True, True), [NODE_EXPORTER, PROMETHEUS, ALERTMANAGER],
     [f"{JOB}.timer"], 4 + 5 + 1 + 3),
    # A host outside every group runs nothing.
    ("elsewhere", "", (False, False, False), [], [], 0),
])
def test_each_kind_of_host_takes_its_steps(host: str, also: str, steps: tuple[bool, ...],
                                           units: list[str], timers: list[str],
                                           files: int) -> None:
    p = plan(host, also_monitoring=also)
    assert (p.node_exporter, p.prometheus, p.tls) == steps
    assert [u["name"] for u in p.units] == units
    assert p.timers == timers
    assert len(p.files) == files
    assert p.files == [*p.node_exporter_files, *p.prometheus_files, *p.web_files,
                       *p.dropin_files]
    assert p.wait_ready == p.prometheus
    assert len(p.dropin_directories) == len(units)
    assert bool(p.tls_directories) == bool(p.web_files) == p.tls
    assert bool(p.node_exporter_directories) == p.node_exporter
    assert bool(p.prometheus_directories) == p.prometheus


@pytest.mark.parametrize(("host", "installed", "node_exporter", "prometheus"), [
    ("k1", frozenset(), True, False),
    ("k1", PACKAGES, False, False),
    # Prometheus's packages are not this host's to install.
    ("k1", frozenset({"prometheus-node-exporter"}), False, False),
    ("mon", frozenset(), False, True),
    ("mon", PACKAGES, False, False),
    # One missing package installs them.
    ("mon", frozenset({"prometheus"}), False, True),
    # Node exporter is not the monitoring host's to install.
    ("mon", PACKAGES - {"prometheus-node-exporter"}, False, False),
    ("elsewhere", frozenset(), False, False),
])
def test_the_package_manager_is_asked_only_for_a_missing_package_of_a_step_the_host_takes(
        host: str, installed: frozenset[str], node_exporter: bool, prometheus: bool) -> None:
    p = plan(host, MonitoringHost(installed=installed))
    assert (p.install_node_exporter, p.install_prometheus) == (node_exporter, prometheus)


def test_the_packages_are_the_settings() -> None:
    p = plan("k1", also_monitoring="k1",
             monitoring_node_exporter_package="node-exporter-x",
             monitoring_prometheus_package="prometheus-x",
             monitoring_alertmanager_package="alertmanager-x")
    assert p.node_exporter_packages == ["node-exporter-x"]
    assert p.prometheus_packages == ["prometheus-x", "alertmanager-x"]


@pytest.mark.parametrize(("host", "web_config", "renew"), [
    ("k1", True, True), ("k1", False, False), ("mon", True, True), ("mon", False, False),
    # What the role set up is renewed even where the inventory no longer puts it.
    ("elsewhere", True, True), ("elsewhere", False, False),
])
def test_tls_is_renewed_only_where_the_role_wrote_the_web_configuration(
        host: str, web_config: bool, renew: bool) -> None:
    """playbooks/rotate_tls.yml: a package or a group left by another tool is no mark. SE-15"""
    assert plan(host, MonitoringHost(installed=PACKAGES, web_config=web_config)).renew_tls \
        is renew


def test_a_service_restarts_for_the_files_it_reads_at_start_only() -> None:
    """OP-03; the web configuration and the TLS material are read again on every connection
    (SE-15), the job's files by the job alone."""
    p = plan("k1", also_monitoring="k1")
    restart_files = {path for unit in p.units for path in unit["restart_files"]}
    restarting = {f.dest for f in p.files if f.restarts}
    assert restarting == restart_files & {f.dest for f in p.files}
    assert restarting == {
        "/etc/default/prometheus-node-exporter", "/etc/default/prometheus",
        "/etc/default/prometheus-alertmanager", "/etc/prometheus/prometheus.yml",
        "/etc/prometheus/alertmanager.yml", p.context["rules_file"],
        *(f"/etc/systemd/system/{name}.service.d/kafkaform.conf"
          for name in (NODE_EXPORTER, PROMETHEUS, ALERTMANAGER))}
    assert not {WEB_CONFIG, *p.context["tls"].values()} & restart_files


def test_systemd_reloads_for_the_units_the_job_and_the_drop_ins() -> None:
    p = plan("k1", also_monitoring="k1")
    assert p.reload_files == [f.dest for f in (*p.node_exporter_files, *p.dropin_files)]
    assert {f"/etc/systemd/system/{JOB}.service", f"/etc/systemd/system/{JOB}.timer"} \
        <= set(p.reload_files)
    assert not {f.dest for f in p.prometheus_files} & set(p.reload_files)


def test_owners_groups_and_modes_are_the_roles() -> None:
    """As the role's tasks wrote them before the plan: what the services read is readable by
    their group only; their settings, units and drop-ins by everyone; the job is executable."""
    p = plan("k1", also_monitoring="k1")
    found = {f.dest: (f.owner, f.group, f.mode) for f in p.files}
    assert found[f"/usr/local/sbin/{JOB}"] == ("root", "root", "0755")
    for dest in ("/etc/default/prometheus-node-exporter", "/etc/default/prometheus",
                 f"/etc/systemd/system/{JOB}.timer",
                 "/etc/systemd/system/prometheus.service.d/kafkaform.conf"):
        assert found[dest] == ("root", "root", "0644"), dest
    for dest in (WEB_CONFIG, "/etc/prometheus/prometheus.yml", p.context["rules_file"]):
        assert found[dest] == ("root", GROUP, "0640"), dest
    assert p.tls_directories == [
        {"path": "/etc/prometheus", "owner": "root", "group": "root", "mode": "0755"},
        {"path": "/etc/prometheus/tls", "owner": "root", "group": GROUP, "mode": "0750"}]
    assert p.prometheus_directories == [
        {"path": "/etc/prometheus/rules", "owner": "root", "group": GROUP, "mode": "0750"}]
    assert p.node_exporter_directories == [{"path": "/var/lib/prometheus/node-exporter",
                                            "owner": "root", "group": "root", "mode": "0755"}]


def test_promtool_and_amtool_check_what_prometheus_and_alertmanager_read() -> None:
    p = plan("mon")
    assert {f.dest: f.validate for f in p.files if f.validate} == {
        p.context["rules_file"]: "promtool check rules %s",
        "/etc/prometheus/prometheus.yml": "promtool check config --syntax-only %s",
        "/etc/prometheus/alertmanager.yml": "amtool check-config %s"}


def test_the_context_is_the_source_of_the_values() -> None:
    cluster, groups = platform()
    p = plan("mon", monitoring_prometheus_port=9190)
    assert p.context == context.monitoring_context(cluster, "mon",
                                                   {"monitoring_prometheus_port": 9190}, groups)
    assert p.ready_url == "https://mon:9190/-/ready"
    assert [f.vars for f in p.dropin_files] == [
        {"monitoring_unit": unit} for unit in p.context["units"]]


def test_the_role_reads_plain_install_files_items() -> None:
    """Every list of files as install_files takes it: no restart flag, the checks kept."""
    found = plan("k1", also_monitoring="k1").as_vars()
    for name in ("files", "node_exporter_files", "prometheus_files", "web_files",
                 "dropin_files"):
        assert found[name], name
        for item in found[name]:
            assert "restarts" not in item and None not in item.values(), (name, item)
    assert [item["validate"] for item in found["prometheus_files"][:3]] == [
        "promtool check rules %s", "promtool check config --syntax-only %s",
        "amtool check-config %s"]


def test_the_parser_reads_labels_not_positions() -> None:
    read = parse_host("\n".join([
        "web_config yes", "package:prometheus un ", "package:prometheus-node-exporter ii ",
        "package:prometheus-alertmanager ii "]))
    assert read == MonitoringHost(
        installed=frozenset({"prometheus-node-exporter", "prometheus-alertmanager"}),
        web_config=True)
    assert parse_host("package:prometheus ii \n") == MonitoringHost(
        installed=frozenset({"prometheus"}), web_config=False)
    assert parse_host("") == MonitoringHost()


def test_the_host_read_runs_and_parses_on_a_real_host(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine's dpkg stands in for node exporter's package."""
    settings = {"monitoring_node_exporter_package": "dpkg",
                "monitoring_prometheus_package": "kafkaform-no-such-package"}
    web_config = tmp_path / "web.yml"
    monkeypatch.setattr(context, "WEB_CONFIG", str(web_config))

    # systemctl answering as systemd does, this machine's systemd (or none) aside.
    env = systemctl_stub(tmp_path / "bin", {f"{NODE_EXPORTER}.service": ("enabled", "active")})

    cluster, groups = platform()

    def read() -> MonitoringHost:
        return parse_host(subprocess.run(host_read(cluster, "k1", settings, groups),
                                         capture_output=True, text=True, check=True,
                                         env=env).stdout)

    found = read()
    assert found == MonitoringHost(installed=frozenset({"dpkg"}), web_config=False,
                                   running_units=frozenset({f"{NODE_EXPORTER}.service"}),
                                   paths=found.paths)
    # The planned paths this machine has (/etc/systemd/system, say), each with its state.
    assert all(state.endswith(" directory") or len(state.split()) == 4
               for state in found.paths.values())
    web_config.write_text("tls_server_config: {}\n")
    assert read().web_config


def _running(*units: str) -> MonitoringHost:
    return MonitoringHost(installed=PACKAGES, web_config=True, running_units=frozenset(units))


def test_only_the_units_and_timers_not_enabled_and_active_are_started() -> None:
    nothing = plan("k1", also_monitoring="k1")
    assert nothing.units_to_start == [NODE_EXPORTER, PROMETHEUS, ALERTMANAGER]
    assert nothing.timers_to_start == [f"{JOB}.timer"]
    converged = plan("k1", read=_running(*STARTED_UNITS), also_monitoring="k1")
    assert (converged.units_to_start, converged.timers_to_start) == ([], [])
    some = plan("k1", read=_running(f"{PROMETHEUS}.service", f"{JOB}.timer"),
                also_monitoring="k1")
    assert (some.units_to_start, some.timers_to_start) == ([NODE_EXPORTER, ALERTMANAGER], [])
    # A unit this host does not run is never started, running or not.
    assert plan("mon", read=_running(f"{NODE_EXPORTER}.service")).units_to_start == [
        PROMETHEUS, ALERTMANAGER]
    assert plan("elsewhere").units_to_start == plan("elsewhere").timers_to_start == []


@pytest.mark.parametrize(("enabled", "active", "start"), STARTS)
def test_the_parser_reads_each_units_state(enabled: str, active: str, start: bool) -> None:
    read = parse_host(f"enabled:{NODE_EXPORTER}.service {enabled}\nweb_config yes\n"
                      f"active:{NODE_EXPORTER}.service {active}\n"
                      f"enabled:{JOB}.timer enabled\nactive:{JOB}.timer active\n")
    assert read.running_units == ({f"{JOB}.timer"} if start
                                  else {f"{NODE_EXPORTER}.service", f"{JOB}.timer"})
    p = plan("k1", read=read)
    assert (p.units_to_start, p.timers_to_start) == ([NODE_EXPORTER] if start else [], [])


def test_the_host_read_asks_every_unit_a_host_may_start() -> None:
    """The read does not know which services the host runs: it asks each one's unit."""
    started = {f"{u['name']}.service" for u in plan("k1", also_monitoring="k1").units}
    assert started | set(plan("k1").timers) == set(STARTED_UNITS)
    cluster, groups = platform()
    script = host_read(cluster, "k1", {}, groups)[-1]
    assert all(f"enabled:{unit}" in script and f"active:{unit}" in script
               for unit in STARTED_UNITS)


def test_the_files_are_compared_on_the_control_node_only_when_no_package_is_installed() -> None:
    """A package installed in this run may write the same files after the host read: then
    install_files asks the host as always (an empty host_state)."""
    state = {WEB_CONFIG: "644 root prometheus 0123"}
    converged = MonitoringHost(installed=PACKAGES, web_config=True, paths=state)
    assert plan("mon", read=converged).host_state == state
    assert plan("k1", read=converged).host_state == state
    fresh = MonitoringHost(web_config=True, paths=state)
    assert plan("mon", read=fresh).host_state == {}
    assert plan("k1", read=fresh).host_state == {}
