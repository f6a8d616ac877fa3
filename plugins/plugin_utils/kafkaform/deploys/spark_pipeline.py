"""``roles/spark_pipeline`` as a pyinfra deploy, carrying out the same plan
(kafkaform.plans.spark_pipeline): the same job modules, settings, Kafka client files, unit and
tools on the driver host; the shared-directory check before the job starts; a restart when the job
runs an older configuration than its files (it resumes from its checkpoints, and the sinks' commit
logs keep a replayed micro-batch from landing twice).

    pyinfra @kafkaform/inventory/lab kafkaform.deploys.spark_pipeline.spark_pipeline
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pyinfra.api.deploy import deploy
from pyinfra.api.exceptions import DeployError
from pyinfra.context import host
from pyinfra.operations import python, systemd

from ..defaults import role_options
from ..model import SPARK_MASTER
from ..plans.spark_pipeline import (
    PROBE_DELAY_S,
    ROLE,
    SharedCheck,
    SparkPipelinePlan,
    host_read,
    parse_host,
    spark_pipeline_plan,
    with_logins,
)
from . import tls
from .base import (
    Planned,
    Unchanged,
    changing,
    cluster,
    install_planned,
    make_directories,
    restart_if_stale,
    role_settings,
    run_on,
    until_ok,
    will_change,
)
from .facts import CommandOutput

#: Whether the master runs the application named in argv[3] on executors (its state over its
#: TLS port): an application no worker can give an executor waits with 0 cores, reading nothing.
RUNNING_PROBE = """\
import json, ssl, sys, urllib.request
url, trust, name = sys.argv[1:]
context = ssl.create_default_context(cafile=trust)
with urllib.request.urlopen(url, timeout=10, context=context) as answer:
    apps = json.load(answer).get("activeapps", [])
running = [a for a in apps if a.get("name") == name and a.get("state") == "RUNNING"]
cores = [a.get("cores", 0) for a in running]
sys.exit(0 if len(cores) == 1 and cores[0] > 0
         else f"{name}: {len(running)} RUNNING, cores granted {cores}")
"""


def settings() -> dict[str, Any]:
    """``spark_pipeline_settings`` of roles/spark_pipeline/vars/main.yml: the role's inputs and
    the spark_node settings the inventory gives."""
    return role_settings(ROLE, *role_options("spark_node"))


def plan(s: dict[str, Any]) -> SparkPipelinePlan:
    """The driver host's plan, from its host read (the deploy's one question before it plans)."""
    read = parse_host(host.get_fact(CommandOutput, argv=tuple(host_read(cluster(), host.name, s))))
    return spark_pipeline_plan(cluster(), host.name, s, read)


def _client_files(p: SparkPipelinePlan) -> list[dict[str, Any]]:
    """The plan's Kafka client files with each identity's login (kafka_users' passwords)."""
    kafka_users = role_settings(ROLE, "kafka_users").get("kafka_users")
    try:
        return with_logins([f.as_task_item() for f in p.secret_files], p.context, kafka_users)
    except ValueError as error:
        raise DeployError(f"{host.name}: {error}") from error


def _install(p: SparkPipelinePlan) -> tuple[list[Planned], Planned, bool]:
    """roles/spark_pipeline/tasks/install.yml; returns the operations of the files the job reads
    at submit, that of its unit, and whether its trust bundle may change."""
    job = p.context
    make_directories(p.directories)
    rendered = {ROLE: job}
    written = install_planned([f.as_task_item() for f in p.files], rendered)
    trust_changes = tls.certificate(list(job["tls_names"]), "spark", job["group"],
                                    trust=job["trust"])
    written |= install_planned(_client_files(p), rendered)
    restart = [written[f.dest] for f in (*p.files, *p.secret_files) if f.restarts]
    return restart, written[p.unit_file], trust_changes


def _check_shared_dir(check: SharedCheck, user: str, data_dir: str) -> None:
    """roles/spark_pipeline/tasks/shared_dir.yml, at execution time: the driver leaves a marker
    in the pipeline's directory, every worker must read it and answer. On a directory that is not
    really shared the job would "succeed" and lose data."""
    text = f"{host.name} {datetime.now(UTC).isoformat()}"
    ran = run_on(host.name, [*check.write_argv, text])
    if not ran.ok:
        raise DeployError(f"{host.name}: cannot write {check.marker_dir} as {user}: {ran.said}")
    unshared = []
    for worker in check.workers:
        read = run_on(worker, check.read_argv[worker])
        answered = run_on(host.name, ["test", "-e", check.answers[worker]])
        if not read.ok or read.stdout.strip() != text or not answered.ok:
            unshared.append(worker)
    run_on(host.name, ["rm", "-rf", check.marker_dir])
    if unshared:
        raise DeployError(
            f"{', '.join(unshared)}: {data_dir} is not the same directory there as on "
            f"{host.name} (the driver's marker was not read back, or the spark user cannot "
            "write there). Fix: mount one shared filesystem (NFS or similar) at "
            "spark_node_shared_dir on every Spark node, owned by the spark user with the same "
            "uid everywhere; nothing was started.")


def _start_if_stopped(unit: str) -> bool:
    """At execution time: start the job when it is not running; True when it did."""
    if run_on(host.name, ["systemctl", "is-active", "--quiet", f"{unit}.service"]).ok:
        return False
    ran = run_on(host.name, ["systemctl", "start", f"{unit}.service"])
    if not ran.ok:
        raise DeployError(f"{host.name}: starting {unit} failed: {ran.said}. See "
                          f"`journalctl -u {unit}`.")
    return True


def _wait_running(job: dict[str, Any], timeout_s: float, executor: str) -> None:
    ran = until_ok(host.name, ["python3", "-c", RUNNING_PROBE, job["master_state_url"],
                               job["trust"], job["application"]], timeout_s, PROBE_DELAY_S)
    if not ran.ok:
        raise DeployError(
            f"{host.name}: the master does not run {job['application']} on executors after "
            f"{timeout_s:g} s: {ran.said}. A worker must offer {executor}: lower them or give the "
            f"workers more. See `journalctl -u {job['unit']}`.")


@deploy("spark_pipeline: before the Spark nodes")
def before_spark_nodes() -> None:
    """The first play of playbooks/spark_node.yml: refuse a Spark release that cannot resume the
    pipeline's checkpoints (raised while pyinfra plans, so before any host is touched), and stop
    a job whose release is about to change. SP-12"""
    if SPARK_MASTER not in host.groups:
        return
    p = plan(settings())
    if p.carry_over_problem:
        raise DeployError(p.carry_over_problem)
    if p.stop_for_release:
        systemd.service(name="Stop the job before the Spark nodes change release [SP-12]",
                        service=p.context["unit"], running=False)


@deploy("spark_pipeline")
def spark_pipeline() -> None:
    """The spark_pipeline role on the spark_master hosts (playbooks/pipeline.yml)."""
    if SPARK_MASTER not in host.groups:
        return
    s = settings()
    p = plan(s)
    job = p.context
    restart_ops, unit, trust_changes = _install(p)
    # The Spark node's files it reads may change earlier in this run (site.spark), after the
    # host read.
    might_restart = (trust_changes or p.stale or will_change(*restart_ops)
                     or changing(job["restart_files"]))
    # Before the job starts or restarts: a running job with nothing changed has nothing to check.
    if p.start and (might_restart or not p.running):
        python.call(name="Check that the driver and every worker share the pipeline's directory",
                    function=_check_shared_dir, check=p.shared_check, user=job["user"],
                    data_dir=job["data_dir"])
    if will_change(unit):
        systemd.daemon_reload(name="Reload systemd for the pipeline unit")
    # Asked only when the host read found the unit not so already, as the role does.
    service: Planned = Unchanged()
    if p.set_service:
        service = systemd.service(name="Run (or stop) the pipeline service", service=job["unit"],
                                  running=p.start, enabled=p.start)
    if p.start and might_restart:
        python.call(name="Restart the job when it runs an older configuration [OP-03]",
                    function=restart_if_stale, service=job["unit"],
                    restart_files=job["restart_files"])
    if p.start and p.stop_for_release:
        # before_spark_nodes may have stopped it after this plan's read, which saw it run.
        service = python.call(name="Start the job on the new Spark release [SP-12]",
                              function=_start_if_stopped, unit=job["unit"])
    if p.start and (might_restart or will_change(service)):
        executor = (f"spark_pipeline_executor_cores ({s['spark_pipeline_executor_cores']}) "
                    "free cores and spark_pipeline_executor_memory_mb "
                    f"({s['spark_pipeline_executor_memory_mb']}) MB")
        python.call(name="Wait until the master runs the pipeline application on executors",
                    function=_wait_running, job=job, timeout_s=p.start_timeout_s,
                    executor=executor)
