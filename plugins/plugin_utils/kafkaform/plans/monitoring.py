"""The monitoring role's plan for one host: which monitoring services it runs, what to install,
which files to write with which owner, group and mode, which file changes restart a service or
reload systemd, and whether its TLS material is renewed (roles/monitoring,
deploys/monitoring.py).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..contexts import SYSTEMD_UNIT_DIR
from ..contexts.monitoring import (
    ALERTMANAGER,
    NODE_EXPORTER,
    PROCESS_METRICS,
    PROMETHEUS,
    monitoring_context,
    tls_files,
)
from ..defaults import setting
from . import hostread
from .files import PlannedFile, WritesFiles, planned_paths, template

ROLE = "monitoring"
#: The group Debian's packages run Prometheus, Alertmanager and node exporter as: it reads their
#: configuration and TLS material (SE-15).
GROUP = "prometheus"
#: Prometheus's readiness is asked every READY_DELAY_S, READY_RETRIES times, after a run.
READY_RETRIES = 30
READY_DELAY_S = 2
#: Every unit the role may enable and start (kafkaform.contexts.monitoring): the host read asks
#: each one's state without knowing which of them this host runs; the plan starts those it runs.
STARTED_UNITS = (f"{NODE_EXPORTER}.service", f"{PROMETHEUS}.service",
                 f"{ALERTMANAGER}.service", f"{PROCESS_METRICS}.timer")


def _packages(settings: Mapping[str, Any], *names: str) -> list[str]:
    """The Debian packages the settings name (monitoring_<name>_package)."""
    return [str(setting(settings, f"monitoring_{name}_package")) for name in names]


def _all_packages(settings: Mapping[str, Any]) -> list[str]:
    """Node exporter's package, then Prometheus's and Alertmanager's."""
    return _packages(settings, "node_exporter", "prometheus", "alertmanager")


@dataclass(frozen=True)
class MonitoringHost:
    """What the role needs to know of a host before it changes anything."""

    installed: frozenset[str] = frozenset()
    #: The monitoring services' web configuration is there: this role set them up (SE-15).
    web_config: bool = False
    #: Those of STARTED_UNITS that are enabled and active now.
    running_units: frozenset[str] = frozenset()
    #: The state of each planned file and directory that exists (hostread.path_states).
    paths: Mapping[str, str] = field(default_factory=dict)


def host_read(cluster: Mapping[str, Any], host: str, settings: Mapping[str, Any],
              groups: Mapping[str, Sequence[str]]) -> list[str]:
    """The one command that reads a host (its answers: :func:`parse_host`): which of the
    monitoring packages are installed, whether the web configuration exists, which of the
    monitoring units are enabled and active, and the state of the files and directories the
    plan writes."""
    written = monitoring_plan(cluster, host, settings, groups, MonitoringHost())
    directories = [d for key in _STEP_DIRECTORIES for d in getattr(written, key)]
    return hostread.command([
        *(hostread.ask(f"package:{package}",
                       f"dpkg-query --show --showformat='${{db:Status-Abbrev}}' "
                       f"{shlex.quote(package)} 2>/dev/null")
          for package in _all_packages(settings)),
        hostread.ask("web_config", "echo yes", present=tls_files()["web_config"]),
        *hostread.unit_states(STARTED_UNITS),
        *hostread.path_states(planned_paths(written.files, directories)),
    ])


def parse_host(stdout: str) -> MonitoringHost:
    """:func:`host_read`'s answers."""
    found = hostread.answers(stdout)
    return MonitoringHost(
        installed=frozenset(label.removeprefix("package:") for label, answer in found.items()
                            if label.startswith("package:") and answer.startswith("ii")),
        web_config=found.get("web_config") == "yes",
        running_units=hostread.running_units(found),
        paths=hostread.found_paths(found),
    )


@dataclass(frozen=True)
class MonitoringPlan(WritesFiles):
    """Everything the role does on one host, decided. Each step's directories and files are
    apart, as the role's task files write them in turn; ``files`` holds them all, in order."""

    #: The templates' input (kafkaform.contexts.monitoring).
    context: dict[str, Any]
    #: The steps this host takes: node exporter and the job that measures the platform's
    #: services (every host of the platform), Prometheus and Alertmanager (the monitoring
    #: group), and TLS for whichever it runs.
    node_exporter: bool
    prometheus: bool
    tls: bool
    #: playbooks/rotate_tls.yml renews the TLS material only where this role set it up.
    renew_tls: bool
    node_exporter_packages: list[str]
    install_node_exporter: bool
    prometheus_packages: list[str]
    install_prometheus: bool
    #: The group that reads the configuration and TLS material.
    group: str
    node_exporter_directories: list[dict[str, str]]
    prometheus_directories: list[dict[str, str]]
    tls_directories: list[dict[str, str]]
    dropin_directories: list[dict[str, str]]
    node_exporter_files: list[PlannedFile]
    #: Checked by promtool or amtool on the host before they replace the running ones.
    prometheus_files: list[PlannedFile]
    #: Written after the certificate and key it names.
    web_files: list[PlannedFile]
    dropin_files: list[PlannedFile]
    files: list[PlannedFile]
    secret_files: list[PlannedFile]
    #: The files whose change reloads systemd: the units, the job's and the drop-ins.
    reload_files: list[str]
    #: The monitoring services of the host, each with the files it reads at start (OP-03).
    units: list[dict[str, Any]]
    timers: list[str]
    #: The names of those units and timers to enable and start: the ones the host read did not
    #: find both enabled and active. A service whose files change in this run is restarted after
    #: the start, not by it (OP-03).
    units_to_start: list[str]
    timers_to_start: list[str]
    #: After the run, wait until Prometheus answers ``ready_url``.
    wait_ready: bool
    ready_url: str
    ready_retries: int
    ready_delay_s: int
    #: What the host read found of the files and directories, for install_files' host_state:
    #: none when the run installs a package, which may write the same files after the read.
    host_state: dict[str, str] = field(default_factory=dict)

    def as_vars(self) -> dict[str, Any]:
        """The plan as the role reads it: every list of files as install_files items."""
        found = super().as_vars()
        for name in ("node_exporter_files", "prometheus_files", "web_files", "dropin_files"):
            found[name] = [f.as_task_item() for f in getattr(self, name)]
        return found


def _directory(path: str, group: str = "root", mode: str = "0755") -> dict[str, str]:
    """A directory as install_files and make_directories take it: root's, as the role made it
    with ansible.builtin.file before the plan."""
    return {"path": path, "owner": "root", "group": group, "mode": mode}


def _node_exporter_files(m: Mapping[str, Any], restart: set[str]) -> list[PlannedFile]:
    """Node exporter's settings (bound to the cluster address, reading the textfile directory)
    and the job that measures what no exporter reports: each service's memory maps and open
    files against their limits, ZooKeeper's snapshots against the number it keeps (MO-08), with
    its unit and the timer that runs it every minute."""
    job = m["process_metrics"]

    def planned(name: str, dest: str, mode: str = "0644") -> PlannedFile:
        return PlannedFile(dest=dest, template=template(ROLE, name), mode=mode,
                           restarts=dest in restart)

    return [planned("etc/default/prometheus-node-exporter.j2",
                    "/etc/default/prometheus-node-exporter"),
            planned("usr/local/sbin/kafkaform-process-metrics.j2", job["script"], mode="0755"),
            *(planned(f"etc/systemd/system/{job['name']}.{kind}.j2",
                      f"{SYSTEMD_UNIT_DIR}/{job['name']}.{kind}")
              for kind in ("service", "timer"))]


def _prometheus_files(m: Mapping[str, Any], restart: set[str]) -> list[PlannedFile]:
    """The alert rules (each with a summary and a runbook line), the scrape configuration from
    the cluster model and Alertmanager's, readable by the services' group; both services'
    settings (the cluster address, Prometheus's retention)."""

    def checked(name: str, dest: str, validate: str) -> PlannedFile:
        return PlannedFile(dest=dest, template=template(ROLE, name), group=GROUP,
                           validate=validate, restarts=dest in restart)

    def default(name: str) -> PlannedFile:
        dest = f"/etc/default/{name}"
        return PlannedFile(dest=dest, template=template(ROLE, f"etc/default/{name}.j2"),
                           mode="0644", restarts=dest in restart)

    return [checked("etc/prometheus/rules/kafkaform.yml.j2", m["rules_file"],
                    "promtool check rules %s"),
            checked("etc/prometheus/prometheus.yml.j2", "/etc/prometheus/prometheus.yml",
                    "promtool check config --syntax-only %s"),
            checked("etc/prometheus/alertmanager.yml.j2", "/etc/prometheus/alertmanager.yml",
                    "amtool check-config %s"),
            default("prometheus"), default("prometheus-alertmanager")]


def _restart_files(units: Sequence[Mapping[str, Any]]) -> set[str]:
    """Every file a unit of the host reads at start (the context's restart_files): a change of
    one restarts that unit, if it runs an older configuration (OP-03)."""
    return {path for unit in units for path in unit["restart_files"]}


#: The plan's directories, a list for each step's task.
_STEP_DIRECTORIES = ("node_exporter_directories", "prometheus_directories", "tls_directories",
                     "dropin_directories")


def _directories(m: Mapping[str, Any]) -> dict[str, list[dict[str, str]]]:
    """Each step's directories: the textfile collector's, the alert rules' (the services' group
    reads them), the web configuration's and the TLS material's, each unit's drop-ins'."""
    units, web_config = m["units"], m["tls"]["web_config"]
    return {
        "node_exporter_directories": ([_directory(m["textfile_dir"])]
                                      if m["is_cluster_host"] else []),
        "prometheus_directories": ([_directory(m["rules_dir"], GROUP, "0750")]
                                   if m["is_monitoring_host"] else []),
        "tls_directories": ([_directory(web_config.rsplit("/", 1)[0]),
                             _directory(m["tls"]["dir"], GROUP, "0750")] if units else []),
        "dropin_directories": [_directory(f"{SYSTEMD_UNIT_DIR}/{u['name']}.service.d")
                               for u in units],
    }


def monitoring_plan(cluster: Mapping[str, Any], host: str, settings: Mapping[str, Any],
                    groups: Mapping[str, Sequence[str]], read: MonitoringHost) -> MonitoringPlan:
    """The plan for ``host``, from the model, the role's settings, the inventory's groups (the
    monitoring group is not in the model) and the host read."""
    m = monitoring_context(cluster, host, settings, groups)
    exporter, prometheus = bool(m["is_cluster_host"]), bool(m["is_monitoring_host"])
    units = list(m["units"])
    restart = _restart_files(units)
    timers = [f"{m['process_metrics']['name']}.timer"] if exporter else []
    exporter_packages = _packages(settings, "node_exporter")
    prometheus_packages = _packages(settings, "prometheus", "alertmanager")
    install_exporter = exporter and not set(exporter_packages) <= read.installed
    install_prometheus = prometheus and not set(prometheus_packages) <= read.installed
    node_exporter_files = _node_exporter_files(m, restart) if exporter else []
    prometheus_files = _prometheus_files(m, restart) if prometheus else []
    # Node exporter, Prometheus and Alertmanager read it again on every connection. SE-15
    web_files = [PlannedFile(dest=m["tls"]["web_config"],
                             template=template(ROLE, "etc/prometheus/web.yml.j2"),
                             group=GROUP)] if units else []
    # The sandbox every unit of the platform has, over Debian's units. SE-04
    dropin_files = [PlannedFile(dest=d["dest"],
                                template=template(ROLE, "etc/systemd/system/hardening.conf.j2"),
                                vars=d["vars"], mode="0644", restarts=d["dest"] in restart)
                    for d in m["dropin_files"]]
    return MonitoringPlan(
        context=m,
        node_exporter=exporter,
        prometheus=prometheus,
        tls=bool(units),
        renew_tls=read.web_config,
        node_exporter_packages=exporter_packages,
        install_node_exporter=install_exporter,
        prometheus_packages=prometheus_packages,
        install_prometheus=install_prometheus,
        group=GROUP,
        **_directories(m),
        node_exporter_files=node_exporter_files,
        prometheus_files=prometheus_files,
        web_files=web_files,
        dropin_files=dropin_files,
        files=[*node_exporter_files, *prometheus_files, *web_files, *dropin_files],
        secret_files=[],
        reload_files=[f.dest for f in (*node_exporter_files, *dropin_files)],
        units=[{"name": u["name"], "restart_files": list(u["restart_files"])} for u in units],
        timers=timers,
        units_to_start=[u["name"] for u in units
                        if f"{u['name']}.service" not in read.running_units],
        timers_to_start=[t for t in timers if t not in read.running_units],
        wait_ready=prometheus,
        ready_url=f"{m['prometheus_url']}/-/ready",
        ready_retries=READY_RETRIES,
        ready_delay_s=READY_DELAY_S,
        host_state=({} if install_exporter or install_prometheus else dict(read.paths)),
    )
