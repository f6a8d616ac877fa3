"""What `kafkaform status` asks each host (from the kafkaform model of the inventory), and what
their answers say, as typed facts for kafkaform.status_judge.

  brokers      the admin helper's ``status`` (roles/kafka_broker/files/kafkaform_admin.py,
               node_status): its listener, its keystore's certificate, the cluster through it
               (controller, registrations, partitions with leader, replicas, ISR and
               min.insync.replicas, each broker's log directories' bytes), the KRaft quorum
  ZooKeeper    each member's ``srvr`` through its own four-letter-word probe on loopback
               (roles/zookeeper/files/zookeeper-4lw) and its certificate (SE-18)
  Spark nodes  the certificate each web UI serves on its TLS port (SE-09), read as a browser
               does
  Spark master the pipeline's unit, its progress file (kafkaform.pipeline.progress: offsets
               behind the topic's end, when the driver last reported) and the newest committed
               batch of its checkpoint (kafkaform.pipeline.checkpoint)
  monitoring   Prometheus's firing alerts (/api/v1/alerts), asked with the host's monitoring
               certificate as verify/test_monitoring.py does (SE-15)
  every host   the certificate of its monitoring services (node exporter), when the inventory
               has a monitoring group
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from . import model
from .contexts.kafka_broker import ADMIN_SCRIPT
from .contexts.monitoring import monitoring_context
from .contexts.monitoring import tls_files as monitoring_tls
from .contexts.spark_node import ui_urls as spark_ui_urls
from .contexts.spark_pipeline import PROGRESS_FILE, UNIT, pipeline_problems
from .contexts.zookeeper import tls_files as zookeeper_tls
from .defaults import setting
from .pipeline.config import QUERY, checkpoints_dir
from .plans.zookeeper import FOUR_LETTER_WORD_SCRIPT
from .status_probe import Answer, Ask, Tool

#: Why a broker's own parts were not read: its admin helper predates `status`.
OUTDATED = ("its admin helper has no status command yet, so its listener and keystore were not "
            "read: converge the kafka_broker role (playbooks/kafka.yml)")
#: The tools' names in a host's Ask.
KAFKA, SRVR, PIPELINE_UNIT, ALERTS = "kafka", "srvr", "pipeline_unit", "alerts"
#: A KRaft controller that is not also a broker is asked about itself alone (its listener, its
#: keystore's certificate): the quorum is read through the brokers, which every client reaches.
CONTROLLER_NODE = "controller_node"


@dataclass(frozen=True)
class CertificateFile:
    """A certificate a role deploys on a host: where, and what it says."""

    host: str
    path: str
    not_after: datetime | None = None
    problem: str = ""  # why not_after is unknown


@dataclass(frozen=True)
class BrokerNode:
    """One broker's own answer (kafkaform_admin.node_status); ``problem`` when none came."""

    host: str
    id: int
    listener: str = ""
    listening: bool = False
    cluster: Mapping[str, Any] | None = None
    quorum: Mapping[str, Any] | None = None
    problem: str = ""  # the host or the helper did not answer, or the cluster did not
    outdated: bool = False  # its helper predates `status` (the role not converged yet)


@dataclass(frozen=True)
class ControllerNode:
    """A dedicated KRaft controller's own answer (kafkaform_admin.own_node)."""

    host: str
    id: int
    listener: str = ""
    listening: bool = False
    problem: str = ""  # the host or its helper did not answer
    outdated: bool = False  # its helper predates `node` (the role not converged yet)


@dataclass(frozen=True)
class Member:
    """A ZooKeeper member and its mode (leader, follower, standalone) or why it has none."""

    host: str
    id: int
    mode: str = ""
    problem: str = ""


@dataclass(frozen=True)
class Pipeline:
    """The pipeline's driver on a Spark master, as its unit, progress file and checkpoint say."""

    host: str
    name: str
    wanted: str  # spark_pipeline_state: started or stopped
    unit: str = ""  # systemctl is-active
    batch: int | None = None  # the newest committed micro-batch
    batch_age_s: float | None = None
    reported_age_s: float | None = None  # since the driver last reported the query
    behind: float | None = None  # offsets behind the topic's end after the last batch
    problem: str = ""


@dataclass(frozen=True)
class Alert:
    name: str
    severity: str
    labels: Mapping[str, str]
    summary: str
    active_at: str


@dataclass(frozen=True)
class Alerts:
    host: str
    firing: list[Alert] = field(default_factory=list)
    pending: int = 0
    problem: str = ""


@dataclass(frozen=True)
class Facts:
    """Everything one status read found, and what the inventory expects."""

    brokers: list[BrokerNode]
    ensemble: list[Member]
    kraft: bool
    certificates: list[CertificateFile]
    pipelines: list[Pipeline]
    alerts: list[Alerts]
    renew_days: int
    read_at: datetime
    seconds: float = 0.0  # how long the read took
    controllers: list[ControllerNode] = field(default_factory=list)  # dedicated ones


# --- what to ask ---------------------------------------------------------------------------------

def asks(view: model.InventoryView, cluster: Mapping[str, Any]) -> dict[str, Ask]:
    """Each host's Ask, from the model of the inventory."""
    found: dict[str, Ask] = {}

    def ask(host: str) -> Ask:
        return found.setdefault(host, Ask())

    for member in cluster["ensemble"]:
        ask(member["host"]).run[SRVR] = [FOUR_LETTER_WORD_SCRIPT, "srvr",
                                         f"127.0.0.1:{member['client_port']}"]
        if cluster["zookeeper_over_tls"]:
            ask(member["host"]).files.append(zookeeper_cert(view, member["host"]))
    for broker in cluster["brokers"]:
        ask(broker["host"]).run[KAFKA] = [ADMIN_SCRIPT, "status"]
    for host in dedicated_controllers(cluster):
        ask(host).run[CONTROLLER_NODE] = [ADMIN_SCRIPT, "node"]
    for host, pipeline in pipelines(view, cluster).items():
        ask(host).run[PIPELINE_UNIT] = ["systemctl", "is-active", UNIT]
        ask(host).files.append(PROGRESS_FILE)
        ask(host).newest.append(pipeline["commits"])
    # A host can be both master and worker: spark_ui_urls names all its UIs at once.
    spark = [*cluster["spark_masters"], *cluster["spark_workers"]]
    for host in dict.fromkeys(str(node["host"]) for node in spark):
        ask(host).served = spark_ui_urls(cluster, host, view.variables(host))
    monitors = view.members(model.MONITORING)
    for host in monitors:
        context = monitoring_context(cluster, host, view.variables(host), view.groups)
        tls = context["tls"]
        ask(host).run[ALERTS] = ["curl", "-sS", "--fail", "--max-time", "10", "--cacert",
                                 tls["trust"], "--cert", tls["cert"], "--key", tls["key"],
                                 f"{context['prometheus_url']}/api/v1/alerts"]
    if monitors:
        for host in [*view.cluster_hosts(), *monitors]:
            ask(host).files.append(monitoring_tls()["cert"])
    return found


def dedicated_controllers(cluster: Mapping[str, Any]) -> list[str]:
    """The hosts of the KRaft controllers that are not brokers too (KR-04)."""
    brokers = {str(b["host"]) for b in cluster["brokers"]}
    return [str(c["host"]) for c in cluster["controllers"] if str(c["host"]) not in brokers]


def zookeeper_cert(view: model.InventoryView, host: str) -> str:
    return zookeeper_tls(str(setting(view.variables(host), "zookeeper_conf_dir")).rstrip("/"))[
        "cert"]


def pipelines(view: model.InventoryView, cluster: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """The pipeline of each Spark master whose settings make one: its name, wanted state and
    checkpoint's commits directory."""
    found = {}
    for master in cluster["spark_masters"]:
        host = str(master["host"])
        settings = view.variables(host)
        if pipeline_problems(cluster, host, settings):
            continue  # the preflight refuses it: the role runs no pipeline there
        name = str(setting(settings, "spark_pipeline_name"))
        data_dir = f"{str(cluster['spark_shared_dir']).rstrip('/')}/{name}"
        found[host] = {"name": name, "wanted": str(setting(settings, "spark_pipeline_state")),
                       "commits": f"{checkpoints_dir(data_dir)}/{QUERY}/commits"}
    return found


# --- what the answers say ------------------------------------------------------------------------

def certificates(answers: Mapping[str, Answer], view: model.InventoryView,
                 cluster: Mapping[str, Any], brokers: list[BrokerNode]) -> list[CertificateFile]:
    """Every certificate read: the files the probe read, and each broker's keystore."""
    found = []
    for host, ask in asks(view, cluster).items():
        answer = answers[host]
        for where, read in [*((path, answer.files.get(path, {})) for path in ask.files
                              if path != PROGRESS_FILE),
                            *((url, answer.served.get(url, {})) for url in ask.served)]:
            if answer.problem or "text" not in read:
                found.append(CertificateFile(host, where, problem=answer.problem or
                                             f"cannot read it: {read.get('error', 'no answer')}"))
            else:
                found.append(certificate(host, where, read["text"]))
    nodes = [(b.host, KAFKA, b.outdated) for b in brokers]
    for host in dedicated_controllers(cluster):
        tool = answers[host].tool(CONTROLLER_NODE)
        nodes.append((host, CONTROLLER_NODE, outdated(tool, "node")))
    for host, asked, too_old in nodes:
        helper = answers[host].tool(asked).json() or {}
        # Where the role puts it, as server.properties' ssl.keystore.location says.
        keystore = (f"{setting(view.variables(host), 'kafka_broker_tls_dir')!s}"
                    .rstrip("/") + "/keystore.p12")
        if helper.get("certificate"):
            found.append(certificate(host, keystore, helper["certificate"]))
        elif helper.get("certificate_error") or too_old:
            found.append(CertificateFile(host, keystore, problem=helper.get(
                "certificate_error") or OUTDATED))
        elif answers[host].problem and asked == CONTROLLER_NODE:
            found.append(CertificateFile(host, keystore, problem=answers[host].problem))
    return found


def certificate(host: str, path: str, pem: str) -> CertificateFile:
    # The PKI's parser, imported here: it needs cryptography, which ansible-test's import
    # sandbox lacks (tests/sanity/ignore-2.19.txt lists the pki modules).
    from .pki.rotation import certificate_info

    try:
        info = certificate_info(pem.encode())
    except ValueError as error:
        return CertificateFile(host, path, problem=f"not a PEM certificate: {error}")
    return CertificateFile(host, path, datetime.fromisoformat(info["not_after"]))


def broker_nodes(answers: Mapping[str, Answer], cluster: Mapping[str, Any]) -> list[BrokerNode]:
    found = []
    for broker in cluster["brokers"]:
        host, number = str(broker["host"]), int(broker["id"])
        tool = answers[host].tool(KAFKA)
        helper = tool.json()
        if outdated(tool):
            found.append(BrokerNode(host, number, outdated=True))
            continue
        if not isinstance(helper, dict):
            found.append(BrokerNode(host, number, problem=answers[host].problem or
                                    f"the admin helper gave no answer ({tool.why()})"))
            continue
        found.append(BrokerNode(
            host, number, str(helper.get("listener", "")), bool(helper.get("listening")),
            helper.get("cluster"), helper.get("quorum"),
            str(helper.get("cluster_error") or helper.get("quorum_error") or "")))
    return found


def controller_nodes(answers: Mapping[str, Answer],
                     cluster: Mapping[str, Any]) -> list[ControllerNode]:
    ids = {str(c["host"]): int(c["node_id"]) for c in cluster["controllers"]}
    found = []
    for host in dedicated_controllers(cluster):
        tool = answers[host].tool(CONTROLLER_NODE)
        helper = tool.json()
        if outdated(tool, "node"):
            found.append(ControllerNode(host, ids[host], outdated=True))
        elif not isinstance(helper, dict):
            found.append(ControllerNode(host, ids[host], problem=answers[host].problem or
                                        f"the admin helper gave no answer ({tool.why()})"))
        else:
            found.append(ControllerNode(host, ids[host], str(helper.get("listener", "")),
                                        bool(helper.get("listening"))))
    return found


def outdated(tool: Tool, command: str = "status") -> bool:
    """Whether a node's admin helper predates its ``command`` (argparse's refusal)."""
    return tool.rc == 2 and f"invalid choice: '{command}'" in tool.stderr


def members(answers: Mapping[str, Answer], cluster: Mapping[str, Any]) -> list[Member]:
    found = []
    for member in cluster["ensemble"]:
        host = str(member["host"])
        tool = answers[host].tool(SRVR)
        modes = [line.removeprefix("Mode: ").strip() for line in tool.stdout.splitlines()
                 if line.startswith("Mode: ")]
        if modes:
            found.append(Member(host, int(member["id"]), modes[0]))
        else:
            found.append(Member(host, int(member["id"]), problem=answers[host].problem or
                                f"not serving ({tool.why()})"))
    return found


def pipeline_states(answers: Mapping[str, Answer], view: model.InventoryView,
                    cluster: Mapping[str, Any]) -> list[Pipeline]:
    found = []
    for host, spec in pipelines(view, cluster).items():
        answer = answers[host]
        base = Pipeline(host, spec["name"], spec["wanted"])
        if answer.problem:
            found.append(replace(base, problem=answer.problem))
            continue
        unit = answer.tool(PIPELINE_UNIT).stdout.strip() or "unknown"
        newest = answer.newest.get(spec["commits"], {})
        batch = int(newest["name"]) if newest.get("name") else None
        batch_age = answer.now - float(newest["mtime"]) if newest.get("mtime") else None
        progress = _progress(answer.files.get(PROGRESS_FILE, {}))
        reported = progress.get("updated")
        found.append(replace(
            base, unit=unit, batch=batch, batch_age_s=batch_age,
            reported_age_s=answer.now - float(reported) if reported else None,
            behind=progress.get("offsets_behind_latest"),
            problem="" if "error" not in newest else f"checkpoint {spec['commits']}: "
                                                     f"{newest['error']}"))
    return found


def _progress(read: Mapping[str, str]) -> dict[str, Any]:
    """The pipeline's query in its progress file (absent while the job is stopped)."""
    try:
        queries = json.loads(read.get("text") or "{}")
    except ValueError:
        return {}
    query = queries.get(QUERY) if isinstance(queries, dict) else None
    return query if isinstance(query, dict) else {}


def alert_states(answers: Mapping[str, Answer], view: model.InventoryView) -> list[Alerts]:
    found = []
    for host in view.members(model.MONITORING):
        tool = answers[host].tool(ALERTS)
        try:
            body = json.loads(tool.stdout)
            listed = body["data"]["alerts"]
        except (ValueError, KeyError, TypeError):
            found.append(Alerts(host, problem=answers[host].problem or
                                f"Prometheus did not answer ({tool.why()})"))
            continue
        firing = [Alert(str(a["labels"].get("alertname", "?")),
                        str(a["labels"].get("severity", "")),
                        {str(k): str(v) for k, v in a["labels"].items() if k != "alertname"},
                        str((a.get("annotations") or {}).get("summary", "")),
                        str(a.get("activeAt", "")))
                  for a in listed if a.get("state") == "firing"]
        found.append(Alerts(host, firing, sum(a.get("state") == "pending" for a in listed)))
    return found


def facts(answers: Mapping[str, Answer], view: model.InventoryView, cluster: Mapping[str, Any],
          renew_days: int, seconds: float = 0.0, now: datetime | None = None) -> Facts:
    """The facts of every host's answer."""
    brokers = broker_nodes(answers, cluster)
    return Facts(brokers, members(answers, cluster), bool(cluster["controllers"]),
                 certificates(answers, view, cluster, brokers),
                 pipeline_states(answers, view, cluster), alert_states(answers, view),
                 renew_days, now or datetime.now(UTC), seconds,
                 controllers=controller_nodes(answers, cluster))
