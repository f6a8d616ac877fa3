"""Both engines carry out a role's plan the same way: for the same plan, Ansible's
``install_files`` (the role's task, run here on this machine) and the pyinfra deploy's
``install_planned`` write the same files, with the same bytes, owners, groups and modes.

The roles hand ``install_files`` the plan's items as they are (``<role>_plan.files``), and the
deploys hand ``install_planned`` the same items (``PlannedFile.as_task_item``); what each engine
still does on its own, reading a source and rendering a template, is what this compares.
"""

from __future__ import annotations

import getpass
import grp
import json
import os
import pwd
import stat
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from kafkaform import model, render
from kafkaform.contexts.kafka_broker import kafka_broker_context
from kafkaform.deploys import base
from kafkaform.plans.files import WritesFiles, with_secrets
from kafkaform.plans.files import template as role_template
from kafkaform.plans.kafka_broker import KafkaBrokerFiles, files_plan
from kafkaform.plans.monitoring import GROUP, MonitoringHost, MonitoringPlan, monitoring_plan
from kafkaform.plans.os_tuning import OsTuningHost, OsTuningPlan, os_tuning_plan
from kafkaform.plans.spark_node import SparkNodeHost, SparkNodePlan, spark_node_plan
from kafkaform.plans.spark_pipeline import (
    SparkPipelineHost,
    SparkPipelinePlan,
    spark_pipeline_plan,
    with_logins,
)
from kafkaform.plans.zookeeper import ZookeeperHost, ZookeeperPlan, zookeeper_plan
from tests.unit.test_kafka_context import cluster as kafka_cluster
from tests.unit.test_monitoring_context import platform
from tests.unit.test_spark import cluster as spark_cluster
from tests.unit.test_spark_node_plan import SETTINGS as SPARK_SETTINGS
from tests.unit.test_zookeeper_context import cluster

ROOT = Path(__file__).resolve().parents[2]
#: Stand-ins for the cluster's secrets: the plan names them, each engine fills them in.
SECRETS = {"kafka": "kafka-password", "quorum": "quorum-password", "keystore": "store-password",
           "authenticate": "spark-secret", "zookeeper": "zk-password", "jmx": "jmx-password"}

#: dest -> (bytes, owner, group, mode as an int)
Written = dict[str, tuple[bytes, str, str, int]]


def _run(playbook: Path) -> None:
    """ansible-playbook on this machine, with the repository's configuration."""
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"))
    ran = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i",
                          "localhost,", "-e", f"ansible_python_interpreter={sys.executable}",
                          str(playbook)], capture_output=True, text=True, cwd=ROOT, env=env,
                         check=False)
    assert ran.returncode == 0, ran.stdout + ran.stderr


def _ansible_writes(items: list[dict[str, Any]], variables: Mapping[str, Any],
                    tmp_path: Path) -> Written:
    """What the role's install_files task writes: run for real, then read back from disk."""
    playbook = tmp_path / "plan.yml"
    playbook.write_text(yaml.safe_dump([{
        "name": "Carry out a plan", "hosts": "localhost", "gather_facts": False,
        "connection": "local", "vars": {**variables, "planned_items": items},
        "tasks": [{"name": "Install the planned files",
                   "kafkaform.platform.install_files": {"files": "{{ planned_items }}"}}]}],
        sort_keys=False))  # as set_fact keeps the plan: in order
    _run(playbook)
    written: Written = {}
    for item in items:
        found = Path(item["dest"])
        info = found.stat()
        written[item["dest"]] = (found.read_bytes(), pwd.getpwuid(info.st_uid).pw_name,
                                 grp.getgrgid(info.st_gid).gr_name, stat.S_IMODE(info.st_mode))
    return written


def _relocated(items: list[dict[str, Any]], root: Path) -> list[dict[str, Any]]:
    """The items with every destination under ``root`` (the units' and the probe's too), their
    directories made, so that both engines can write them here."""
    moved = []
    for item in items:
        dest = root / item["dest"].lstrip("/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        moved.append({**item, "dest": str(dest)})
    return moved


def _pyinfra_writes(items: list[dict[str, Any]], variables: Mapping[str, Any],
                    monkeypatch: pytest.MonkeyPatch) -> Written:
    """What the deploy's install_planned would write: each file it hands ``files.put``."""
    written: Written = {}

    def put(content: bytes, dest: str, user: str, group: str, mode: str) -> base.Unchanged:
        written[dest] = (content, user, group, int(mode, 8))
        return base.Unchanged()

    monkeypatch.setattr(base, "_put", put)
    base.install_planned(items, variables)
    return written


def _own_account(role: str) -> dict[str, str]:
    """This machine's own user and group as the role's, so that both engines find them."""
    return {f"{role}_user": getpass.getuser(),
            f"{role}_group": grp.getgrgid(os.getgid()).gr_name}


Items = list[dict[str, Any]]


def _fill_secrets(items: Items) -> Items:
    return with_secrets(items, SECRETS)


def _assert_alike(plan: Any, variables: Mapping[str, Any], tmp_path: Path,
                  monkeypatch: pytest.MonkeyPatch,
                  fill: Callable[[Items], Items] = _fill_secrets) -> Written:
    """Both engines write every file of ``plan``, secrets filled in (by ``fill``, as the role's
    task and the deploy fill them), alike."""
    items = [f.as_task_item() for f in plan.files]
    items += fill([f.as_task_item() for f in plan.secret_files])
    items = _relocated(items, tmp_path / "host")
    by_pyinfra = _pyinfra_writes(items, variables, monkeypatch)
    by_ansible = _ansible_writes(items, variables, tmp_path)
    assert sorted(by_ansible) == sorted(by_pyinfra)
    assert len(by_ansible) == len(plan.files) + len(plan.secret_files)
    for dest, written in by_ansible.items():
        assert written == by_pyinfra[dest], dest
    return by_pyinfra


def _zookeeper() -> ZookeeperPlan:
    """A new member (every file, myid and the purge units included); the settings as the role
    hands them, templated (the version's default is a Jinja expression)."""
    return zookeeper_plan(cluster(), "kf-zk2",
                          {"zookeeper_version": "3.9.9", **_own_account("zookeeper")},
                          ZookeeperHost(architecture="amd64"))


def _spark_node() -> SparkNodePlan:
    """A master with the history server (three units, each rendered with its own daemon)."""
    settings = {**SPARK_SETTINGS, "spark_node_history_server_enabled": True,
                **_own_account("spark_node")}
    return spark_node_plan(spark_cluster(spark_node_history_server_enabled=True), "sm",
                           settings, SparkNodeHost(architecture="amd64", cores=4, memory_mb=8192))


#: A broker in ZooKeeper mode with JMX and the agent on: every file, its ZooKeeper login and its
#: JMX password (its user's alone) included.
KAFKA_SETTINGS = {"kafka_broker_jmx_enabled": True, "kafka_broker_jmx_password": "jmx-password"}


def _kafka_broker(**given: Any) -> tuple[dict[str, Any], KafkaBrokerFiles]:
    """The context and the files of k1, with KAFKA_SETTINGS and ``given`` over them."""
    kb = kafka_broker_context(kafka_cluster(), "k1",
                              {**KAFKA_SETTINGS, **_own_account("kafka_broker"), **given})
    return kb, files_plan(kb)


def _spark_pipeline() -> SparkPipelinePlan:
    """The driver host."""
    return spark_pipeline_plan(spark_cluster(), "sm", _own_account("spark_node"),
                               SparkPipelineHost())


def _monitoring() -> MonitoringPlan:
    """A broker that is also the monitoring host: every file the role writes."""
    cluster, groups = platform()
    return monitoring_plan(cluster, "k1", {}, {**groups, model.MONITORING: ["k1"]},
                           MonitoringHost())


def _os_tuning() -> OsTuningPlan:
    """The kernel settings (the host's overrides merged over the role's) and the service users'
    open-file limits."""
    settings = {"os_tuning_sysctl_overrides": {"vm.swappiness": 10, "net.core.somaxconn": 4096},
                "os_tuning_limits_users": ["kafka", "zookeeper", "spark"]}
    return os_tuning_plan("kf-kafka1", settings, OsTuningHost())


def test_every_template_is_planned_and_every_planned_template_exists() -> None:
    """The plans above, and Kafka 4's logging, name every file under roles/*/templates and only
    those; each template sits in the directory of the files it writes, and one written to a
    single file is named after it (``etc/kafka/server.properties.j2``)."""
    plans: list[WritesFiles] = [_zookeeper(), _spark_node(), _kafka_broker()[1],
                                _kafka_broker(kafka_broker_version="4.1.2")[1],
                                _spark_pipeline(), _monitoring(), _os_tuning()]
    dests: dict[str, set[str]] = defaultdict(set)
    for planned in (f for plan in plans for f in [*plan.files, *plan.secret_files]):
        if planned.template is not None:
            dests[planned.template].add(planned.dest)
    templates = {role_template(role, name): name for role, name in render.all_templates()}
    unplanned = sorted(path for path in templates if path not in dests)
    missing = sorted(path for path in dests if path not in templates)
    assert (unplanned, missing) == ([], []), "a template no plan writes, or a plan's missing one"
    for path, written in dests.items():
        name = templates[path]
        assert all(d.startswith(f"/{Path(name).parent}/") for d in written), (name, written)
        assert len(written) > 1 or written == {f"/{name.removesuffix('.j2')}"}, (name, written)


def test_zookeeper_plan_is_written_alike_by_both_engines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """:func:`_zookeeper`'s files."""
    plan = _zookeeper()
    written = _assert_alike(plan, {"zookeeper": plan.context, "zookeeper_secrets": SECRETS},
                            tmp_path, monkeypatch)
    # The secret reached its file.
    password = str(tmp_path / "host" / plan.context["tls"]["password_file"].lstrip("/"))
    assert written[password][0] == b"store-password\n"


def test_spark_node_plan_is_written_alike_by_both_engines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """:func:`_spark_node`'s files."""
    plan = _spark_node()
    written = _assert_alike(plan, {"spark_node": plan.context, "spark_node_secrets": SECRETS},
                            tmp_path, monkeypatch)
    units = [content for dest, (content, *_rest) in written.items() if dest.endswith(".service")]
    assert len(units) == 2 and units[0] != units[1]


def test_kafka_broker_files_are_written_alike_by_both_engines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """:func:`_kafka_broker`'s files."""
    kb, plan = _kafka_broker()
    written = _assert_alike(plan, {"kafka_broker": kb, "kafka_broker_secrets": SECRETS},
                            tmp_path, monkeypatch)
    password = str(tmp_path / "host" / kb["jmx"]["password_file"].lstrip("/"))
    assert written[password][0].endswith(b" jmx-password\n") and written[password][3] == 0o600


def test_the_role_and_the_deploy_fill_in_a_plans_secrets_alike(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The role's lookup given the plan and the deploy's install_secret_files: the cluster's
    secrets by the names the templates read, and JMX's password from its role input, named by
    the plan (neither engine knows it otherwise)."""
    given = {"keystore": "store-password-0001", "zookeeper-kafka": "zk-password-000001"}
    kb, plan = _kafka_broker()
    expected = {"keystore": "store-password-0001", "zookeeper": "zk-password-000001",
                "jmx": "jmx-password"}
    answer = tmp_path / "secrets.json"
    playbook = tmp_path / "lookup.yml"
    playbook.write_text(yaml.safe_dump([{
        "name": "Fill in a plan's secrets", "hosts": "localhost", "gather_facts": False,
        "connection": "local",
        "vars": {"plan": plan.as_vars(), "kafkaform_secrets": given,
                 "kafka_broker_jmx_password": "{{ 'jmx-' ~ 'password' }}"},
        "tasks": [{"name": "Write what the lookup answers",
                   "ansible.builtin.copy": {
                       "content": "{{ lookup('kafkaform.platform.secret', plan) | to_json }}",
                       "dest": str(answer), "mode": "0600"}}]}]))
    _run(playbook)
    assert json.loads(answer.read_text()) == expected
    handed: dict[str, Any] = {}
    monkeypatch.setattr(base, "secret", given.__getitem__)
    monkeypatch.setattr(base, "install_planned",
                        lambda items, variables: handed.update(variables) or {})
    base.install_secret_files(plan, "kafka_broker", {"kafka_broker": kb}, KAFKA_SETTINGS)
    assert handed["kafka_broker_secrets"] == expected


def test_spark_pipeline_plan_is_written_alike_by_both_engines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """:func:`_spark_pipeline`'s files: the job's modules (files of this package), __init__.py
    (empty content), pipeline.properties, the unit and the tools (templates), and each identity's
    Kafka client file with its login from kafka_users (its template's own variables)."""
    plan = _spark_pipeline()
    job = plan.context
    users = [{"name": client["user"], "password": f"{identity}-password"}
             for identity, client in job["clients"].items()]
    written = _assert_alike(plan, {"spark_pipeline": job}, tmp_path, monkeypatch,
                            fill=lambda items: with_logins(items, job, users))
    for identity, client in job["clients"].items():
        content, _owner, group, mode = written[str(tmp_path / "host" / client["config"][1:])]
        assert f'username="{client["user"]}" password="{identity}-password";'.encode() in content
        assert (group, mode) == (job["group"], 0o640)
    assert written[str(tmp_path / "host" / job["code_dir"][1:] / "kafkaform/__init__.py")][0] \
        == b""


def test_monitoring_plan_is_written_alike_by_both_engines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """:func:`_monitoring`'s files: node exporter's settings, the job's script, unit and timer,
    Prometheus's and Alertmanager's files, the web configuration and three drop-ins, each
    rendered with its own unit. Debian's prometheus group, which this machine
    lacks, becomes this machine's own group; promtool and amtool, which it lacks too, a check
    that the file is not empty, so the role's check still runs before each of those files."""
    plan = _monitoring()
    checks = {f.validate.split()[0] for f in plan.files if f.validate}
    assert checks == {"promtool", "amtool"}
    own = grp.getgrgid(os.getgid()).gr_name
    here = replace(plan, files=[
        replace(f, group=own if f.group == GROUP else f.group,
                validate="test -s %s" if f.validate else None) for f in plan.files])
    written = _assert_alike(here, {"monitoring": plan.context}, tmp_path, monkeypatch)
    dropins = [content for dest, (content, *_rest) in written.items()
               if dest.endswith(".service.d/kafkaform.conf")]
    assert len(dropins) == 3 and len(set(dropins)) == 3
    modes = {dest.rsplit("/", 1)[-1]: mode for dest, (*_rest, mode) in written.items()}
    assert (modes["kafkaform-process-metrics"], modes["web.yml"]) == (0o755, 0o640)


def test_os_tuning_files_are_written_alike_by_both_engines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """:func:`_os_tuning`'s files, root's and readable by all, as the role's sysctl.yml and
    limits.yml write them."""
    plan = _os_tuning()
    written = _assert_alike(plan, {"os_tuning": plan.context}, tmp_path, monkeypatch)
    sysctl = written[str(tmp_path / "host" / plan.context["sysctl_file"].lstrip("/"))]
    limits = written[str(tmp_path / "host" / plan.context["limits"]["file"].lstrip("/"))]
    assert b"\nvm.swappiness=10\n" in sysctl[0] and b"\nnet.core.somaxconn=4096\n" in sysctl[0]
    assert b"\nspark hard nofile 100000\n" in limits[0]
    assert {found[1:] for found in written.values()} == {("root", "root", 0o644)}
