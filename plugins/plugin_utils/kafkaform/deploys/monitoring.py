"""``roles/monitoring`` as a pyinfra deploy: node exporter on every host of the platform,
Prometheus and Alertmanager on the monitoring group, from Debian's packages, with the same files,
the same hardening drop-ins, and a restart of a service only when it runs an older configuration
than its files (the role's stale check, OP-03).

    pyinfra @kafkaform/inventory/lab kafkaform.deploys.monitoring.monitoring

The role checks the rules and the configurations with promtool and amtool before they replace the
running ones; pyinfra has no such hook, and the control node no promtool: the files come from the
same templates, which tests/integration/test_alert_rules.py checks with promtool.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from pyinfra.api.deploy import deploy
from pyinfra.api.exceptions import DeployError
from pyinfra.context import host
from pyinfra.operations import files, python, systemd

from ..contexts import SYSTEMD_UNIT_DIR
from ..contexts.monitoring import monitoring_context
from . import tls
from .base import (
    cluster,
    install_packages,
    inventory_view,
    put_rendered,
    restart_if_stale,
    role_settings,
    until_ok,
    will_change,
)
from .facts import ServiceStale

ROLE = "monitoring"
#: Debian's node exporter package recommends collectors (smartmontools, apt) nothing scrapes, and
#: Prometheus recommends node exporter, which the node exporter part owns: no recommends.
APT_CACHE_SECONDS = 3600


def _node_exporter(m: dict[str, Any], s: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    """roles/monitoring/tasks/node_exporter.yml; returns the operations on node exporter's own
    files and those on the process-metrics job's (no restart of node exporter needs them)."""
    install_packages("Install node exporter from the distribution",
                     [str(s["monitoring_node_exporter_package"])], cache_time=APT_CACHE_SECONDS,
                     no_recommends=True)
    files.directory(name="Create the textfile collector's directory", path=m["textfile_dir"],
                    user="root", group="root", mode="755")
    job = m["process_metrics"]
    exporter = [put_rendered("monitoring/node-exporter.default.j2", {ROLE: m},
                             "/etc/default/prometheus-node-exporter")]
    # MO-08: what no exporter reports, measured every minute by a timer.
    measuring = [put_rendered("monitoring/kafkaform-process-metrics.j2", {ROLE: m},
                              job["script"], mode="755"),
                 *[put_rendered(f"monitoring/{job['name']}.{kind}.j2", {ROLE: m},
                                f"{SYSTEMD_UNIT_DIR}/{job['name']}.{kind}")
                   for kind in ("service", "timer")]]
    return exporter, measuring


def _prometheus(m: dict[str, Any], s: dict[str, Any]) -> list[Any]:
    """roles/monitoring/tasks/prometheus.yml; returns the file operations."""
    install_packages("Install Prometheus and Alertmanager from the distribution",
                     [str(s["monitoring_prometheus_package"]),
                      str(s["monitoring_alertmanager_package"])],
                     cache_time=APT_CACHE_SECONDS, no_recommends=True)
    files.directory(name="Create the directory of the alert rules", path=m["rules_dir"],
                    user="root", group="prometheus", mode="750")
    rendered = {ROLE: m}
    ops = [put_rendered(f"monitoring/{template}", rendered, dest, group="prometheus", mode="640")
           for template, dest in (("alerts.yml.j2", m["rules_file"]),
                                  ("prometheus.yml.j2", "/etc/prometheus/prometheus.yml"),
                                  ("alertmanager.yml.j2", "/etc/prometheus/alertmanager.yml"))]
    ops += [put_rendered(f"monitoring/{name}.default.j2", rendered, f"/etc/default/{name}")
            for name in ("prometheus", "prometheus-alertmanager")]
    return ops


def _tls(m: dict[str, Any]) -> None:
    """roles/monitoring/tasks/tls.yml: the monitoring services' own certificate and their web
    configuration (SE-15); they read both again on every connection, so neither restarts them."""
    t = m["tls"]
    files.directory(name="Create the directory of the monitoring services' configuration",
                    path=str(PurePosixPath(t["web_config"]).parent), user="root", group="root",
                    mode="755")
    files.directory(name="Create the monitoring services' TLS directory", path=t["dir"],
                    user="root", group="prometheus", mode="750")
    tls.certificate(list(m["tls_names"]), m["tls_service"], "prometheus", service=m["tls_service"],
                    trust=t["trust"], cert=t["cert"], key=t["key"])
    put_rendered("monitoring/web.yml.j2", {ROLE: m}, t["web_config"], group="prometheus",
                 mode="640")


#: Asks Prometheus whether it is ready, presenting the host's monitoring certificate (SE-15).
READY_PROBE = """import ssl, sys, urllib.request
context = ssl.create_default_context(cafile=sys.argv[2])
context.load_cert_chain(sys.argv[3], sys.argv[4])
urllib.request.urlopen(sys.argv[1], timeout=5, context=context)"""


def _wait_ready(url: str, tls_files: dict[str, str]) -> None:
    ran = until_ok(host.name, ["python3", "-c", READY_PROBE, f"{url}/-/ready",
                               tls_files["trust"], tls_files["cert"], tls_files["key"]],
                   60.0, 2.0)
    if not ran.ok:
        raise DeployError(f"{host.name}: Prometheus is not ready at {url} after 60 s: "
                          f"{ran.said}. See `journalctl -u prometheus`.")


@deploy("monitoring")
def monitoring() -> None:
    """The monitoring role on every host of the platform and the monitoring group
    (playbooks/monitoring.yml)."""
    s = role_settings(ROLE)
    m = monitoring_context(cluster(), host.name, s, inventory_view().groups)
    ops = []
    # The job's files reload systemd but restart no monitoring service.
    job_ops: list[Any] = []
    if m["is_cluster_host"]:
        exporter_ops, job_ops = _node_exporter(m, s)
        ops += exporter_ops
    if m["is_monitoring_host"]:
        ops += _prometheus(m, s)
    if m["units"]:
        _tls(m)
    # roles/monitoring/tasks/service.yml
    for unit in m["units"]:
        dropin = f"{SYSTEMD_UNIT_DIR}/{unit['name']}.service.d"
        files.directory(name=f"Create {dropin}", path=dropin, user="root", group="root",
                        mode="755")
    ops += [put_rendered("monitoring/hardening.conf.j2", {ROLE: m, **hardening["vars"]},
                         hardening["dest"]) for hardening in m["dropin_files"]]
    if will_change(*ops, *job_ops):
        systemd.daemon_reload(name="Reload systemd for the monitoring units")
    started = [systemd.service(name=f"Enable and start {unit['name']}", service=unit["name"],
                               running=True, enabled=True) for unit in m["units"]]
    if m["is_cluster_host"]:
        timer = f"{m['process_metrics']['name']}.timer"
        systemd.service(name=f"Enable and start {timer} [MO-08]", service=timer, running=True,
                        enabled=True)
    for unit in m["units"]:
        stale = host.get_fact(ServiceStale, service=unit["name"],
                              paths=tuple(unit["restart_files"]))["stale"]
        if stale or will_change(*ops):
            # Nothing here holds data a restart could lose: Prometheus replays its WAL.
            python.call(name=f"Restart {unit['name']} if it runs an older configuration [OP-03]",
                        function=restart_if_stale, service=unit["name"],
                        restart_files=unit["restart_files"])
    if m["is_monitoring_host"] and will_change(*ops, *started):
        python.call(name="Wait until Prometheus is ready to serve queries", function=_wait_ready,
                    url=m["prometheus_url"], tls_files=m["tls"])
