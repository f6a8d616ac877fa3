"""Whether what `kafkaform status` read is healthy: one section per part of the platform, each a
list of lines, the unhealthy ones first, each saying what it found and, when unhealthy, why.

Unhealthy: a broker not registered, down or not reached, or whose log directories have less than
a tenth of their disk free (MO-16); no active controller; any under-replicated, under-min-ISR or
offline partition; a ZooKeeper ensemble or KRaft quorum without a leader or without a majority
serving; a certificate under the renewal threshold the
PKI uses (kafkaform_tls_renew_before_days, SE-02); a pipeline that should run and does not, or
that committed no batch for longer than the threshold while records wait, or whose driver stopped
reporting (as the PipelineStalled alert, MO-09); an alert firing; a host Ansible cannot reach.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .rules import cite
from .sizing import DISK_FREE_MIN
from .status_collect import (
    OUTDATED,
    Alerts,
    BrokerNode,
    CertificateFile,
    ControllerNode,
    Facts,
    Member,
    Pipeline,
)

#: Seconds without a committed batch (with records waiting) or without a report from the driver
#: after which the pipeline is unhealthy: PipelineStalled's (roles/monitoring/templates/etc/
#: prometheus/rules/kafkaform.yml.j2).
PIPELINE_STALE_S = 300.0
#: How many partitions a line names before it counts the rest.
NAMED = 10
SERVING = ("leader", "follower")


@dataclass(frozen=True)
class Line:
    """One finding. ``unknown``: what could not be read, though nothing read says unhealthy (a
    broker whose admin helper predates ``status``): marked, never failing the status."""

    ok: bool
    text: str
    data: Mapping[str, Any] = field(default_factory=dict)
    unknown: bool = False

    @property
    def rank(self) -> int:
        return 0 if not self.ok else 1 if self.unknown else 2


@dataclass(frozen=True)
class Section:
    name: str
    lines: list[Line]

    @property
    def ok(self) -> bool:
        return all(line.ok for line in self.lines)


@dataclass(frozen=True)
class Report:
    sections: list[Section]
    facts: Facts

    @property
    def ok(self) -> bool:
        return all(section.ok for section in self.sections)

    def to_dict(self) -> dict[str, Any]:
        return {"healthy": self.ok, "read_at": self.facts.read_at.isoformat(),
                "seconds": round(self.facts.seconds, 1),
                "sections": [{"name": s.name, "healthy": s.ok,
                              "lines": [{"healthy": line.ok, "unknown": line.unknown,
                                         "text": line.text, **line.data}
                                        for line in s.lines]} for s in self.sections]}


def section(name: str, lines: Iterable[Line]) -> Section:
    """A section with its unhealthy lines first, then the unknown ones, each group in the order
    found."""
    return Section(name, sorted(lines, key=lambda line: line.rank))


def named(what: str, names: Sequence[str]) -> Line:
    """A count of partitions in a bad state, naming the first ones; none is healthy."""
    if not names:
        return Line(True, f"{what}: none", {"count": 0})
    shown = ", ".join(names[:NAMED]) + (f" and {len(names) - NAMED} more"
                                        if len(names) > NAMED else "")
    return Line(False, f"{len(names)} {what}: {shown}", {"count": len(names),
                                                         "partitions": list(names)})


def size(count: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if count < 1024 or unit == "TiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    return ""  # not reached


def age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


# --- Kafka -------------------------------------------------------------------------------------

def cluster_view(brokers: Sequence[BrokerNode]) -> Mapping[str, Any] | None:
    """The cluster as the first broker that could ask it saw it."""
    return next((b.cluster for b in brokers if b.cluster is not None), None)


def partition_lines(partitions: Sequence[Mapping[str, Any]]) -> list[Line]:
    under, under_min, offline = [], [], []
    for part in partitions:
        name = f"{part['topic']}-{part['partition']}"
        if int(part["leader"]) < 0:
            offline.append(name)
            continue
        if len(part["isr"]) < len(part["replicas"]):
            under.append(name)
        if len(part["isr"]) < int(part["min_insync"]):
            under_min.append(name)
    return [named("under-replicated partitions", under),
            named("partitions under min.insync.replicas", under_min),
            named("offline partitions", offline)]


def broker_line(node: BrokerNode, view: Mapping[str, Any] | None) -> Line:
    registered = view is not None and node.id in view["registered"]
    data: dict[str, Any] = {"broker": node.id, "host": node.host, "registered": registered}
    where = f"broker {node.id} ({node.host})"
    if view is None:
        why = node.problem or (OUTDATED if node.outdated else "no broker could ask the cluster")
        return Line(False, f"{where}: {why}", data)
    partitions = view["partitions"]
    entry: Mapping[str, Any] = next((b for b in view["brokers"] if int(b["id"]) == node.id),
                                    {})
    data.update(rack=entry.get("rack"),
                leaders=sum(int(p["leader"]) == node.id for p in partitions),
                replicas=sum(node.id in p["replicas"] for p in partitions),
                disk_total=entry.get("total"), disk_usable=entry.get("usable"))
    if not registered:
        why = (node.problem if node.problem and not node.listening else
               f"its listener {node.listener} is closed" if node.listener and not node.listening
               else "its broker process is down or fenced")
        return Line(False, f"{where}: not registered ({why})", data)
    text = (f"{where}: registered, rack {data['rack'] or '(none)'}, {data['leaders']} leaders, "
            f"{data['replicas']} replicas")
    full = ""
    if entry.get("total"):
        total, usable = int(entry["total"]), int(entry["usable"])
        text += (f", log dirs {size(total - usable)} used of {size(total)} "
                 f"({100 * usable / total:.0f}% free)")
        if usable < DISK_FREE_MIN * total:
            full = (f"; less than {DISK_FREE_MIN:.0%} free: a full log directory goes offline "
                    f"with its replicas ({cite('MO-16')}). Lower the retention of the largest "
                    "topics or add disk")
    if node.problem:  # registered, yet its own helper did not answer: say so
        return Line(False, f"{text}{full}; its host: {node.problem}", data)
    if full:
        return Line(False, text + full, data)
    if node.outdated:
        return Line(True, f"{text}; {OUTDATED}", data, unknown=True)
    return Line(True, text, data)


def active_controller_line(view: Mapping[str, Any], brokers: Sequence[BrokerNode]) -> Line:
    """ZooKeeper mode: the broker that holds the controller's znode."""
    if view.get("controller") is None:
        return Line(False, "no active controller")
    controller = int(view["controller"])
    host = next((b.host for b in brokers if b.id == controller), "a controller")
    return Line(True, f"active controller: {controller} ({host})", {"controller": controller})


def kafka(facts: Facts) -> Section:
    view = cluster_view(facts.brokers)
    lines = []
    if view is None:
        lines.append(Line(False, "no broker could ask the cluster (each broker's line says "
                                 "why)"))
    elif not facts.kraft:
        # In KRaft mode a broker names any live broker as the controller (KIP-590): the
        # quorum's section names the active one, its leader.
        lines.append(active_controller_line(view, facts.brokers))
    lines += [broker_line(node, view) for node in facts.brokers]
    if view is not None:
        lines += partition_lines(view["partitions"])
    return section("Kafka", lines)


# --- ZooKeeper and the KRaft quorum ------------------------------------------------------------

def ensemble(members: Sequence[Member]) -> Section:
    serving = [m for m in members if m.mode in SERVING or (m.mode == "standalone"
                                                           and len(members) == 1)]
    leaders = [m.host for m in members if m.mode in ("leader", "standalone")]
    majority = len(serving) > len(members) // 2
    summary = (f"ensemble: {len(serving)} of {len(members)} members serving, "
               f"leader {', '.join(leaders) or 'none'}")
    if not majority:
        summary += ": no majority, the ensemble refuses every write"
    elif len(leaders) != 1:
        summary += ": not exactly one leader"
    lines = [Line(majority and len(leaders) == 1, summary,
                  {"serving": len(serving), "members": len(members), "leader": leaders})]
    for m in members:
        ok = m in serving
        lines.append(Line(ok, f"member {m.id} ({m.host}): {m.mode or m.problem}",
                          {"host": m.host, "id": m.id, "mode": m.mode or None}))
    return section("ZooKeeper", lines)


def dedicated_controller_line(node: ControllerNode) -> Line:
    text = f"controller {node.id} ({node.host})"
    data = {"controller": node.id, "host": node.host, "listening": node.listening}
    if node.outdated:
        return Line(True, f"{text}: {OUTDATED}", data, unknown=True)
    if node.problem:
        return Line(False, f"{text}: {node.problem}", data)
    if not node.listening:
        return Line(False, f"{text}: its listener {node.listener} is closed (its process is "
                           "down)", data)
    return Line(True, f"{text}: listening on {node.listener}", data)


def quorum(brokers: Sequence[BrokerNode], voters: Sequence[int], max_lag: int,
           controllers: Sequence[ControllerNode] = ()) -> Section:
    own = [dedicated_controller_line(node) for node in controllers]
    found = next((b.quorum for b in brokers if b.quorum), None)
    if found is None:
        why = "; ".join(f"{b.host}: {b.problem}" for b in brokers if b.problem) or "no answer"
        return section("KRaft quorum",
                       [Line(False, f"no broker could read the quorum ({why})"), *own])
    nodes = found.get("nodes") or {}
    current = [v for v in voters if str(v) in nodes
               and int(nodes[str(v)]["lag"]) <= max_lag]
    leader = found.get("leader")
    ok = leader is not None and len(current) > len(voters) // 2
    lines = [Line(ok, f"quorum: leader {leader if leader is not None else 'none'} (the active "
                      f"controller), "
                      f"{len(current)} of {len(voters)} voters within {max_lag} records",
                  {"leader": leader, "voters": list(voters), "current": current})]
    for voter in voters:
        node = nodes.get(str(voter))
        lines.append(Line(voter in current, f"voter {voter}: " + (
            f"{node['status']}, lag {node['lag']}" if node else "not in the quorum"),
            {"voter": voter, **(node or {})}))
    return section("KRaft quorum", [*lines, *own])


# --- certificates, the pipeline, alerts --------------------------------------------------------

def certificate_line(cert: CertificateFile, facts: Facts) -> Line:
    where = f"{cert.host} {cert.path}"
    if cert.not_after is None:
        unknown = cert.problem == OUTDATED  # its broker's line says why
        return Line(unknown, f"{where}: {cert.problem}", {"host": cert.host, "path": cert.path},
                    unknown=unknown)

    days = (cert.not_after - facts.read_at).total_seconds() / 86400
    data = {"host": cert.host, "path": cert.path, "not_after": cert.not_after.isoformat(),
            "days_left": round(days, 1)}
    text = f"{where}: {days:.0f} days left (until {cert.not_after.date()})"
    if days < facts.renew_days:
        return Line(False, f"{text}, under the {facts.renew_days}-day renewal threshold "
                           "(kafkaform_tls_renew_before_days): run the site playbook to renew "
                           "it (SE-02)", data)
    return Line(True, text, data)


def pipeline_line(p: Pipeline, stale_s: float) -> Line:
    where = f"{p.name} on {p.host}"
    data = {"host": p.host, "pipeline": p.name, "unit": p.unit or None, "batch": p.batch,
            "batch_age_s": p.batch_age_s, "reported_age_s": p.reported_age_s,
            "behind": p.behind}
    if p.problem:
        return Line(False, f"{where}: {p.problem}", data)
    if p.wanted == "stopped" and p.unit != "active":
        return Line(True, f"{where}: stopped, as spark_pipeline_state says", data)
    batch = (f"batch {p.batch} committed {age(p.batch_age_s)} ago"
             if p.batch is not None and p.batch_age_s is not None else "no batch committed yet")
    behind = "" if p.behind is None else f", {p.behind:.0f} records behind"
    text = f"{where}: {p.unit}, {batch}{behind}"
    if p.unit != "active":
        return Line(False, f"{where}: the {p.unit} unit kafkaform-pipeline is not active "
                           "(journalctl -u kafkaform-pipeline)", data)
    if p.reported_age_s is None or p.reported_age_s > stale_s:
        silent = "never" if p.reported_age_s is None else f"not for {age(p.reported_age_s)}"
        return Line(False, f"{text}; the driver reported {silent} (stalled)", data)
    waiting = (p.behind or 0) > 0
    if waiting and (p.batch_age_s is None or p.batch_age_s > stale_s):
        return Line(False, f"{text}: no batch for over {age(stale_s)} while records wait", data)
    return Line(True, text, data)


def alert_lines(found: Alerts) -> list[Line]:
    if found.problem:
        return [Line(False, f"{found.host}: {found.problem}", {"host": found.host})]
    lines = [Line(False, f"{a.name} [{a.severity or 'no severity'}] "
                         f"{a.labels.get('instance', '')} since {a.active_at[:19]}: {a.summary}",
                  {"host": found.host, "alert": a.name, "labels": dict(a.labels)})
             for a in found.firing]
    if not found.firing:
        pending = f" ({found.pending} pending)" if found.pending else ""
        lines.append(Line(True, f"{found.host}: no alert firing{pending}",
                          {"host": found.host, "pending": found.pending}))
    return lines


def judge(facts: Facts, voters: Sequence[int] = (), max_lag: int = 1000,
          stale_s: float = PIPELINE_STALE_S) -> Report:
    """The report of ``facts``; ``voters``: the KRaft controllers' ids (KRaft mode)."""
    sections = [kafka(facts)]
    if facts.ensemble:
        sections.append(ensemble(facts.ensemble))
    if facts.kraft:
        sections.append(quorum(facts.brokers, voters, max_lag, facts.controllers))
    if facts.certificates:
        sections.append(section("Certificates", (certificate_line(c, facts)
                                                 for c in facts.certificates)))
    if facts.pipelines:
        sections.append(section("Pipeline", (pipeline_line(p, stale_s)
                                             for p in facts.pipelines)))
    if facts.alerts:
        sections.append(section("Alerts", (line for found in facts.alerts
                                           for line in alert_lines(found))))
    return Report(sections, facts)
