"""The spark_pipeline role's plan: the host read's command and parser, and each decision the role
and the pyinfra deploy take from it (kafkaform.plans.spark_pipeline)."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from kafkaform import catalog
from kafkaform.contexts.spark_pipeline import job_modules
from kafkaform.plans import hostread
from kafkaform.plans.spark_pipeline import (
    CLIENT,
    TOOL,
    SparkPipelineHost,
    host_read,
    parse_host,
    spark_pipeline_plan,
    with_logins,
)
from tests.unit.test_hostread_units import UNIT_STATES
from tests.unit.test_spark import cluster

RUNNING = SparkPipelineHost(running=True, stale=False)


def plan(read: SparkPipelineHost = RUNNING, **settings: Any) -> Any:
    return spark_pipeline_plan(cluster(), "sm", settings, read)


def _answer(stale: bool) -> str:
    return json.dumps({"newer": [], "running": True, "stale": stale}, sort_keys=True)


@pytest.mark.parametrize(("stdout", "running", "stale"), [
    (f"state running\nstale {_answer(False)}", True, False),
    (f"stale {_answer(True)}\nstate running", True, True),  # by label, not by position
    (f"state exited\nstale {_answer(False)}", True, False),  # as pyinfra's SystemdStatus counts
    (f"state dead\nstale {_answer(False)}", False, False),
    (f"state auto-restart\nstale {_answer(False)}", False, False),
    ("state running\nstale ", True, True),  # service_stale said nothing: cannot tell
    ("state running\nstale []", True, True),
    ("", False, True),
])
def test_the_parser_reads_the_units_state_and_staleness(stdout: str, running: bool,
                                                       stale: bool) -> None:
    read = parse_host(stdout)
    assert (read.running, read.stale) == (running, stale)


@pytest.mark.parametrize(("state", "start"), [("started", True), ("stopped", False)])
def test_the_job_runs_as_spark_pipeline_state_says(state: str, start: bool) -> None:
    p = plan(spark_pipeline_state=state)
    assert (p.state, p.start) == (state, start)


def test_a_bad_state_is_refused_with_the_others() -> None:
    with pytest.raises(ValueError, match="spark_pipeline_state is 'paused'"):
        plan(spark_pipeline_state="paused")


@pytest.mark.parametrize("read", [SparkPipelineHost(), RUNNING,
                                  SparkPipelineHost(running=True, stale=True)])
def test_the_host_read_is_handed_on_to_the_deploy(read: SparkPipelineHost) -> None:
    p = plan(read)
    assert (p.running, p.stale) == (read.running, read.stale)


@pytest.mark.parametrize(("timeout_s", "retries"), [(120, 40), (10, 4), (3, 1), (1, 1)])
def test_the_start_wait_asks_every_three_seconds_until_the_timeout(timeout_s: int,
                                                                   retries: int) -> None:
    p = plan(spark_pipeline_start_timeout_s=timeout_s)
    assert (p.start_timeout_s, p.start_retries) == (float(timeout_s), retries)


def test_the_directories_are_roots_but_the_jobs_own_on_the_shared_filesystem() -> None:
    p = plan()
    job = p.context
    assert [(d["path"], d["owner"], d["group"], d["mode"]) for d in p.directories] == [
        ("/opt/kafkaform/pipeline/kafkaform", "root", "spark", "0755"),
        ("/opt/kafkaform/pipeline/kafkaform/pipeline", "root", "spark", "0755"),
        ("/etc/kafkaform-pipeline", "root", "spark", "0750"),
        (job["data_dir"], "spark", "spark", "0750"),
    ]


@pytest.mark.parametrize(("dest", "source", "owner_group_mode", "restarts"), [
    ("/opt/kafkaform/pipeline/kafkaform/__init__.py", "content", ("root", "root", "0644"), True),
    ("/etc/kafkaform-pipeline/pipeline.properties", "template", ("root", "spark", "0640"), True),
    ("/etc/systemd/system/kafkaform-pipeline.service", "template", ("root", "root", "0644"),
     True),
    (TOOL, "template", ("root", "root", "0755"), False),
    ("/etc/kafkaform-pipeline/kafka-job.properties", "template", ("root", "spark", "0640"), True),
])
def test_each_file_has_its_source_owner_mode_and_restart(
        dest: str, source: str, owner_group_mode: tuple[str, str, str], restarts: bool) -> None:
    p = plan()
    [planned] = [f for f in (*p.files, *p.secret_files) if f.dest == dest]
    assert getattr(planned, source) is not None
    assert (planned.owner, planned.group, planned.mode) == owner_group_mode
    assert planned.restarts is restarts


def test_the_modules_are_the_packages_own_and_restart_the_job() -> None:
    p = plan()
    modules = [f for f in p.files if f.src is not None]
    assert [(f.src, f.dest) for f in modules] == [
        (m["src"], m["dest"]) for m in job_modules("/opt/kafkaform/pipeline")]
    assert {(f.owner, f.group, f.mode, f.restarts) for f in modules} == {
        ("root", "root", "0644", True)}


def test_every_file_that_restarts_the_job_is_one_it_reads_at_submit() -> None:
    """OP-03: the plan's restarts and the context's restart_files (which the role's service_stale
    and the host read ask about) name the same files."""
    p = plan()
    reads = p.context["restart_files"]
    code_dir = reads[0]
    restarting = {f.dest for f in (*p.files, *p.secret_files) if f.restarts}
    assert all(dest in reads or dest.startswith(f"{code_dir}/") for dest in restarting)
    own = {path for path in reads if path.startswith(("/etc/kafkaform-pipeline/",
                                                      "/etc/systemd/system/"))}
    assert own - restarting == {p.context["trust"]}  # the certificate step's
    assert p.unit_file in restarting


def test_the_client_files_get_their_logins_only_from_with_logins() -> None:
    p = plan()
    job = p.context
    items = [f.as_task_item() for f in p.secret_files]
    assert [item["vars"][CLIENT] for item in items] == [{"identity": i} for i in job["clients"]]
    assert "password" not in yaml.safe_dump(p.as_vars())
    users = [{"name": c["user"], "password": f"secret-{i}"} for i, c in job["clients"].items()]
    trust = {"src": "/tmp/ca.pem", "dest": job["trust"]}
    filled = with_logins([trust, *items], job, users)
    assert filled[0] == trust
    assert [item["vars"][CLIENT] for item in filled[1:]] == [
        {"identity": i, "password": f"secret-{i}"} for i in job["clients"]]
    assert [item["vars"][CLIENT] for item in items] == [{"identity": i} for i in job["clients"]]
    with pytest.raises(ValueError, match="pipeline's job the Kafka user pipeline"):
        with_logins(items, job, users[1:])


def test_the_shared_check_asks_every_worker_as_the_spark_user() -> None:
    check = plan().shared_check
    assert check.workers == ["sw1", "sw2"]
    assert check.marker_dir == "/srv/kafkaform/shared/events/.shared-check"
    as_spark = ["runuser", "-u", "spark", "--", "sh", "-c"]
    assert check.write_argv[:6] == as_spark and check.write_argv[-1] == check.marker_dir
    assert {w: argv[:6] for w, argv in check.read_argv.items()} == {"sw1": as_spark,
                                                                    "sw2": as_spark}
    assert check.answers == {w: f"{check.marker_dir}/from-{w}" for w in check.workers}


def test_the_shared_check_probes_leave_and_answer_a_marker(tmp_path: Path) -> None:
    """The probes' shell parts as both engines run them (without runuser), on this machine."""
    p = spark_pipeline_plan(cluster(spark_node_shared_dir=str(tmp_path)), "sm", {}, RUNNING)
    check = p.shared_check
    text = "sm 2026-01-01T00:00:00+00:00"
    subprocess.run([*check.write_argv[4:], text], check=True)
    for worker in check.workers:
        ran = subprocess.run(check.read_argv[worker][4:], capture_output=True, text=True,
                             check=True)
        assert ran.stdout.strip() == text
        assert Path(check.answers[worker]).is_file()


def _systemctl(bin_dir: Path, started: str) -> None:
    """A systemctl that shows the unit running since ``started``, enabled and active, as
    systemd words it."""
    bin_dir.mkdir()
    stub = bin_dir / "systemctl"
    stub.write_text("#!/bin/sh\ncase \"$*\" in\n"
                    "  *SubState*) echo running ;;\n"
                    f"  *MainPID*) printf 'MainPID=42\\nExecMainStartTimestamp={started}\\n' ;;\n"
                    "  *is-enabled*) echo enabled ;;\n"
                    "  *is-active*) echo active ;;\n"
                    "esac\n")
    stub.chmod(0o755)


@pytest.mark.parametrize(("started", "stale"), [("Wed 2020-01-01 00:00:00.000000 UTC", True),
                                                 ("Thu 2099-01-01 00:00:00.000000 UTC", False)])
def test_the_host_read_runs_and_parses_on_a_real_host(tmp_path: Path, started: str,
                                                      stale: bool) -> None:
    """The read under this machine's /bin/sh and python3, systemctl answering as systemd does:
    stale when a file the job reads changed after its start."""
    _systemctl(tmp_path / "bin", started)
    code_dir = tmp_path / "code"
    code_dir.mkdir()
    (code_dir / "job.py").write_text("")
    env = dict(os.environ, PATH=f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    settings = {"spark_pipeline_code_dir": str(code_dir)}
    ran = subprocess.run(host_read(cluster(), "sm", settings), capture_output=True, text=True,
                         check=True, env=env)
    read = parse_host(ran.stdout)
    # The state of each planned path that exists: here the job's package directory alone.
    (code_dir / "kafkaform").mkdir(exist_ok=True)
    with_package = parse_host(subprocess.run(host_read(cluster(), "sm", settings),
                                             capture_output=True, text=True, check=True,
                                             env=env).stdout)
    assert list(with_package.paths) == [str(code_dir / "kafkaform")]
    assert with_package.paths[str(code_dir / "kafkaform")].endswith(" directory")
    assert replace(read, paths={}) == SparkPipelineHost(running=True, stale=stale,
                                                        enabled_and_active=True)
    answer = json.loads(hostread.answers(ran.stdout)["stale"])  # service_stale's own, not a guess
    assert answer["stale"] is stale and answer["newer"] == ([str(code_dir)] if stale else [])


@pytest.mark.parametrize(("enabled", "active", "as_started", "as_stopped"), UNIT_STATES)
def test_the_unit_is_set_unless_it_is_as_spark_pipeline_state_says(
        enabled: str, active: str, as_started: bool, as_stopped: bool) -> None:
    read = parse_host(f"enabled:kafkaform-pipeline.service {enabled}\nstate running\n"
                      f"active:kafkaform-pipeline.service {active}\nstale {_answer(False)}")
    assert (read.enabled_and_active, read.disabled_and_inactive) == (as_started, as_stopped)
    assert plan(read).set_service is not as_started
    assert plan(read, spark_pipeline_state="stopped").set_service is not as_stopped


@pytest.mark.parametrize(("written_by", "release", "refused"), [
    ("", "4.2.0", ""),  # no checkpoint yet
    ("4.2.0", "4.2.0", ""),  # the same release
    ("4.0.0", "4.2.0", ""),  # the catalog's upgrade path
    ("4.0.0", "4.0.0", ""),
    ("4.2.0", "4.0.0", "goes forward only, never back to an older release"),
    ("3.5.1", "4.2.0", "known to resume the checkpoints of 4.0.0"),
    ("4.1.1", "4.2.0", "known to resume the checkpoints of 4.0.0"),
    ("4.0.0", "4.3.0", "known to resume the checkpoints of no other release"),
])
def test_a_spark_release_resumes_only_the_checkpoints_the_catalog_says(
        written_by: str, release: str, refused: str) -> None:
    problem = catalog.checkpoint_carry_over_problem(written_by, release)
    assert (refused in problem) if refused else problem == ""
    if refused:
        assert problem.startswith(f"Spark {release} cannot resume a checkpoint Spark "
                                  f"{written_by} wrote (")


def _read(running: bool = True, checkpoints: bool = True, checkpoint_release: str = "",
          installed_release: str = "4.2.0") -> SparkPipelineHost:
    return SparkPipelineHost(running=running, enabled_and_active=running,
                             checkpoints=checkpoints, checkpoint_release=checkpoint_release,
                             installed_release=installed_release)


@pytest.mark.parametrize(("read", "release", "written_by", "stops", "refused"), [
    # Nothing changes: no stop, no refusal.
    (_read(), "4.2.0", "4.2.0", False, False),
    # The upgrade: checkpoints from before the job named its release count as the installed one's.
    (_read(installed_release="4.0.0"), "4.2.0", "4.0.0", True, False),
    (_read(checkpoint_release="4.0.0", installed_release="4.0.0"), "4.2.0", "4.0.0", True, False),
    # The nodes already run the new release (the play before stopped the job): start it there.
    (_read(running=False, checkpoint_release="4.0.0"), "4.2.0", "4.0.0", False, False),
    # Back to the old release after the new one wrote the checkpoints: refused.
    (_read(checkpoint_release="4.2.0"), "4.0.0", "4.2.0", True, True),
    (_read(running=False, checkpoint_release="4.2.0"), "4.0.0", "4.2.0", False, True),
    # A new cluster: no checkpoints, no release installed yet.
    (_read(running=False, checkpoints=False, installed_release=""), "4.0.0", "", False, False),
])
def test_the_plan_stops_the_job_for_a_new_release_and_refuses_what_cannot_carry_over(
        read: SparkPipelineHost, release: str, written_by: str, stops: bool,
        refused: bool) -> None:
    p = plan(read, spark_node_version=release)
    assert (p.spark_release, p.checkpoint_release) == (release, written_by)
    assert p.stop_for_release is stops
    assert bool(p.carry_over_problem) is refused
    if stops:
        # Stopped by the play before the nodes: this plan starts it on the new release.
        assert p.set_service and not p.running
    if refused:
        assert p.carry_over_problem.startswith(f"sm: spark_node_version is {release}, but ")
        assert f"keep spark_node_version: {written_by}" in p.carry_over_problem
        assert "(SP-12)" in p.carry_over_problem and "Nothing was changed" in p.carry_over_problem


def test_the_host_read_finds_the_checkpoints_and_the_releases_on_a_real_host(
        tmp_path: Path) -> None:
    """The read under this machine's /bin/sh: the checkpoints, the release their file names,
    the release marker behind spark_node_install_dir."""
    shared, install = tmp_path / "shared", tmp_path / "spark"
    settings = {"spark_node_install_dir": str(install)}
    cluster_ = cluster(spark_node_shared_dir=str(shared))

    def read() -> SparkPipelineHost:
        argv = host_read(cluster_, "sm", settings)
        return parse_host(subprocess.run(argv, capture_output=True, text=True).stdout)

    assert (read().checkpoints, read().checkpoint_release, read().installed_release) == (
        False, "", "")
    data_dir = spark_pipeline_plan(cluster_, "sm", settings, SparkPipelineHost()).context[
        "data_dir"]
    checkpoints = Path(data_dir) / "checkpoints"
    (checkpoints / "events").mkdir(parents=True)
    install.mkdir()
    (install / ".kafkaform-artifact").write_text(
        "name=spark\nversion=4.0.0\narchive=spark-4.0.0-bin-hadoop3.tgz\nsha512=ab\n")
    assert (read().checkpoints, read().checkpoint_release, read().installed_release) == (
        True, "", "4.0.0")
    (checkpoints / "spark-release").write_text("4.2.0\n")
    assert read().checkpoint_release == "4.2.0"
