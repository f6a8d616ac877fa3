"""``roles/spark_pipeline`` as a pyinfra deploy: the same job modules, settings, Kafka client
files, unit and tools on the driver host; the shared-directory check before the job starts; a
restart when the job runs an older configuration than its files (it resumes from its checkpoints,
and the sinks' commit logs keep a replayed micro-batch from landing twice).

    pyinfra @kafkaform/inventory/lab kafkaform.deploys.spark_pipeline.spark_pipeline
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pyinfra.api.deploy import deploy
from pyinfra.api.exceptions import DeployError
from pyinfra.context import host
from pyinfra.facts.systemd import SystemdStatus
from pyinfra.operations import files, python, systemd

from ..contexts import SYSTEMD_UNIT_DIR
from ..contexts.spark_pipeline import client_logins, spark_pipeline_context
from ..defaults import role_options
from ..model import SPARK_MASTER
from . import tls
from .base import (
    changing,
    cluster,
    put_content,
    put_rendered,
    restart_if_stale,
    role_settings,
    run_on,
    until_ok,
    will_change,
)
from .facts import ServiceStale

ROLE = "spark_pipeline"
#: The tools on the driver host (roles/spark_pipeline/vars/main.yml).
TOOL = "/usr/local/bin/kafkaform-pipeline"
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


def _logins(job: dict[str, Any]) -> dict[str, dict[str, str]]:
    try:
        return client_logins(job, role_settings(ROLE, "kafka_users").get("kafka_users"))
    except ValueError as error:
        raise DeployError(f"{host.name}: {error}") from error


def _install(job: dict[str, Any]) -> tuple[list[Any], bool]:
    """roles/spark_pipeline/tasks/install.yml; returns the operations of the files the job reads
    at submit, and whether its trust bundle may change."""
    group = job["group"]
    for path, mode in ((f"{job['code_dir']}/kafkaform", "755"), (job["module_dir"], "755"),
                       (job["conf_dir"], "750")):
        files.directory(name=f"Create {path}", path=path, user="root", group=group, mode=mode)
    ops = [put_content("", f"{job['code_dir']}/kafkaform/__init__.py")]
    ops += [files.put(name=f"Install {module['dest']}", src=module["src"], dest=module["dest"],
                      user="root", group="root", mode="644")
            for module in job["modules"]]
    rendered = {ROLE: job}
    ops.append(put_rendered("spark_pipeline/pipeline.properties.j2", rendered,
                            job["config_file"], group=group, mode="640"))
    trust_changes = tls.certificate(list(job["tls_names"]), "spark", group, trust=job["trust"])
    logins = _logins(job)
    for identity, client in job["clients"].items():
        ops.append(put_rendered(
            "spark_pipeline/kafka-client.properties.j2",
            {**rendered, "spark_pipeline_client": logins[identity]},
            client["config"], group=group, mode="640"))
    ops.append(put_rendered("spark_pipeline/kafkaform-pipeline.service.j2", rendered,
                            f"{SYSTEMD_UNIT_DIR}/{job['unit']}.service"))
    put_rendered("spark_pipeline/kafkaform-pipeline.sh.j2", rendered, TOOL, mode="755")
    files.directory(name="Create the pipeline's directory on the shared filesystem",
                    path=job["data_dir"], user=job["user"], group=group, mode="750")
    return ops, trust_changes


def _check_shared_dir(job: dict[str, Any], workers: list[str]) -> None:
    """roles/spark_pipeline/tasks/shared_dir.yml, at execution time: the driver leaves a marker
    in the pipeline's directory, every worker must read it and answer. On a directory that is not
    really shared the job would "succeed" and lose data."""
    marker_dir = f"{job['data_dir']}/.shared-check"
    text = f"{host.name} {datetime.now(UTC).isoformat()}"
    spark = ["runuser", "-u", job["user"], "--", "sh", "-c"]
    ran = run_on(host.name, [*spark, 'mkdir -p "$1" && echo "$2" > "$1/from-driver"', "check",
                             marker_dir, text])
    if not ran.ok:
        raise DeployError(f"{host.name}: cannot write {marker_dir} as {job['user']}: {ran.said}")
    unshared = []
    for worker in workers:
        read = run_on(worker, [*spark, 'cat "$1/from-driver" && touch "$1/from-$2"', "check",
                               marker_dir, worker])
        answered = run_on(host.name, ["test", "-e", f"{marker_dir}/from-{worker}"])
        if not read.ok or read.stdout.strip() != text or not answered.ok:
            unshared.append(worker)
    run_on(host.name, ["rm", "-rf", marker_dir])
    if unshared:
        raise DeployError(
            f"{', '.join(unshared)}: {job['data_dir']} is not the same directory there as on "
            f"{host.name} (the driver's marker was not read back, or the spark user cannot "
            "write there). Fix: mount one shared filesystem (NFS or similar) at "
            "spark_node_shared_dir on every Spark node, owned by the spark user with the same "
            "uid everywhere; nothing was started.")


def _wait_running(job: dict[str, Any], timeout_s: float, executor: str) -> None:
    ran = until_ok(host.name, ["python3", "-c", RUNNING_PROBE, job["master_state_url"],
                               job["trust"], job["application"]], timeout_s, 3.0)
    if not ran.ok:
        raise DeployError(
            f"{host.name}: the master does not run {job['application']} on executors after "
            f"{timeout_s:g} s: {ran.said}. A worker must offer {executor}: lower them or give the "
            f"workers more. See `journalctl -u {job['unit']}`.")


@deploy("spark_pipeline")
def spark_pipeline() -> None:
    """The spark_pipeline role on the spark_master hosts (playbooks/pipeline.yml)."""
    if SPARK_MASTER not in host.groups:
        return
    s = settings()
    job = spark_pipeline_context(cluster(), host.name, s)
    restart_ops, trust_changes = _install(job)
    unit = restart_ops[-1]
    started_wanted = s["spark_pipeline_state"] == "started"
    stale_now = host.get_fact(ServiceStale, service=job["unit"],
                              paths=tuple(job["restart_files"]))["stale"]
    # The Spark node's files it reads may change earlier in this run (site.spark), after the
    # stale probe above.
    might_restart = (trust_changes or stale_now or will_change(*restart_ops)
                     or changing(job["restart_files"]))
    unit_name = f"{job['unit']}.service"
    running = host.get_fact(SystemdStatus, services=unit_name).get(unit_name, False)
    # Before the job starts or restarts: a running job with nothing changed has nothing to check.
    if started_wanted and (might_restart or not running):
        python.call(name="Check that the driver and every worker share the pipeline's directory",
                    function=_check_shared_dir, job=job,
                    workers=[str(n["host"]) for n in cluster()["spark_workers"]])
    if will_change(unit):
        systemd.daemon_reload(name="Reload systemd for the pipeline unit")
    service = systemd.service(name="Run (or stop) the pipeline service", service=job["unit"],
                              running=started_wanted, enabled=started_wanted)
    if started_wanted and might_restart:
        python.call(name="Restart the job when it runs an older configuration [OP-03]",
                    function=restart_if_stale, service=job["unit"],
                    restart_files=job["restart_files"])
    if started_wanted and (might_restart or will_change(service)):
        executor = (f"spark_pipeline_executor_cores ({s['spark_pipeline_executor_cores']}) "
                    "free cores and spark_pipeline_executor_memory_mb "
                    f"({s['spark_pipeline_executor_memory_mb']}) MB")
        python.call(name="Wait until the master runs the pipeline application on executors",
                    function=_wait_running, job=job,
                    timeout_s=float(s["spark_pipeline_start_timeout_s"]), executor=executor)
