"""``roles/monitoring`` as a pyinfra deploy: the host's plan (kafkaform.plans.monitoring), carried
out as the role carries it out: node exporter on every host of the platform, Prometheus and
Alertmanager on the monitoring group, from Debian's packages, with the same files, the same
hardening drop-ins, and a restart of a service only when it runs an older configuration than its
files (the role's stale check, OP-03).

    pyinfra @kafkaform/inventory/lab kafkaform.deploys.monitoring.monitoring

The role checks the rules and the configurations with promtool and amtool before they replace the
running ones (the plan's ``validate``); pyinfra has no such hook, and the control node no
promtool: the files come from the same templates, which tests/integration/test_alert_rules.py
checks with promtool.
"""

from __future__ import annotations

from typing import Any

from pyinfra.api.deploy import deploy
from pyinfra.api.exceptions import DeployError
from pyinfra.context import host
from pyinfra.operations import python, systemd

from ..plans.files import PlannedFile
from ..plans.monitoring import ROLE, MonitoringPlan, host_read, monitoring_plan, parse_host
from . import tls
from .base import (
    Planned,
    cluster,
    install_packages,
    install_planned,
    inventory_view,
    make_directories,
    restart_if_stale,
    role_settings,
    until_ok,
    will_change,
)
from .facts import CommandOutput, ServiceStale

#: Debian's node exporter package recommends collectors (smartmontools, apt) nothing scrapes, and
#: Prometheus recommends node exporter, which the node exporter part owns: no recommends.
APT_CACHE_SECONDS = 3600


def plan() -> MonitoringPlan:
    """The plan of the current host, from its host read."""
    settings, groups = role_settings(ROLE), inventory_view().groups
    argv = tuple(host_read(cluster(), host.name, settings, groups))
    read = parse_host(host.get_fact(CommandOutput, argv=argv))
    return monitoring_plan(cluster(), host.name, settings, groups, read)


def _write(p: MonitoringPlan, planned: list[PlannedFile]) -> dict[str, Planned]:
    """``install_files`` on ``planned``, rendered with the plan's context."""
    return install_planned([f.as_task_item() for f in planned], {ROLE: p.context})


def _install(p: MonitoringPlan) -> dict[str, Planned]:
    """roles/monitoring/tasks/node_exporter.yml and prometheus.yml; returns each destination's
    operation."""
    written: dict[str, Planned] = {}
    if p.node_exporter:
        if p.install_node_exporter:
            install_packages("Install node exporter from the distribution",
                             p.node_exporter_packages, cache_time=APT_CACHE_SECONDS,
                             no_recommends=True)
        make_directories(p.node_exporter_directories)
        # MO-08: what no exporter reports, measured every minute by a timer.
        written |= _write(p, p.node_exporter_files)
    if p.prometheus:
        if p.install_prometheus:
            install_packages("Install Prometheus and Alertmanager from the distribution",
                             p.prometheus_packages, cache_time=APT_CACHE_SECONDS,
                             no_recommends=True)
        make_directories(p.prometheus_directories)
        written |= _write(p, p.prometheus_files)
    return written


def _tls(p: MonitoringPlan) -> dict[str, Planned]:
    """roles/monitoring/tasks/tls.yml: the monitoring services' own certificate and their web
    configuration (SE-15); they read both again on every connection, so neither restarts them."""
    m = p.context
    t = m["tls"]
    make_directories(p.tls_directories)
    tls.certificate(list(m["tls_names"]), m["tls_service"], p.group, service=m["tls_service"],
                    trust=t["trust"], cert=t["cert"], key=t["key"])
    return _write(p, p.web_files)


#: Asks Prometheus whether it is ready, presenting the host's monitoring certificate (SE-15).
READY_PROBE = """import ssl, sys, urllib.request
context = ssl.create_default_context(cafile=sys.argv[2])
context.load_cert_chain(sys.argv[3], sys.argv[4])
urllib.request.urlopen(sys.argv[1], timeout=5, context=context)"""


def _wait_ready(url: str, tls_files: dict[str, str], retries: int, delay_s: float) -> None:
    timeout_s = retries * delay_s
    ran = until_ok(host.name, ["python3", "-c", READY_PROBE, url, tls_files["trust"],
                               tls_files["cert"], tls_files["key"]], timeout_s, delay_s)
    if not ran.ok:
        raise DeployError(f"{host.name}: Prometheus is not ready at {url} after {timeout_s:g} s: "
                          f"{ran.said}. See `journalctl -u prometheus`.")


def _run(p: MonitoringPlan, written: dict[str, Planned]) -> list[Any]:
    """roles/monitoring/tasks/service.yml after the files: reload systemd for the units' files,
    start the services and the job's timer, restart a service that runs an older configuration
    than its files (OP-03); returns the start operations."""
    if will_change(*(written[dest] for dest in p.reload_files)):
        systemd.daemon_reload(name="Reload systemd for the monitoring units")
    # Only those the host read found not both enabled and active, as the role does.
    started = [systemd.service(name=f"Enable and start {name}", service=name, running=True,
                               enabled=True) for name in p.units_to_start]
    for timer in p.timers_to_start:
        systemd.service(name=f"Enable and start {timer} [MO-08]", service=timer, running=True,
                        enabled=True)
    restart_ops = [written[f.dest] for f in p.files if f.restarts]
    for unit in p.units:
        stale = host.get_fact(ServiceStale, service=unit["name"],
                              paths=tuple(unit["restart_files"]))["stale"]
        if stale or will_change(*restart_ops):
            # Nothing here holds data a restart could lose: Prometheus replays its WAL.
            python.call(name=f"Restart {unit['name']} if it runs an older configuration [OP-03]",
                        function=restart_if_stale, service=unit["name"],
                        restart_files=unit["restart_files"])
    return started


@deploy("monitoring")
def monitoring() -> None:
    """The monitoring role on every host of the platform and the monitoring group
    (playbooks/monitoring.yml)."""
    p = plan()
    written = _install(p)
    if p.tls:
        written |= _tls(p)
    # roles/monitoring/tasks/service.yml
    make_directories(p.dropin_directories)
    written |= _write(p, p.dropin_files)
    started = _run(p, written)
    if p.wait_ready and will_change(*written.values(), *started):
        python.call(name="Wait until Prometheus is ready to serve queries", function=_wait_ready,
                    url=p.ready_url, tls_files=p.context["tls"], retries=p.ready_retries,
                    delay_s=float(p.ready_delay_s))
