"""The input of the pipeline templates: the streaming job's settings, unit and tool wrapper.

The spark_pipeline role (through ``plugins/filter/spark_pipeline.py``), pyinfra and the unit tests
hand :func:`spark_pipeline_context` the cluster model, the driver host and the role's variables
(``spark_pipeline_*``, plus the ``spark_node_*`` paths the nodes were installed with) and give the
result to every template of ``roles/spark_pipeline/templates/`` under the name ``spark_pipeline``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .. import jvm
from ..contexts import SYSTEMD_UNIT_DIR
from ..contexts.sandbox import sandbox
from ..defaults import setting
from ..pipeline.config import IDENTITIES
from ..rules import cite
from .spark_node import TLS_UI_PORT_OFFSET, read_at_start

#: The pipeline's systemd unit.
UNIT = "kafkaform-pipeline"
#: Where the job writes its queries' progress (kafkaform.pipeline.progress): in the unit's runtime
#: directory, which systemd creates for the job's user and removes when the job stops. MO-09
PROGRESS_FILE = f"/run/{UNIT}/progress.json"

STATES = ("started", "stopped")
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
_TOPIC = re.compile(r"^[A-Za-z0-9._-]{1,249}$")
_INTERVAL = re.compile(r"^\d+ (milliseconds?|seconds?|minutes?)$")

#: The JVM options of the pipeline's tools (generate, audit, latency): short local Spark sessions
#: (kafkaform.jvm). The streaming job keeps the defaults.
TOOL_JAVA_OPTIONS = " ".join(jvm.SHORT_LIVED)
#: Where the role installs the job's modules: ``<code_dir>/kafkaform/pipeline/*.py`` (and
#: ``<code_dir>/kafkaform/template_filters.py``, the one module of kafkaform they import).
MODULE_DIR = "kafkaform/pipeline"


def _path(settings: Mapping[str, Any], name: str) -> str:
    return str(setting(settings, name)).rstrip("/")


def _conf_files(conf_dir: str) -> tuple[str, str, dict[str, str]]:
    """The job's settings, the cluster CA, and each identity's Kafka client file by identity."""
    return (f"{conf_dir}/pipeline.properties", f"{conf_dir}/trust.pem",
            {identity: f"{conf_dir}/kafka-{identity}.properties" for identity in IDENTITIES})


def restart_files(settings: Mapping[str, Any]) -> list[str]:
    """OP-03: what the job reads at submit, its own files and the Spark node's (spark-submit
    reads the node's settings, keystore and connectors); it restarts when one changed after it
    started. From the settings alone, so the host read can ask about them before the plan."""
    config_file, trust, clients = _conf_files(_path(settings, "spark_pipeline_conf_dir"))
    return [_path(settings, "spark_pipeline_code_dir"), config_file, trust, *clients.values(),
            *read_at_start(_path(settings, "spark_node_install_dir"),
                           _path(settings, "spark_node_conf_dir")),
            f"{SYSTEMD_UNIT_DIR}/{UNIT}.service"]


def job_modules(code_dir: str) -> list[dict[str, str]]:
    """The job's modules as they are in this package, each with its path on the driver host:
    the package kafkaform.pipeline and the one module of kafkaform it imports (standard library
    only), under ``code_dir`` as they are under the package's parent."""
    package = Path(__file__).resolve().parents[1]
    found = sorted([*(package / "pipeline").glob("*.py"), package / "template_filters.py"])
    return [{"src": str(path), "dest": f"{code_dir}/{path.relative_to(package.parent)}"}
            for path in found]


def settings_problems(settings: Mapping[str, Any]) -> list[str]:
    """Every problem of the pipeline's settings, as sentences (empty when they are valid)."""
    problems = []
    name = str(setting(settings, "spark_pipeline_name"))
    if not _NAME.match(name):
        problems.append(f"spark_pipeline_name {name!r}: use lower-case letters, digits and "
                        "dashes (it names the application and its directory)")
    topic = str(setting(settings, "spark_pipeline_topic"))
    if not _TOPIC.match(topic) or topic.startswith("__"):
        problems.append(f"spark_pipeline_topic {topic!r} is not a valid user topic name "
                        f"({cite('TR-06')})")
    interval = str(setting(settings, "spark_pipeline_trigger_interval"))
    if not _INTERVAL.match(interval):
        problems.append(f"spark_pipeline_trigger_interval {interval!r}: write it like "
                        "'2 seconds' or '500 milliseconds'")
    state = str(setting(settings, "spark_pipeline_state"))
    if state not in STATES:
        problems.append(f"spark_pipeline_state is {state!r}; choose {' or '.join(STATES)}")
    users = setting(settings, "spark_pipeline_kafka_users")
    if not isinstance(users, Mapping) or sorted(users) != sorted(IDENTITIES):
        problems.append("spark_pipeline_kafka_users must map each of "
                        f"{', '.join(IDENTITIES)} to a user declared in kafka_users")
    for key, low in (("max_offsets_per_trigger", 1), ("driver_memory_mb", 256),
                     ("executor_memory_mb", 512), ("executor_cores", 1), ("cores_max", 0)):
        value = int(setting(settings, f"spark_pipeline_{key}"))
        if value < low:
            problems.append(f"spark_pipeline_{key} is {value}; it must be at least {low}")
    return problems


def pipeline_problems(cluster: Mapping[str, Any], host: str,
                      settings: Mapping[str, Any]) -> list[str]:
    """Every reason :func:`spark_pipeline_context` would refuse: bad settings, a driver host
    outside the spark_master group, fewer than two brokers (CL-08). The preflight reports them."""
    problems = settings_problems(settings)
    masters = [n["host"] for n in cluster["spark_masters"]]
    if host not in masters:
        problems.append(f"{host} is not in the spark_master group: the driver runs on the master")
    if len(cluster["brokers"]) < 2:
        problems.append("the pipeline reads from at least two bootstrap brokers "
                        f"({cite('CL-08')}); the kafka_broker group has "
                        f"{len(cluster['brokers'])}")
    return problems


def _submit(settings: Mapping[str, Any], name: str, config_file: str) -> list[str]:
    """The spark-submit command line of the streaming job: its resources, its code, its
    settings."""

    def number(key: str) -> int:
        return int(setting(settings, f"spark_pipeline_{key}"))

    cores_max = number("cores_max")
    return [
        f"{_path(settings, 'spark_node_install_dir')}/bin/spark-submit",
        "--name", f"kafkaform-pipeline-{name}",
        "--deploy-mode", "client",  # standalone runs Python drivers in client mode only
        "--driver-memory", f"{number('driver_memory_mb')}m",
        "--executor-memory", f"{number('executor_memory_mb')}m",
        "--conf", f"spark.executor.cores={number('executor_cores')}",
        *(["--conf", f"spark.cores.max={cores_max}"] if cores_max else []),
        f"{_path(settings, 'spark_pipeline_code_dir')}/{MODULE_DIR}/job.py",
        "--config", config_file,
    ]


def _clients(settings: Mapping[str, Any],
             client_configs: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """Each identity's Kafka user and the client file it logs in with."""
    users = dict(setting(settings, "spark_pipeline_kafka_users"))
    return {identity: {"user": str(users[identity]), "config": client_configs[identity]}
            for identity in IDENTITIES}


def _job_config(cluster: Mapping[str, Any], settings: Mapping[str, Any], name: str,
                data_dir: str, clients: Mapping[str, Mapping[str, str]]) -> dict[str, Any]:
    """pipeline.properties: what the job reads, where it writes, how it reports progress."""
    return {
        "name": name,
        "topic": str(setting(settings, "spark_pipeline_topic")),
        "bootstrap_servers": str(cluster["bootstrap_servers"]),
        "data_dir": data_dir,
        "trigger_interval": str(setting(settings, "spark_pipeline_trigger_interval")),
        "max_offsets_per_trigger": int(setting(settings,
                                               "spark_pipeline_max_offsets_per_trigger")),
        "progress_file": PROGRESS_FILE,
        **{f"client.{i}.config": c["config"] for i, c in clients.items()},
    }


def spark_pipeline_context(cluster: Mapping[str, Any], host: str,
                           settings: Mapping[str, Any]) -> dict[str, Any]:
    """The ``spark_pipeline`` dict of ``roles/spark_pipeline/templates/``, for the driver host.

    Raises ``ValueError`` with :func:`pipeline_problems`, the preflight reports before
    any host is touched.
    """
    problems = pipeline_problems(cluster, host, settings)
    if problems:
        raise ValueError("; ".join(problems))
    name = str(setting(settings, "spark_pipeline_name"))
    code_dir = _path(settings, "spark_pipeline_code_dir")
    conf_dir = _path(settings, "spark_pipeline_conf_dir")
    home_dir = _path(settings, "spark_node_home_dir")
    data_dir = f"{str(cluster['spark_shared_dir']).rstrip('/')}/{name}"
    config_file, trust, client_configs = _conf_files(conf_dir)
    submit = _submit(settings, name, config_file)
    master = next(n for n in cluster["spark_masters"] if n["host"] == host)
    clients = _clients(settings, client_configs)
    return {
        "name": name,
        "application": f"kafkaform-pipeline-{name}",
        # The master's state as JSON (workers, applications), on its web UI's TLS port.
        "master_state_url": (f"https://{master['address']}:"
                             f"{int(master['webui_port']) + TLS_UI_PORT_OFFSET}/json/"),
        "unit": UNIT,
        "runtime_dir": PROGRESS_FILE.rsplit("/", 1)[0].removeprefix("/run/"),
        "restart_files": restart_files(settings),
        "user": str(setting(settings, "spark_node_user")),
        "group": str(setting(settings, "spark_node_group")),
        "spark_home": _path(settings, "spark_node_install_dir"),
        "spark_conf_dir": _path(settings, "spark_node_conf_dir"),
        "home_dir": home_dir,
        "code_dir": code_dir,
        "module_dir": f"{code_dir}/{MODULE_DIR}",
        "modules": job_modules(code_dir),
        "conf_dir": conf_dir,
        "config_file": config_file,
        "data_dir": data_dir,
        "config": _job_config(cluster, settings, name, data_dir, clients),
        # Each identity's Kafka client file; its password is added by the role, never here.
        "clients": clients,
        "trust": trust,
        "tls_names": [host, str(master["address"])],
        "submit": submit,
        "tool_memory_mb": int(setting(settings, "spark_pipeline_driver_memory_mb")),
        "tool_java_options": TOOL_JAVA_OPTIONS,
        "read_write_paths": [home_dir, _path(settings, "spark_node_log_dir"), data_dir],
        "sandbox": sandbox(),
    }


def client_logins(context: Mapping[str, Any], kafka_users: Any) -> dict[str, dict[str, str]]:
    """Each identity's login for its Kafka client file (kafka-client.properties.j2's
    ``spark_pipeline_client``): its identity and the password kafka_users declares for its user.

    Raises ValueError naming the identity when kafka_users does not declare its user.
    """
    passwords = {str(u.get("name")): str(u.get("password"))
                 for u in kafka_users or [] if isinstance(u, Mapping) and "password" in u}
    logins = {}
    for identity, client in context["clients"].items():
        if client["user"] not in passwords:
            raise ValueError(
                f"spark_pipeline_kafka_users gives the pipeline's {identity} the Kafka user "
                f"{client['user']}, which kafka_users does not declare with a password. Fix: "
                "declare it in kafka_users, or map the identity to a declared user")
        logins[identity] = {"identity": identity, "password": passwords[client["user"]]}
    return logins


def client_files(context: Mapping[str, Any], kafka_users: Any,
                 template: str) -> list[dict[str, Any]]:
    """The install_files entries of every identity's Kafka client file, rendered from
    ``template`` with its login (secret: the task that writes them is no_log)."""
    return [{"template": template, "dest": client["config"], "owner": "root",
             "group": context["group"], "mode": "0640",
             "vars": {"spark_pipeline_client": login}}
            for client, login in zip(context["clients"].values(),
                                     client_logins(context, kafka_users).values(), strict=True)]
