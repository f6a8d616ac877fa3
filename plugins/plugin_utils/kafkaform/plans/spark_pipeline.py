"""The spark_pipeline role's plan for the driver host: the job's directories and files with
whether the job restarts for each, whether it runs, the shared-directory check's probes and the
start wait (roles/spark_pipeline, deploys/spark_pipeline.py).
"""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..catalog import checkpoint_carry_over_problem
from ..contexts import SYSTEMD_UNIT_DIR
from ..contexts.spark_pipeline import UNIT, client_logins, restart_files, spark_pipeline_context
from ..defaults import setting
from ..pipeline.config import RELEASE_FILE, checkpoints_dir
from ..release_marker import marker_version
from ..rules import cite
from . import hostread
from .artifact import read_marker
from .files import PlannedFile, WritesFiles, planned_paths, template
from .spark_node import node_release

ROLE = "spark_pipeline"
#: The tools on the driver host: ``kafkaform-pipeline generate|audit|latency ...``.
TOOL = "/usr/local/bin/kafkaform-pipeline"
#: The variable kafka-client.properties.j2 reads its identity and, once filled in, its password
#: from (:func:`with_logins`).
CLIENT = "spark_pipeline_client"
#: systemd's sub-states the deploy counted as a running job before the plan (pyinfra's
#: SystemdStatus fact).
RUNNING_STATES = frozenset({"running", "waiting", "exited", "listening", "mounted"})
#: Seconds between two looks at the master while the job starts.
PROBE_DELAY_S = 3


@dataclass(frozen=True)
class SparkPipelineHost:
    """What the run needs to know of the driver host before it changes anything."""

    #: The job's unit runs now.
    running: bool = False
    #: The job runs an older configuration than its files already (OP-03: a run stopped
    #: between writing a file and the restart leaves it so), or the host could not tell.
    stale: bool = False
    #: The job's unit is enabled and active now; disabled and inactive now (neither, for a unit
    #: that does not exist or where systemd could not tell).
    enabled_and_active: bool = False
    disabled_and_inactive: bool = False
    #: The state of each planned file and directory that exists (hostread.path_states).
    paths: Mapping[str, str] = field(default_factory=dict)
    #: The queries' checkpoints exist; the Spark release their RELEASE_FILE names ("" without
    #: one); the release installed behind spark_node_install_dir ("" without one). SP-12
    checkpoints: bool = False
    checkpoint_release: str = ""
    installed_release: str = ""


def host_read(cluster: Mapping[str, Any], host: str, settings: Mapping[str, Any]) -> list[str]:
    """The one command that reads the driver host (its answers: :func:`parse_host`): the unit's
    sub-state, the service_stale module's answer for the files the job reads at submit, and the
    state of the files and directories the plan writes without secrets; the checkpoints, the
    release that last wrote them and the release installed (SP-12)."""
    unit = f"{UNIT}.service"
    stale = shlex.join(hostread.service_stale_argv(unit, restart_files(settings)))
    job = spark_pipeline_context(cluster, host, settings)
    checkpoints = checkpoints_dir(job["data_dir"])
    release_file = f"{checkpoints}/{RELEASE_FILE}"
    return hostread.command([
        hostread.ask("state", f"systemctl show --property SubState --value {unit} 2>/dev/null"),
        hostread.ask("stale", f"{stale} 2>/dev/null"),
        *hostread.unit_states([unit]),
        *hostread.path_states(planned_paths(_files(job), _directories(job))),
        hostread.ask("checkpoints", "echo yes", present=checkpoints),
        hostread.ask("checkpoint_release", f"head -c 64 {shlex.quote(release_file)}",
                     present=release_file),
        node_release(settings).question(),
    ])


def _stale(answer: str | None) -> bool:
    """service_stale's JSON answer; True when there is none to read, so that the deploy asks
    again where it would restart the job and says there why it cannot tell."""
    try:
        return bool(json.loads(answer or "")["stale"])
    except (ValueError, KeyError, TypeError):
        return True


def parse_host(stdout: str) -> SparkPipelineHost:
    """:func:`host_read`'s answers."""
    found = hostread.answers(stdout)
    unit = f"{UNIT}.service"
    return SparkPipelineHost(running=found.get("state", "") in RUNNING_STATES,
                             stale=_stale(found.get("stale")),
                             enabled_and_active=unit in hostread.running_units(found),
                             disabled_and_inactive=unit in hostread.stopped_units(found),
                             paths=hostread.found_paths(found),
                             checkpoints=found.get("checkpoints") == "yes",
                             checkpoint_release=found.get("checkpoint_release", ""),
                             installed_release=marker_version(read_marker(found)))


@dataclass(frozen=True)
class SharedCheck:
    """roles/spark_pipeline/tasks/shared_dir.yml's probes, run as the spark user: the driver
    writes a marker (write_argv, the marker's text appended), each worker reads it and answers
    beside it (read_argv, by worker), the driver looks for each answer (answers, by worker), then
    removes marker_dir. On a directory that is not really shared the job would "succeed" and
    lose data."""

    workers: list[str]
    marker_dir: str
    write_argv: list[str]
    read_argv: dict[str, list[str]]
    answers: dict[str, str]


@dataclass(frozen=True)
class SparkPipelinePlan(WritesFiles):
    """Everything the role does on the driver host, decided."""

    #: The templates' input (kafkaform.contexts.spark_pipeline).
    context: dict[str, Any]
    #: spark_pipeline_state, and whether the job runs (enabled, started, waited for).
    state: str
    start: bool
    #: Whether to enable and start the unit (``start``), or disable and stop it: not when the
    #: host read found it so already. A job whose files change in this run is restarted after
    #: this, not by it (OP-03).
    set_service: bool
    #: The host read's answers, which the deploy weighs with what its own run changes: a job
    #: that runs with nothing changed needs no shared-directory check, a stale one a restart.
    running: bool
    stale: bool
    directories: list[dict[str, str]]
    #: The job's unit among the files: a change reloads systemd.
    unit_file: str
    #: The job's modules, settings, unit and tools; its Kafka client files (each identity's
    #: login, filled in by with_logins inside a step that neither logs nor diffs).
    files: list[PlannedFile]
    secret_files: list[PlannedFile]
    shared_check: SharedCheck
    #: After a start or restart, the master is asked every PROBE_DELAY_S up to start_retries
    #: times whether it runs the application on executors.
    start_timeout_s: float
    start_retries: int
    #: What the host read found of ``files`` and ``directories`` (install_files' host_state).
    host_state: dict[str, str] = field(default_factory=dict)
    #: The Spark release the nodes are to run (spark_node_version); the one that last wrote the
    #: queries' checkpoints ("" when there are none). SP-12
    spark_release: str = ""
    checkpoint_release: str = ""
    #: Why the nodes' release cannot resume the checkpoints, naming the host, the setting and
    #: the fix; "" when it can. Refused before any Spark node changes.
    carry_over_problem: str = ""
    #: The job runs on another release than spark_release: it stops before the Spark nodes
    #: change release (a driver and its executors run one release), and this plan starts it on
    #: the new one, from its checkpoints.
    stop_for_release: bool = False


def _directories(job: Mapping[str, Any]) -> list[dict[str, str]]:
    """Root's code and settings; on the shared filesystem the job's own directory, where it
    writes its sinks and checkpoints."""
    group = job["group"]
    return [
        {"path": f"{job['code_dir']}/kafkaform", "owner": "root", "group": group, "mode": "0755"},
        {"path": job["module_dir"], "owner": "root", "group": group, "mode": "0755"},
        {"path": job["conf_dir"], "owner": "root", "group": group, "mode": "0750"},
        {"path": job["data_dir"], "owner": job["user"], "group": group, "mode": "0750"},
    ]


def _unit_file(job: Mapping[str, Any]) -> str:
    return f"{SYSTEMD_UNIT_DIR}/{job['unit']}.service"


def _files(job: Mapping[str, Any]) -> list[PlannedFile]:
    """Everything but the tools is read at submit (the code directory, pipeline.properties with
    its bootstrap brokers, the unit: the context's restart_files), so a change restarts the job.
    OP-03, CL-08"""

    def module(dest: str, src: str | None = None, content: str | None = None) -> PlannedFile:
        return PlannedFile(dest=dest, src=src, content=content, mode="0644", restarts=True)

    return [
        module(f"{job['code_dir']}/kafkaform/__init__.py", content=""),
        *(module(m["dest"], src=m["src"]) for m in job["modules"]),
        PlannedFile(dest=job["config_file"],
                    template=template(ROLE, "etc/kafkaform-pipeline/pipeline.properties.j2"),
                    group=job["group"], mode="0640", restarts=True),
        PlannedFile(dest=_unit_file(job),
                    template=template(ROLE, "etc/systemd/system/kafkaform-pipeline.service.j2"),
                    mode="0644", restarts=True),
        PlannedFile(dest=TOOL, template=template(ROLE, "usr/local/bin/kafkaform-pipeline.j2"),
                    mode="0755"),
    ]


def _client_files(job: Mapping[str, Any]) -> list[PlannedFile]:
    """Each identity's Kafka client file, readable by the Spark group only. SE-03, SE-06"""
    client_template = template(ROLE, "etc/kafkaform-pipeline/kafka-client.properties.j2")
    return [PlannedFile(dest=client["config"], template=client_template,
                        vars={CLIENT: {"identity": identity}}, group=job["group"], mode="0640",
                        restarts=True)
            for identity, client in job["clients"].items()]


def with_logins(items: list[dict[str, Any]], context: Mapping[str, Any],
                kafka_users: Any) -> list[dict[str, Any]]:
    """``install_files`` items with each client file's login (its identity and the password
    kafka_users declares for its user) in its template's variables: what both engines hand the
    host, inside a step that neither logs nor diffs. Raises ValueError naming an identity whose
    user kafka_users does not declare."""
    logins = client_logins(context, kafka_users)

    def filled(item: dict[str, Any]) -> dict[str, Any]:
        given = item.get("vars") or {}
        if CLIENT not in given:
            return item
        return {**item, "vars": {**given, CLIENT: logins[given[CLIENT]["identity"]]}}

    return [filled(item) for item in items]


def _shared_check(job: Mapping[str, Any], workers: list[str]) -> SharedCheck:
    marker_dir = f"{job['data_dir']}/.shared-check"
    as_spark = ["runuser", "-u", str(job["user"]), "--", "sh", "-c"]
    return SharedCheck(
        workers=workers,
        marker_dir=marker_dir,
        write_argv=[*as_spark, 'mkdir -p "$1" && echo "$2" > "$1/from-driver"', "check",
                    marker_dir],
        read_argv={worker: [*as_spark, 'cat "$1/from-driver" && touch "$1/from-$2"', "check",
                            marker_dir, worker] for worker in workers},
        answers={worker: f"{marker_dir}/from-{worker}" for worker in workers})


def spark_pipeline_plan(cluster: Mapping[str, Any], host: str, settings: Mapping[str, Any],
                        read: SparkPipelineHost) -> SparkPipelinePlan:
    """The plan for the driver host ``host``, from the model, the role's settings (with the
    spark_node settings the nodes were installed with) and the host read."""
    job = spark_pipeline_context(cluster, host, settings)
    state = str(setting(settings, "spark_pipeline_state"))
    timeout_s = int(setting(settings, "spark_pipeline_start_timeout_s"))
    spark_release = str(setting(settings, "spark_node_version"))
    # Checkpoints written before the job named its release were written by the installed one.
    written_by = read.checkpoint_release or (read.installed_release if read.checkpoints else "")
    stop_for_release = read.running and read.installed_release not in ("", spark_release)
    return SparkPipelinePlan(
        context=job,
        state=state,
        start=state == "started",
        set_service=stop_for_release or not (read.enabled_and_active if state == "started"
                                             else read.disabled_and_inactive),
        running=read.running and not stop_for_release,
        stale=read.stale,
        directories=_directories(job),
        unit_file=_unit_file(job),
        files=_files(job),
        secret_files=_client_files(job),
        shared_check=_shared_check(job, [str(node["host"]) for node in cluster["spark_workers"]]),
        start_timeout_s=float(timeout_s),
        start_retries=math.ceil(timeout_s / PROBE_DELAY_S),
        host_state=dict(read.paths),
        spark_release=spark_release,
        checkpoint_release=written_by,
        carry_over_problem=_carry_over_problem(host, job["data_dir"], written_by, spark_release),
        stop_for_release=stop_for_release,
    )


def _carry_over_problem(host: str, data_dir: str, written_by: str, release: str) -> str:
    """The refusal of a Spark release that cannot resume the pipeline's checkpoints. SP-12"""
    problem = checkpoint_carry_over_problem(written_by, release)
    if not problem:
        return ""
    return (f"{host}: spark_node_version is {release}, but {problem} ({cite('SP-12')}): its "
            f"checkpoints under {checkpoints_dir(data_dir)} would not carry over, and the "
            f"pipeline could land records twice. Nothing was changed. Fix: keep "
            f"spark_node_version: {written_by}; or, to start the pipeline afresh on {release}, "
            f"set spark_pipeline_state: stopped and run, move {data_dir} aside, then run with "
            "spark_pipeline_state: started (the new queries read the topic from its earliest "
            "offset).")
