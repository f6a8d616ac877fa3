"""The per-host input of the Spark node templates, computed from the model and the role's settings.

The Ansible role (through ``plugins/filter/spark_node.py``), pyinfra and the unit tests hand
:func:`spark_node_context` the cluster model (``Cluster.to_dict()``), a host, the role's variables
(``spark_node_*`` names, role defaults filling the gaps) and what the host offers (cores, memory),
and give the result to every template of ``roles/spark_node/templates/`` under the name
``spark_node``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .. import tls_policy
from ..catalog import SCALA_BINARY_VERSION
from ..contexts import SYSTEMD_UNIT_DIR
from ..contexts.extras import one_line_settings
from ..contexts.sandbox import sandbox
from ..defaults import setting
from ..java import UNREAD_HOME
from ..rules import cite
from ..template_filters import java_properties

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
HISTORY_CLASS = "org.apache.spark.deploy.history.HistoryServer"

RECOVERY_MODES = ("FILESYSTEM", "NONE")

#: The Java home of a context built without reading the host (kafkaform.java).
DEFAULT_JAVA_HOME = UNREAD_HOME

#: Seconds between two checks that every worker is registered while a restarted one comes back
#: (a worker's registration takes a few seconds).
HEALTH_POLL_S = 3

#: A worker never offers less than this to executors, whatever the host has.
MIN_WORKER_MEMORY_MB = 1024

#: MO-09: the master and each worker serve their metrics in Prometheus's text format on their web
#: UI (so over its TLS port), at METRICS_PATHS of their group; Prometheus scrapes them.
METRICS_PATHS = {"spark_master": "/metrics/master/prometheus",
                 "spark_worker": "/metrics/prometheus"}
METRICS_SINKS = {
    **{f"spark.metrics.conf.{instance}.sink.prometheusServlet.class":
       "org.apache.spark.metrics.sink.PrometheusServlet" for instance in ("master", "worker")},
    "spark.metrics.conf.master.sink.prometheusServlet.path": METRICS_PATHS["spark_master"],
    "spark.metrics.conf.worker.sink.prometheusServlet.path": METRICS_PATHS["spark_worker"],
}

#: spark-defaults.conf keys the role writes from its own variables: the extra settings may not
#: set them, so one setting has one place.
MANAGED_DEFAULTS = frozenset({
    "spark.master", "spark.driver.extraClassPath", "spark.executor.extraClassPath",
    "spark.pyspark.python", "spark.pyspark.driver.python", "spark.sql.session.timeZone",
    "spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions",
    "spark.eventLog.enabled", "spark.eventLog.dir", "spark.history.fs.logDirectory",
    "spark.history.ui.port", "spark.deploy.recoveryMode", "spark.deploy.recoveryDirectory",
    "spark.master.rest.enabled", "spark.worker.cleanup.enabled",
    "spark.worker.cleanup.appDataTtl", "spark.local.dir", *{
        f"spark.ssl.{key}" for key in ("enabled", "keyStore", "keyStoreType",
                                       "keyStorePassword", "keyPassword", "protocol")},
    "spark.ui.killEnabled", *METRICS_SINKS,
})
#: Spark serves a web UI over TLS on its plain port plus this, when spark.ssl.<ui>.port is unset;
#: the plain port then only redirects to it.
TLS_UI_PORT_OFFSET = 400
_KEY = re.compile(r"^spark\.[A-Za-z0-9._-]+$")


def tls_files(conf_dir: str) -> dict[str, str]:
    """Where a node keeps its keystore and the cluster CA, under its configuration directory."""
    tls_dir = f"{conf_dir}/tls"
    return {"dir": tls_dir, "keystore": f"{tls_dir}/keystore.p12", "trust": f"{tls_dir}/trust.pem"}


def connector_dir(install_dir: str) -> str:
    """Where the Kafka connector jars go, beside the release's own."""
    return f"{install_dir}/connector"


def connector_jars(urls: list[str], install_dir: str) -> list[str]:
    """Where each connector jar of ``urls`` goes: its file name in :func:`connector_dir`."""
    return [f"{connector_dir(str(install_dir).rstrip('/'))}/{url.rsplit('/', 1)[-1]}"
            for url in urls]


def read_at_start(install_dir: str, conf_dir: str) -> list[str]:
    """OP-03: what every Spark JVM of a node reads at start besides its own unit, the daemons
    and the drivers spark-submit starts there alike; one restarts when any changed after it
    started. The connectors reach executors through the class path."""
    tls = tls_files(conf_dir)
    return [*(f"{conf_dir}/{name}" for name in (
        "spark-env.sh", "spark-defaults.conf", "log4j2.properties", "release")),
        tls["keystore"], tls["trust"], connector_dir(install_dir)]


def settings_problems(settings: Mapping[str, Any]) -> list[str]:
    """Every problem of the role's settings, as sentences (empty when they are valid)."""
    extra, problems = one_line_settings("spark_node_defaults_extra",
                                        setting(settings, "spark_node_defaults_extra"), _KEY,
                                        "spark.* property")
    for key in extra:
        if key in MANAGED_DEFAULTS:
            problems.append(f"spark_node_defaults_extra: {key} is set by the role through its "
                            "own variable (see roles/spark_node/defaults/main.yml)")
    mode = str(setting(settings, "spark_node_master_recovery_mode"))
    if mode not in RECOVERY_MODES:
        problems.append(f"spark_node_master_recovery_mode is {mode!r}; choose "
                        f"{' or '.join(RECOVERY_MODES)}")
    for name in ("worker_cores", "worker_memory_mb", "worker_reserved_memory_mb"):
        if int(setting(settings, f"spark_node_{name}")) < 0:
            problems.append(f"spark_node_{name} may not be negative (0 means derived from the "
                            "host)")
    memory = int(setting(settings, "spark_node_worker_memory_mb"))
    if 0 < memory < MIN_WORKER_MEMORY_MB:
        problems.append(f"spark_node_worker_memory_mb is {memory}; a worker needs at least "
                        f"{MIN_WORKER_MEMORY_MB} MB for one executor")
    if int(setting(settings, "spark_node_daemon_heap_mb")) < 128:
        problems.append("spark_node_daemon_heap_mb below 128 MB cannot run a Spark daemon")
    return problems


def worker_resources(settings: Mapping[str, Any], host_cores: int,
                     host_memory_mb: int) -> tuple[int, int]:
    """Cores and memory (MB) a worker offers: the overrides, else derived from the host.

    Memory is the host's less the reserve (OS page cache, the daemons), never below
    :data:`MIN_WORKER_MEMORY_MB`; cores are all of the host's, never below 1.
    """
    cores = int(setting(settings, "spark_node_worker_cores")) or max(1, host_cores)
    memory = int(setting(settings, "spark_node_worker_memory_mb"))
    if not memory:
        reserve = int(setting(settings, "spark_node_worker_reserved_memory_mb"))
        memory = max(MIN_WORKER_MEMORY_MB, host_memory_mb - reserve)
    return cores, memory


def node_problems(cluster: Mapping[str, Any], host: str,
                  settings: Mapping[str, Any]) -> list[str]:
    """Every reason :func:`spark_node_context` would refuse this host: its settings, a host in
    neither Spark group, no master at all. The preflight reports the settings' part before any
    host is touched (checks.role_inputs)."""
    problems = settings_problems(settings)
    masters = {n["host"] for n in cluster["spark_masters"]}
    workers = {n["host"] for n in cluster["spark_workers"]}
    if host not in masters | workers:
        problems.append(f"{host} is in neither the spark_master nor the spark_worker group: add "
                        "it to one, or leave the spark_node role off this host")
    if not masters:
        problems.append(f"the spark_master group is empty: add one host to it ({cite('SP-01')})")
    return problems


@dataclass(frozen=True)
class _Node:
    """One node's settings resolved once: what the section builders below share, so each reads
    only its concern's part."""

    host: str
    get: Callable[[str], Any]
    cluster: Mapping[str, Any]
    model: Mapping[str, Any]  # the node's entry in the model (a master's, else a worker's)
    masters: Mapping[str, Mapping[str, Any]]
    workers: Mapping[str, Mapping[str, Any]]
    home: str
    conf_dir: str
    home_dir: str
    log_dir: str
    python_env: str
    java_home: str
    bind_address: str
    history: bool
    event_log_dir: str
    shared_dir: str
    recovery_mode: str
    work_dir: str
    local_dir: str
    recovery_dir: str
    python: str

    @property
    def is_master(self) -> bool:
        return self.host in self.masters

    @property
    def is_worker(self) -> bool:
        return self.host in self.workers

    @property
    def recovers(self) -> bool:
        """The master keeps its state on disk to recover it after a restart."""
        return self.recovery_mode == "FILESYSTEM"


def _node(cluster: Mapping[str, Any], host: str, settings: Mapping[str, Any]) -> _Node:
    """The node's settings, a missing one taking the role default, its paths without a
    trailing slash."""

    def get(name: str) -> Any:
        return setting(settings, f"spark_node_{name}")

    def path(name: str) -> str:
        return str(get(name)).rstrip("/")

    masters = {n["host"]: n for n in cluster["spark_masters"]}
    workers = {n["host"]: n for n in cluster["spark_workers"]}
    model = masters.get(host) or workers[host]
    home_dir = path("home_dir")
    python_env = path("python_env")
    return _Node(host=host, get=get, cluster=cluster, model=model, masters=masters,
                 workers=workers, home=path("install_dir"), conf_dir=path("conf_dir"),
                 home_dir=home_dir, log_dir=path("log_dir"), python_env=python_env,
                 java_home=str(get("java_home") or DEFAULT_JAVA_HOME).rstrip("/"),
                 bind_address=str(get("bind_address") or model["address"]),
                 history=bool(get("history_server_enabled")),
                 event_log_dir=path("event_log_dir"),
                 shared_dir=str(cluster["spark_shared_dir"]).rstrip("/"),
                 recovery_mode=str(get("master_recovery_mode")), work_dir=f"{home_dir}/work",
                 local_dir=f"{home_dir}/tmp", recovery_dir=f"{home_dir}/recovery",
                 python=f"{python_env}/bin/python")


def _environment(node: _Node, cores: int, memory_mb: int) -> dict[str, str]:
    """spark-env.sh, without its empty values. It is read both by systemd (EnvironmentFile=)
    and by Spark's own scripts (load-spark-env.sh sources it under `set -a`): plain KEY="value"
    lines suit both."""
    get = node.get
    environment = {
        "JAVA_HOME": node.java_home,
        "SPARK_HOME": node.home,
        "SPARK_CONF_DIR": node.conf_dir,
        # Spark's scripts export this; the worker's launcher needs it to build executor class paths.
        "SPARK_SCALA_VERSION": SCALA_BINARY_VERSION,
        "SPARK_LOG_DIR": node.log_dir,
        # Bind to this address only; advertise the inventory name (else Spark advertises an IP).
        "SPARK_LOCAL_IP": node.bind_address,
        "SPARK_LOCAL_HOSTNAME": str(node.model["address"]),
        "SPARK_LOCAL_DIRS": node.local_dir,
        "SPARK_MASTER_HOST": node.bind_address if node.is_master else "",
        # The model computes the port, and the master URL from it.
        "SPARK_MASTER_PORT": str(int(node.model["master_port"])),
        "SPARK_MASTER_WEBUI_PORT": str(int(get("master_webui_port"))),
        "SPARK_WORKER_CORES": str(cores),
        "SPARK_WORKER_MEMORY": f"{memory_mb}m",
        "SPARK_WORKER_PORT": str(int(get("worker_port"))),
        "SPARK_WORKER_WEBUI_PORT": str(int(get("worker_webui_port"))),
        "SPARK_WORKER_DIR": node.work_dir,
        "PYSPARK_PYTHON": node.python,
        "PYSPARK_DRIVER_PYTHON": node.python,
    }
    return {k: v for k, v in environment.items() if v != ""}


def _ui_defaults(tls: Mapping[str, str]) -> dict[str, Any]:
    """SE-09: every web UI (master, workers, history server, drivers) over TLS with the host's
    certificate; the plain ports only redirect. The keystore password is written below the
    managed block by the role, like the cluster's secret. spark.ssl.enabled, not each UI's own
    switch: the UIs inherit spark.ssl.keyStore and the rest only from an enabled spark.ssl
    (SSLOptions.parse); RPC never inherits it and keeps spark.network.crypto."""
    return {
        "spark.ssl.enabled": "true",
        "spark.ssl.keyStore": tls["keystore"],
        "spark.ssl.keyStoreType": "PKCS12",
        "spark.ssl.protocol": "TLSv1.3",
        # TLS 1.2+ with AEAD suites only (SE-17, kafkaform.tls_policy).
        "spark.ssl.enabledAlgorithms": ",".join(tls_policy.JAVA_SUITES),
        # The UIs authenticate no one: they show state, they kill nothing.
        "spark.ui.killEnabled": "false",
    }


def _defaults(node: _Node) -> dict[str, Any]:
    """spark-defaults.conf's managed block (:data:`MANAGED_DEFAULTS`), before its extra
    settings."""
    connectors = connector_dir(node.home)
    defaults: dict[str, Any] = {
        "spark.master": node.cluster["spark_master_url"],
        # The connector sits outside jars/ so the release stays as shipped; both class paths name
        # it, so no application needs --packages (no Maven at run time). SP-02
        "spark.driver.extraClassPath": f"{connectors}/*",
        "spark.executor.extraClassPath": f"{connectors}/*",
        "spark.pyspark.python": node.python,
        "spark.pyspark.driver.python": node.python,
        "spark.sql.session.timeZone": "UTC",  # SP-04: one time zone across the pipeline
        "spark.driver.extraJavaOptions": "-Duser.timezone=UTC",
        "spark.executor.extraJavaOptions": "-Duser.timezone=UTC",
        "spark.deploy.recoveryMode": node.recovery_mode,
        "spark.master.rest.enabled": "false",
        # SE-09: daemons, drivers and executors prove they hold the cluster's secret (written
        # below this block by the role, from the control node) and encrypt their RPC.
        "spark.authenticate": "true",
        "spark.network.crypto.enabled": "true",
        "spark.worker.cleanup.enabled": "true",
        "spark.worker.cleanup.appDataTtl": int(node.get("worker_cleanup_ttl_s")),
        "spark.eventLog.enabled": "true" if node.history else "false",
        **_ui_defaults(tls_files(node.conf_dir)),
        **METRICS_SINKS,
    }
    if node.recovers:
        defaults["spark.deploy.recoveryDirectory"] = node.recovery_dir
    if node.history:
        defaults["spark.eventLog.dir"] = f"file://{node.event_log_dir}"
        defaults["spark.history.fs.logDirectory"] = f"file://{node.event_log_dir}"
        defaults["spark.history.ui.port"] = int(node.get("history_server_port"))
    return defaults


def _java(node: _Node) -> dict[str, Any]:
    """How every daemon of the node starts its JVM: one heap size, UTC, the node's log4j2."""
    heap = int(node.get("daemon_heap_mb"))
    return {
        "binary": f"{node.java_home}/bin/java",
        "classpath": f"{node.conf_dir}/:{node.home}/jars/*",
        "options": [
            f"-Xms{heap}m", f"-Xmx{heap}m", "-XX:+ExitOnOutOfMemoryError",
            "-Djava.awt.headless=true", "-Duser.timezone=UTC",
            f"-Dlog4j.configurationFile=file:{node.conf_dir}/log4j2.properties",
        ],
    }


def _daemon(name: str, description: str, main_class: str, arguments: list[str],
            read_write_paths: list[str]) -> dict[str, Any]:
    """One daemon's systemd unit, before its unit file and restart files are known."""
    return {"name": name, "description": description, "main_class": main_class,
            "arguments": arguments, "read_write_paths": read_write_paths}


def _daemons(node: _Node, reads: list[str]) -> list[dict[str, Any]]:
    """The node's daemons: a master's (and its history server), a worker's, or both. Each
    restarts when its unit or anything it reads at start (``reads``, OP-03) changed."""
    daemons = []
    if node.is_master:
        daemons.append(_daemon("spark-master", "Apache Spark standalone master", MASTER_CLASS,
                               [], [node.home_dir, node.log_dir]))
        if node.history:
            daemons.append(_daemon("spark-history", "Apache Spark history server",
                                   HISTORY_CLASS, [], [node.home_dir, node.log_dir]))
    if node.is_worker:
        # Executors run as children of the worker, inside its unit: they need the work and
        # scratch space and the shared directory applications write their output to.
        daemons.append(_daemon("spark-worker", "Apache Spark standalone worker", WORKER_CLASS,
                               [str(node.cluster["spark_master_url"])],
                               [node.home_dir, node.log_dir, node.shared_dir]))
    for daemon in daemons:
        unit_file = f"{SYSTEMD_UNIT_DIR}/{daemon['name']}.service"
        daemon["unit_file"] = unit_file
        daemon["restart_files"] = [*reads, unit_file]
    return daemons


def _directories(node: _Node) -> dict[str, Any]:
    """The node's directories, those of a feature it does not run empty."""
    master_keeps = node.is_master and node.recovers
    return {
        "home": node.home,
        "conf_dir": node.conf_dir,
        "home_dir": node.home_dir,
        "log_dir": node.log_dir,
        "work_dir": node.work_dir,
        "local_dir": node.local_dir,
        "recovery_dir": node.recovery_dir if node.recovers else "",
        "event_log_dir": node.event_log_dir if node.history else "",
        "connector_dir": connector_dir(node.home),
        "shared_dir": node.shared_dir,
        # The spark user's own: work, scratch, recovery state and event logs (the master's),
        # logs, and the shared directory of the sinks and checkpoints.
        "spark_dirs": [d for d in (node.home_dir, node.work_dir, node.local_dir, node.log_dir,
                                   node.recovery_dir if master_keeps else "",
                                   node.event_log_dir if node.is_master and node.history else "",
                                   node.shared_dir) if d],
        "python_env": node.python_env,
        "python": node.python,
        "bind_address": node.bind_address,
    }


def _tls_ui_url(address: Any, port: Any) -> str:
    """A web UI's address on its TLS port (:data:`TLS_UI_PORT_OFFSET` above its plain one)."""
    return f"https://{address}:{int(port) + TLS_UI_PORT_OFFSET}"


def _web_uis(node: _Node) -> dict[str, Any]:
    """The master's URL, the masters' web UIs and this node's, with its TLS material."""
    address = node.model["address"]
    return {
        "master_url": str(node.cluster["spark_master_url"]),
        # Each master's UI on its own TLS port, from the model.
        "master_webui_urls": [_tls_ui_url(m["address"], m["webui_port"])
                              for m in node.cluster["spark_masters"]],
        "tls": tls_files(node.conf_dir),
        "tls_names": sorted({node.host, str(address)}),
        "ui_urls": _ui_urls(node),
    }


def _ui_urls(node: _Node) -> list[str]:
    """This node's web UIs over TLS (the plain ports redirect to them): a master's and its
    history server's, a worker's."""
    get = node.get
    return [_tls_ui_url(node.model["address"], port) for port in (
        *([int(get("master_webui_port"))] if node.is_master else []),
        *([int(get("history_server_port"))] if node.is_master and node.history else []),
        *([int(get("worker_webui_port"))] if node.is_worker else []))]


def ui_urls(cluster: Mapping[str, Any], host: str, settings: Mapping[str, Any]) -> list[str]:
    """The web UIs the Spark node ``host`` serves over TLS (``kafkaform status`` reads the
    certificate each one presents)."""
    return _ui_urls(_node(cluster, host, settings))


def _worker_view(workers: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The workers as every node sees them (the master waits for them to register)."""
    return {
        "worker_hosts": sorted(workers),
        "worker_addresses": sorted(str(n["address"]) for n in workers.values()),
        "worker_address_by_host": {h: str(n["address"]) for h, n in sorted(workers.items())},
        # Each worker's UI on its own TLS port, from the model.
        "worker_webui_urls": sorted(_tls_ui_url(w["address"], w["webui_port"])
                                    for w in workers.values()),
    }


def spark_node_context(cluster: Mapping[str, Any], host: str, settings: Mapping[str, Any],
                       resources: Mapping[str, Any]) -> dict[str, Any]:
    """The ``spark_node`` dict the templates of ``roles/spark_node/templates/`` read, for one node.

    + cluster: ``kafkaform.model.build(view).to_dict()``
    + host: the node's inventory name (a member of spark_master, spark_worker or both)
    + settings: the role's variables by full name; a missing one takes the role default
    + resources: ``{"cores": int, "memory_mb": int}`` of the host (Ansible facts)

    Raises ``ValueError`` with :func:`node_problems`, the preflight reports before
    any host is touched.
    """
    problems = node_problems(cluster, host, settings)
    if problems:
        raise ValueError("; ".join(problems))
    node = _node(cluster, host, settings)
    cores, memory_mb = worker_resources(settings, int(resources.get("cores", 1)),
                                        int(resources.get("memory_mb", 0)))
    reads = read_at_start(node.home, node.conf_dir)
    daemons = _daemons(node, reads)
    return {
        "host": host,
        "health_poll_s": HEALTH_POLL_S,
        "is_master": node.is_master,
        "is_worker": node.is_worker,
        "user": str(node.get("user")),
        "group": str(node.get("group")),
        **_directories(node),
        **_web_uis(node),
        **_worker_view(node.workers),
        "worker_cores": cores,
        "worker_memory_mb": memory_mb,
        "environment": _environment(node, cores, memory_mb),
        "defaults": java_properties(_defaults(node)),
        "defaults_extra": java_properties({str(k): v
                                           for k, v in node.get("defaults_extra").items()}),
        "java": _java(node),
        "daemons": daemons,
        "read_at_start": reads,
        # Each daemon's unit, as kafkaform.platform.install_files takes a templated file.
        "unit_files": [{"dest": daemon["unit_file"], "vars": {"spark_daemon": daemon}}
                       for daemon in daemons],
        "sandbox": sandbox(),
    }
