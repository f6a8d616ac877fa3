"""`kafkaform status` on answers recorded from the lab (inventory/lab), read by the collection
(kafkaform.status_collect), judged, rendered, and mapped to the command's exit codes.

The recordings (tests/unit/data/status-*.json) are the ansible.posix.json report of one status
read, trimmed to the results' stdout, stderr, rc and msg: one with the lab healthy, one 8 s
after `systemctl stop kafka` on kf-kafka3. kf-kafka1 ran the current admin helper; kf-kafka2 and
kf-kafka3 ran one from before ``status`` (17bf8bb's, put back by hand). Besides the pipeline's
kf.events, the lab had kf.strict: 3 replicas, min.insync.replicas 3. Recorded with:

    report = status_probe.report(Sources(("inventory/lab",)), status_collect.asks(view, cluster))

They hold certificates (public) and the cluster's metadata, no secret.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kafkaform import cli, inventory, model, status_cli, status_collect, status_probe
from kafkaform.status_judge import judge

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
LAB = ROOT / "inventory" / "lab"
#: When the recordings were made: the certificates' days left count from it.
RECORDED = datetime(2026, 12, 7, 1, 25, 7, tzinfo=UTC)


@pytest.fixture(scope="module")
def lab() -> tuple[model.InventoryView, dict[str, Any]]:
    view = inventory.load(inventory.Sources((str(LAB),)))
    return view, model.build(view).to_dict()


def recorded(name: str) -> dict[str, status_probe.Answer]:
    report = json.loads((DATA / f"status-{name}.json").read_text(encoding="utf-8"))
    hosts = list(report["plays"][0]["tasks"][0]["hosts"])
    return status_probe.answers(report, hosts)


def facts_of(name: str, lab: tuple[model.InventoryView, dict[str, Any]]
             ) -> status_collect.Facts:
    view, cluster = lab
    return status_collect.facts(recorded(name), view, cluster, 30, 8.0, RECORDED)


def test_the_lab_asks_each_host_what_its_roles_put_there(
        lab: tuple[model.InventoryView, dict[str, Any]]) -> None:
    asks = status_collect.asks(*lab)
    assert set(asks) == {"kf-zk1", "kf-zk2", "kf-zk3", "kf-kafka1", "kf-kafka2", "kf-kafka3",
                         "kf-spark-master", "kf-spark-worker1", "kf-monitor"}
    assert asks["kf-kafka1"].run == {"kafka": ["/usr/local/sbin/kafkaform-kafka", "status"]}
    assert asks["kf-zk2"].run["srvr"] == ["/usr/local/sbin/zookeeper-4lw", "srvr",
                                          "127.0.0.1:2181"]
    assert asks["kf-zk2"].files == ["/etc/zookeeper/tls/cert.pem", "/etc/prometheus/tls/cert.pem"]
    assert asks["kf-spark-master"].newest == ["/srv/kafkaform/shared/events/checkpoints/records/"
                                              "commits"]
    assert asks["kf-monitor"].run["alerts"][-1] == "https://kf-monitor:9090/api/v1/alerts"


def test_the_healthy_lab_reads_as_healthy(
        lab: tuple[model.InventoryView, dict[str, Any]]) -> None:
    facts = facts_of("healthy", lab)
    first, *older = facts.brokers
    assert (first.host, first.listening, first.problem) == ("kf-kafka1", True, "")
    assert all(b.outdated for b in older)  # their helper predates status
    assert first.cluster is not None and first.cluster["registered"] == [1, 2, 3]
    assert [(m.host, m.mode) for m in facts.ensemble] == [
        ("kf-zk1", "follower"), ("kf-zk2", "follower"), ("kf-zk3", "leader")]
    keystore = next(c for c in facts.certificates if c.host == "kf-kafka1"
                    and c.path == "/etc/kafka/tls/keystore.p12")
    assert keystore.not_after is not None and keystore.not_after.year == 2027
    assert len([c for c in facts.certificates if c.not_after]) == 16
    # What each Spark web UI serves on its TLS port: the master's, its history server's, the
    # worker's.
    assert sorted(c.path for c in facts.certificates if c.path.startswith("https://")) == [
        "https://kf-spark-master:18480", "https://kf-spark-master:8480",
        "https://kf-spark-worker1:8481"]
    (pipeline,) = facts.pipelines
    assert (pipeline.unit, pipeline.batch, pipeline.behind) == ("active", 0, 0)
    assert pipeline.reported_age_s is not None and pipeline.reported_age_s < 60
    assert [(a.host, a.firing, a.problem) for a in facts.alerts] == [("kf-monitor", [], "")]
    report = judge(facts)
    assert report.ok, status_cli.text(report, "inventory/lab")


def test_the_stopped_broker_is_named_with_its_partitions(
        lab: tuple[model.InventoryView, dict[str, Any]]) -> None:
    report = judge(facts_of("broker-stopped", lab))
    assert not report.ok
    kafka = report.sections[0]
    bad = [line.text for line in kafka.lines if not line.ok]
    assert bad[0] == "broker 3 (kf-kafka3): not registered (its broker process is down or fenced)"
    assert bad[1] == ("8 under-replicated partitions: kf.strict-0, kf.strict-1, kf.events-0, "
                      "kf.events-5, kf.events-4, kf.events-1, kf.events-2, kf.events-3")
    # kf.strict: 3 replicas, min.insync.replicas 3 (made for the recording).
    assert bad[2] == "2 partitions under min.insync.replicas: kf.strict-0, kf.strict-1"
    assert [s.name for s in report.sections if not s.ok] == ["Kafka"]
    text = status_cli.text(report, "inventory/lab")
    assert text.splitlines()[0].startswith("kafkaform status of inventory/lab: UNHEALTHY, 3 "
                                           "problem(s)")
    assert "Kafka  [unhealthy]\n  !!  broker 3 (kf-kafka3): not registered" in text
    assert "\n  ok  active controller: 2 (kf-kafka2)\n" in text
    assert "\n  ??  broker 2 (kf-kafka2): registered" in text


@pytest.mark.parametrize(("name", "code", "healthy"), [("healthy", 0, True),
                                                       ("broker-stopped", 1, False)])
def test_the_exit_code_and_the_json_say_whether_it_is_healthy(
        name: str, code: int, healthy: bool, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(status_probe, "ask_hosts", lambda _sources, _asks: recorded(name))
    monkeypatch.setattr(status_cli, "now", lambda: RECORDED)
    assert cli.main(["status", "-i", str(LAB), "--format", "json"]) == code
    found = json.loads(capsys.readouterr().out)
    assert found["healthy"] is healthy and found["inventory"] == str(LAB)
    assert [s["name"] for s in found["sections"]] == ["Kafka", "ZooKeeper", "Certificates",
                                                      "Pipeline", "Alerts"]


def test_an_unreachable_host_is_unhealthy_and_named(
        lab: tuple[model.InventoryView, dict[str, Any]]) -> None:
    answers = recorded("healthy")
    answers["kf-zk2"] = status_probe.Answer("kf-zk2", "Ansible cannot reach it: timed out")
    view, cluster = lab
    report = judge(status_collect.facts(answers, view, cluster, 30, 8.0, RECORDED))
    bad = {s.name: [line.text for line in s.lines if not line.ok] for s in report.sections}
    assert bad["ZooKeeper"] == ["member 2 (kf-zk2): Ansible cannot reach it: timed out"]
    assert bad["Certificates"] == [
        "kf-zk2 /etc/zookeeper/tls/cert.pem: Ansible cannot reach it: timed out",
        "kf-zk2 /etc/prometheus/tls/cert.pem: Ansible cannot reach it: timed out"]


def test_a_bad_inventory_is_an_input_error(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["status", "-i", str(tmp_path / "missing.yml")]) == 2
    assert "kafkaform status: " in capsys.readouterr().err
    assert cli.main(["status", "-i", str(LAB), "--ask-vault-pass"]) == 2
    assert "--vault-password-file" in capsys.readouterr().err


def test_watch_redraws_until_interrupted(monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """--watch reads again and again; Ctrl-C ends it with 130, like every command."""
    reads: list[int] = []

    def ask(_sources: object, _asks: object) -> dict[str, status_probe.Answer]:
        reads.append(1)
        if len(reads) == 3:
            raise KeyboardInterrupt
        return recorded("healthy")

    monkeypatch.setattr(status_probe, "ask_hosts", ask)
    monkeypatch.setattr(status_cli, "now", lambda: RECORDED)
    assert cli.main(["status", "-i", str(LAB), "--watch", "0.01"]) == 130
    assert capsys.readouterr().out.count("kafkaform status of ") == 2


def test_dedicated_controllers_are_asked_about_themselves_alone() -> None:
    """The KRaft lab's 3 dedicated controllers: each asked its listener and its keystore's
    certificate (the quorum is read through the brokers); one answers with its listener closed,
    one's helper predates the command, one is not reached: each is named."""
    view = inventory.load(inventory.Sources((str(ROOT / "inventory" / "lab-kraft"),)))
    cluster = model.build(view).to_dict()
    asks = status_collect.asks(view, cluster)
    for host in ("kf-ctl1", "kf-ctl2", "kf-ctl3"):
        assert asks[host].run == {"controller_node": ["/usr/local/sbin/kafkaform-kafka", "node"]}
    pem = recorded("healthy")["kf-kafka1"].tool("kafka").json()["certificate"]
    refusal = ("usage: kafkaform-kafka ...\nkafkaform-kafka: error: argument command: invalid "
               "choice: 'node' (choose from 'zk-state', 'describe')")
    answers = {host: status_probe.Answer(host) for host in asks}
    answers["kf-ctl1"] = status_probe.Answer("kf-ctl1", run={"controller_node": (
        status_probe.Tool(0, json.dumps({"listener": "kf-ctl1:9094", "listening": False,
                                         "certificate": pem}) + "\n", ""))})
    answers["kf-ctl2"] = status_probe.Answer("kf-ctl2", run={"controller_node": (
        status_probe.Tool(2, "", refusal))})
    answers["kf-ctl3"] = status_probe.Answer("kf-ctl3",
                                             problem="Ansible cannot reach it: timed out")
    facts = status_collect.facts(answers, view, cluster, 30, 1.0, RECORDED)
    found = {c.host: c for c in facts.certificates
             if c.path == "/etc/kafka/tls/keystore.p12" and c.host.startswith("kf-ctl")}
    assert found["kf-ctl1"].problem == "" and found["kf-ctl1"].not_after is not None
    assert found["kf-ctl2"].problem == status_collect.OUTDATED
    assert found["kf-ctl3"].problem == "Ansible cannot reach it: timed out"
    quorum = {line.text: line.ok for s in judge(facts, [3001, 3002, 3003]).sections
              if s.name == "KRaft quorum" for line in s.lines}
    assert quorum["controller 3001 (kf-ctl1): its listener kf-ctl1:9094 is closed (its process "
                  "is down)"] is False
    assert quorum[f"controller 3002 (kf-ctl2): {status_collect.OUTDATED}"] is True
    assert quorum["controller 3003 (kf-ctl3): Ansible cannot reach it: timed out"] is False
