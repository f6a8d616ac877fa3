"""The template context of the monitoring role: which monitoring services a host runs, where
they listen, and the files each reads at start (its restart files)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .. import tls_policy
from ..defaults import setting
from ..model import GROUPS, MONITORING
from ..sizing import DISK_FREE_MIN
from . import SYSTEMD_UNIT_DIR
from .sandbox import root_reader_sandbox, sandbox
from .spark_node import METRICS_PATHS as SPARK_METRICS_PATHS
from .spark_node import TLS_UI_PORT_OFFSET
from .spark_pipeline import PROGRESS_FILE as PIPELINE_PROGRESS_FILE
from .spark_pipeline import UNIT as PIPELINE_UNIT

NODE_EXPORTER = "prometheus-node-exporter"
PROMETHEUS = "prometheus"
ALERTMANAGER = "prometheus-alertmanager"
RULES_DIR = "/etc/prometheus/rules"
#: The platform's services, whose state node exporter reports: the units of the zookeeper and
#: kafka_broker roles, the Spark daemons (kafkaform.contexts.spark_node) and the pipeline's driver.
WATCHED_UNITS = ("zookeeper", "kafka", "spark-master", "spark-history", "spark-worker",
                 PIPELINE_UNIT)


#: What measures the platform's services for node exporter's textfile collector (MO-08): the
#: script, and its oneshot unit and the timer that runs it every PROCESS_METRICS_INTERVAL.
PROCESS_METRICS = "kafkaform-process-metrics"
PROCESS_METRICS_SCRIPT = f"/usr/local/sbin/{PROCESS_METRICS}"
PROCESS_METRICS_INTERVAL = "60s"

#: The socket families every monitoring service needs: its listener and D-Bus (node exporter's
#: systemd collector); node exporter also reads the network statistics over netlink.
ADDRESS_FAMILIES = ("AF_UNIX", "AF_INET", "AF_INET6")


def _unit(name: str, *read_at_start: str, writes: Sequence[str] = (),
          families: Sequence[str] = ADDRESS_FAMILIES) -> dict[str, Any]:
    """A Debian unit the role hardens with a drop-in: the files it reads at start, the
    directories it writes (its data) and the socket families it may open."""
    dropin = f"{SYSTEMD_UNIT_DIR}/{name}.service.d/kafkaform.conf"
    return {"name": name, "read_write_paths": list(writes), "address_families": list(families),
            "dropin": dropin, "restart_files": [*read_at_start, f"/etc/default/{name}", dropin]}


def node_targets(cluster: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every host of the platform once, with the labels its series carry: rack and role (the
    first group the model lists it in)."""
    found: dict[str, dict[str, Any]] = {}
    for role, members in (("zookeeper", cluster["ensemble"]), ("kafka_broker", cluster["brokers"]),
                          ("spark_master", cluster["spark_masters"]),
                          ("spark_worker", cluster["spark_workers"])):
        for member in members:
            found.setdefault(str(member["host"]), {
                "host": str(member["host"]), "address": str(member["address"]),
                "rack": str(member.get("rack") or ""), "role": role})
    return list(found.values())


#: The scrape job of each role's JVM metrics agent (kafkaform.contexts.metrics), and where the
#: cluster model lists the role's members.
JVM_JOBS = (("zookeeper", "ensemble"), ("kafka", "brokers"))


def jvm_targets(cluster: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Job name to the JVMs it scrapes: every member whose role runs the agent, with its rack."""
    return {job: [{"host": str(m["host"]), "address": str(m["address"]),
                   "port": int(m["metrics_port"]), "rack": str(m.get("rack") or "")}
                  for m in cluster[members] if m.get("metrics_port")]
            for job, members in JVM_JOBS}


#: The scrape job of each Spark group's daemons, and where the cluster model lists its members.
SPARK_JOBS = (("spark_master", "spark_masters"), ("spark_worker", "spark_workers"))
#: The TLS files of the monitoring services of a host, readable by the prometheus group: the
#: cluster's trust bundle, and the certificate and key the host's monitoring service of
#: kafkaform.pki issues (apart from the host's own: node exporter must not hold a broker's key).
TLS_DIR = "/etc/prometheus/tls"
#: The certificate's service name (kafkaform.pki) and organizational unit.
TLS_SERVICE = "monitoring"
#: The web configuration node exporter, Prometheus and Alertmanager share: TLS, and a client
#: certificate from the cluster CA required of every caller (SE-15). They read it again on every
#: connection, so a new certificate restarts nothing.
WEB_CONFIG = "/etc/prometheus/web.yml"


def tls_files() -> dict[str, str]:
    """Where the monitoring services of a host find their TLS files."""
    return {"dir": TLS_DIR, "trust": f"{TLS_DIR}/trust.pem", "cert": f"{TLS_DIR}/cert.pem",
            "key": f"{TLS_DIR}/key.pem", "web_config": WEB_CONFIG}


def spark_targets(cluster: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Job name to the metrics path of the Spark group and its daemons, each on its web UI's
    TLS port (MO-09)."""
    return {job: {"path": SPARK_METRICS_PATHS[job],
                  "targets": [{"host": str(m["host"]), "address": str(m["address"]),
                               "port": int(m["webui_port"]) + TLS_UI_PORT_OFFSET, "rack": ""}
                              for m in cluster[members]]}
            for job, members in SPARK_JOBS}


def monitoring_context(cluster: Mapping[str, Any], host: str, settings: Mapping[str, Any],
                       groups: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """The ``monitoring`` dict of ``roles/monitoring/templates/``, for one host.

    + cluster: ``kafkaform.model.build(view).to_dict()``
    + host: the host's inventory name, which is also its cluster address
    + settings: the role's variables by full name; a missing one takes the role default
    + groups: the inventory's groups (``groups`` in a play), for the monitoring group
    """

    def get(name: str) -> Any:
        return setting(settings, f"monitoring_{name}")

    cluster_host = any(host in groups.get(group, ()) for group in GROUPS)
    monitoring_host = host in groups.get(MONITORING, ())
    units = ([_unit(NODE_EXPORTER, families=(*ADDRESS_FAMILIES, "AF_NETLINK"))]
             if cluster_host else [])
    rules_file = f"{RULES_DIR}/kafkaform.yml"
    if monitoring_host:
        units += [_unit(PROMETHEUS, "/etc/prometheus/prometheus.yml", rules_file,
                        writes=["/var/lib/prometheus/metrics2"]),
                  _unit(ALERTMANAGER, "/etc/prometheus/alertmanager.yml",
                        writes=["/var/lib/prometheus/alertmanager"])]
    prometheus_port = int(get("prometheus_port"))
    textfile_dir = str(get("textfile_dir"))
    return {
        "host": host,
        "address": host,
        "cluster": str(cluster["name"]),
        "nodes": node_targets(cluster),
        "jvms": jvm_targets(cluster),
        "spark": spark_targets(cluster),
        "tls": tls_files(),
        # TLS 1.2's AEAD suites in Go's names; its TLS 1.3 suites are all AEAD (SE-17).
        "tls_cipher_suites": list(tls_policy.GO_SUITES),
        "tls_names": [host],
        "tls_service": TLS_SERVICE,
        "alertmanagers": [f"{m}:{int(get('alertmanager_port'))}"
                          for m in groups.get(MONITORING, ())],
        "scrape_interval": str(get("scrape_interval")),
        "evaluation_interval": str(get("evaluation_interval")),
        # FilesystemAlmostFull fires below this share free (MO-16).
        "disk_free_min": DISK_FREE_MIN,
        "is_cluster_host": cluster_host,
        "is_monitoring_host": monitoring_host,
        "units": units,
        # Each unit's drop-in, as kafkaform.platform.install_files takes a templated file.
        "dropin_files": [{"dest": unit["dropin"], "vars": {"monitoring_unit": unit}}
                         for unit in units],
        "rules_dir": RULES_DIR,
        "rules_file": rules_file,
        "prometheus_port": prometheus_port,
        "prometheus_url": f"https://{host}:{prometheus_port}",
        "alertmanager_port": int(get("alertmanager_port")),
        "node_exporter_port": int(get("node_exporter_port")),
        "retention_time": str(get("retention_time")),
        "retention_size": str(get("retention_size")),
        "textfile_dir": textfile_dir,
        "watched_units_pattern": "({})[.]service".format("|".join(WATCHED_UNITS)),
        "process_metrics": {
            "name": PROCESS_METRICS,
            "script": PROCESS_METRICS_SCRIPT,
            "units": [f"{unit}.service" for unit in WATCHED_UNITS],
            "output": f"{textfile_dir}/kafkaform.prom",
            "pipeline_progress": PIPELINE_PROGRESS_FILE,
            "interval": PROCESS_METRICS_INTERVAL,
            "sandbox": root_reader_sandbox(),
        },
        "sandbox": sandbox(),
    }
