"""`kafkaform status`'s judgement (kafkaform.status_judge): each part healthy or not, and the line
that says why, from facts as kafkaform.status_collect gives them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kafkaform.status_collect import (
    OUTDATED,
    Alert,
    Alerts,
    BrokerNode,
    CertificateFile,
    Facts,
    Member,
    Pipeline,
)
from kafkaform.status_judge import Report, judge

NOW = datetime(2026, 12, 6, 21, 0, tzinfo=UTC)


def part(topic: str, number: int, leader: int, replicas: list[int], isr: list[int],
         min_insync: int = 2) -> dict[str, Any]:
    return {"topic": topic, "partition": number, "leader": leader, "replicas": replicas,
            "isr": isr, "min_insync": min_insync, "size": 0}


def cluster(registered: list[int], partitions: list[dict[str, Any]],
            controller: int | None = 1) -> dict[str, Any]:
    return {"controller": controller, "registered": registered, "partitions": partitions,
            "brokers": [{"id": i, "rack": "lab-a", "total": 4 * 2**30, "usable": 3 * 2**30}
                        for i in registered]}


HEALTHY_CLUSTER = cluster([1, 2, 3], [part("kf.events", 0, 1, [1, 2, 3], [1, 2, 3]),
                                      part("kf.events", 1, 2, [2, 3, 1], [2, 3, 1])])


def brokers(view: Mapping[str, Any] | None = HEALTHY_CLUSTER) -> list[BrokerNode]:
    return [BrokerNode(f"kf-kafka{i}", i, f"kf-kafka{i}:9091", True, view) for i in (1, 2, 3)]


def healthy() -> Facts:
    return Facts(
        brokers=brokers(),
        ensemble=[Member("kf-zk1", 1, "follower"), Member("kf-zk2", 2, "leader"),
                  Member("kf-zk3", 3, "follower")],
        kraft=False,
        certificates=[CertificateFile("kf-kafka1", "/etc/kafka/tls/keystore.p12",
                                      NOW + timedelta(days=300))],
        pipelines=[Pipeline("kf-spark-master", "events", "started", "active", 41, 3.0, 1.0, 0)],
        alerts=[Alerts("kf-monitor")],
        renew_days=30, read_at=NOW)


def unhealthy_lines(report: Report) -> dict[str, list[str]]:
    return {s.name: [line.text for line in s.lines if not line.ok]
            for s in report.sections if not s.ok}


def test_a_healthy_platform_has_every_section_healthy() -> None:
    report = judge(healthy())
    assert report.ok
    assert [s.name for s in report.sections] == ["Kafka", "ZooKeeper", "Certificates",
                                                 "Pipeline", "Alerts"]
    kafka = [line.text for line in report.sections[0].lines]
    assert kafka[0] == "active controller: 1 (kf-kafka1)"
    assert "broker 1 (kf-kafka1): registered, rack lab-a, 1 leaders, 2 replicas, log dirs " \
           "1.0 GiB used of 4.0 GiB (75% free)" in kafka


STOPPED = cluster([1, 2], [part("kf.events", 0, 1, [1, 2, 3], [1, 2]),
                           part("kf.events", 1, 2, [2, 3, 1], [2, 1], min_insync=3),
                           part("kf.events", 2, -1, [3], [3])])


@pytest.mark.parametrize(("change", "section", "expected"), [
    # A broker stopped: not registered, its listener closed; its partitions short of a replica.
    ({"brokers": [*brokers(STOPPED)[:2], BrokerNode("kf-kafka3", 3, "kf-kafka3:9091", False)]},
     "Kafka", ["broker 3 (kf-kafka3): not registered (its listener kf-kafka3:9091 is closed)",
               "2 under-replicated partitions: kf.events-0, kf.events-1",
               "1 partitions under min.insync.replicas: kf.events-1",
               "1 offline partitions: kf.events-2"]),
    # A broker host Ansible cannot reach, whose broker is not registered either.
    ({"brokers": [*brokers(STOPPED)[:2],
                  BrokerNode("kf-kafka3", 3, problem="Ansible cannot reach it: refused")]},
     "Kafka", ["broker 3 (kf-kafka3): not registered (Ansible cannot reach it: refused)",
               "2 under-replicated partitions: kf.events-0, kf.events-1",
               "1 partitions under min.insync.replicas: kf.events-1",
               "1 offline partitions: kf.events-2"]),
    # Registered, yet its host does not answer: unhealthy, named.
    ({"brokers": [*brokers()[:2], BrokerNode("kf-kafka3", 3, problem="Ansible cannot reach "
                                                                     "it: timeout")]},
     "Kafka", ["broker 3 (kf-kafka3): registered, rack lab-a, 0 leaders, 2 replicas, log dirs "
               "1.0 GiB used of 4.0 GiB (75% free); its host: Ansible cannot reach it: timeout"]),
    # A log directory with less than a tenth of its disk free; the others, at 10%, are not.
    ({"brokers": brokers({**HEALTHY_CLUSTER, "brokers": [
        {"id": 1, "rack": "lab-a", "total": 100 * 2**30, "usable": 9 * 2**30},
        *({"id": i, "rack": "lab-a", "total": 100 * 2**30, "usable": 10 * 2**30}
          for i in (2, 3))]})},
     "Kafka", ["broker 1 (kf-kafka1): registered, rack lab-a, 1 leaders, 2 replicas, log dirs "
               "91.0 GiB used of 100.0 GiB (9% free); less than 10% free: a full log directory "
               "goes offline with its replicas (MO-16). Lower the retention of the largest "
               "topics or add disk"]),
    ({"brokers": brokers(cluster([1, 2, 3], [], controller=None))},
     "Kafka", ["no active controller"]),
    ({"brokers": [BrokerNode(f"kf-kafka{i}", i, problem="the admin helper gave no answer")
                  for i in (1, 2, 3)]},
     "Kafka", ["no broker could ask the cluster (each broker's line says why)",
               *[f"broker {i} (kf-kafka{i}): the admin helper gave no answer" for i in (1, 2, 3)]]),
    ({"ensemble": [Member("kf-zk1", 1, "follower"), Member("kf-zk2", 2, problem="not serving"),
                   Member("kf-zk3", 3, problem="Ansible cannot reach it: refused")]},
     "ZooKeeper", ["ensemble: 1 of 3 members serving, leader none: no majority, the ensemble "
                   "refuses every write", "member 2 (kf-zk2): not serving",
                   "member 3 (kf-zk3): Ansible cannot reach it: refused"]),
    ({"ensemble": [Member("kf-zk1", 1, "follower"), Member("kf-zk2", 2, "follower"),
                   Member("kf-zk3", 3, "follower")]},
     "ZooKeeper", ["ensemble: 3 of 3 members serving, leader none: not exactly one leader"]),
    ({"certificates": [CertificateFile("kf-zk1", "/etc/zookeeper/tls/cert.pem",
                                       NOW + timedelta(days=12)),
                       CertificateFile("kf-kafka1", "/etc/prometheus/tls/cert.pem",
                                       problem="cannot read it: No such file or directory")]},
     "Certificates", ["kf-zk1 /etc/zookeeper/tls/cert.pem: 12 days left (until 2026-12-18), "
                      "under the 30-day renewal threshold (kafkaform_tls_renew_before_days): "
                      "run the site playbook to renew it (SE-02)",
                      "kf-kafka1 /etc/prometheus/tls/cert.pem: cannot read it: No such file or "
                      "directory"]),
    ({"pipelines": [Pipeline("kf-spark-master", "events", "started", "failed")]},
     "Pipeline", ["events on kf-spark-master: the failed unit kafkaform-pipeline is not active "
                  "(journalctl -u kafkaform-pipeline)"]),
    ({"pipelines": [Pipeline("kf-spark-master", "events", "started", "active", 41, 900.0, 2.0,
                             1500)]},
     "Pipeline", ["events on kf-spark-master: active, batch 41 committed 15 min ago, 1500 "
                  "records behind: no batch for over 5 min while records wait"]),
    ({"pipelines": [Pipeline("kf-spark-master", "events", "started", "active", 41, 900.0, 900.0,
                             0)]},
     "Pipeline", ["events on kf-spark-master: active, batch 41 committed 15 min ago, 0 records "
                  "behind; the driver reported not for 15 min (stalled)"]),
    ({"pipelines": [Pipeline("kf-spark-master", "events", "started",
                             problem="Ansible cannot reach it: refused")]},
     "Pipeline", ["events on kf-spark-master: Ansible cannot reach it: refused"]),
    ({"alerts": [Alerts("kf-monitor", [Alert("KafkaUnderReplicatedPartitions", "critical",
                                             {"instance": "kf-kafka1:7071"}, "3 partitions",
                                             "2026-12-06T20:58:00.123Z")])]},
     "Alerts", ["KafkaUnderReplicatedPartitions [critical] kf-kafka1:7071 since "
                "2026-12-06T20:58:00: 3 partitions"]),
    ({"alerts": [Alerts("kf-monitor", problem="Prometheus did not answer (exit 7: refused)")]},
     "Alerts", ["kf-monitor: Prometheus did not answer (exit 7: refused)"]),
])
def test_each_part_says_what_is_unhealthy(change: dict[str, Any], section: str,
                                          expected: list[str]) -> None:
    report = judge(replace(healthy(), **change))
    assert not report.ok
    assert unhealthy_lines(report) == {section: expected}
    # The unhealthy lines come first in their section.
    lines = next(s for s in report.sections if s.name == section).lines
    assert [line.text for line in lines[:len(expected)]] == expected


@pytest.mark.parametrize("pipeline", [
    # Idle: nothing to read, the driver reporting its idle triggers.
    Pipeline("kf-spark-master", "events", "started", "active", 41, 3600.0, 2.0, 0),
    # Stopped on purpose (spark_pipeline_state: stopped).
    Pipeline("kf-spark-master", "events", "stopped", "inactive"),
    # Records waiting, the last batch a minute old: working through them.
    Pipeline("kf-spark-master", "events", "started", "active", 41, 60.0, 2.0, 80_000),
])
def test_a_pipeline_idle_stopped_on_purpose_or_catching_up_is_healthy(
        pipeline: Pipeline) -> None:
    assert judge(replace(healthy(), pipelines=[pipeline])).ok


def test_the_stale_threshold_is_the_operators() -> None:
    slow = Pipeline("kf-spark-master", "events", "started", "active", 41, 90.0, 2.0, 10)
    assert judge(replace(healthy(), pipelines=[slow])).ok
    assert not judge(replace(healthy(), pipelines=[slow]), stale_s=60).ok


def test_a_broker_whose_helper_predates_status_is_unknown_not_unhealthy() -> None:
    """Until the role installs the new helper, the broker's registration still comes from
    another broker's view; what only its own helper reads is marked unknown."""
    old = BrokerNode("kf-kafka3", 3, outdated=True)
    report = judge(replace(healthy(), brokers=[*brokers()[:2], old], certificates=[
        CertificateFile("kf-kafka3", "/etc/kafka/tls/keystore.p12", problem=OUTDATED)]))
    assert report.ok
    unknown = [line.text for s in report.sections for line in s.lines if line.unknown]
    assert len(unknown) == 2 and all(OUTDATED in text for text in unknown)
    assert unknown[0].startswith("broker 3 (kf-kafka3): registered")


def test_the_kraft_quorum_needs_a_leader_and_a_majority_within_the_lag() -> None:
    nodes = {"1": {"lag": 0, "status": "Leader"}, "2": {"lag": 5000, "status": "Follower"},
             "3": {"lag": 3, "status": "Follower"}}
    quorum = {"leader": "1", "nodes": nodes}
    facts = replace(healthy(), ensemble=[], kraft=True,
                    brokers=[replace(b, quorum=quorum) for b in brokers()])
    report = judge(facts, voters=[1, 2, 3], max_lag=1000)
    assert unhealthy_lines(report) == {"KRaft quorum": ["voter 2: Follower, lag 5000"]}
    texts = [line.text for s in report.sections for line in s.lines]
    assert "quorum: leader 1 (the active controller), 2 of 3 voters within 1000 records" in texts
    # A KRaft broker names any live broker as controller (KIP-590): no such line.
    assert not any(text.startswith("active controller") for text in texts)
    leaderless = {"leader": None, "nodes": nodes}
    report = judge(replace(facts, brokers=[replace(b, quorum=leaderless) for b in brokers()]),
                   voters=[1, 2, 3])
    assert "quorum: leader none (the active controller), 2 of 3 voters within 1000 records" in \
        unhealthy_lines(report)["KRaft quorum"]


def test_the_json_form_carries_each_lines_state_and_figures() -> None:
    stopped = [*brokers(STOPPED)[:2], BrokerNode("kf-kafka3", 3, "kf-kafka3:9091", False)]
    found = judge(replace(healthy(), brokers=stopped)).to_dict()
    assert found["healthy"] is False
    kafka = found["sections"][0]
    assert kafka["name"] == "Kafka" and kafka["healthy"] is False
    first = kafka["lines"][0]
    assert (first["healthy"], first["broker"], first["registered"]) == (False, 3, False)
    counts = {line["text"].split(":")[0]: line.get("count") for line in kafka["lines"]}
    assert counts["2 under-replicated partitions"] == 2
    assert all(s["healthy"] for s in found["sections"][1:])
