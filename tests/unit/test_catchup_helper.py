"""The admin helper's catch-up of a replaced broker (roles/kafka_broker/files/kafkaform_catchup.py,
OP-09), on a scripted stand-in for kafka-python's admin client: the throttled-replicas lists it
computes, the rates it sets where Kafka takes them (a running broker's on it, a stopped one's on
the active controller), a rerun that changes nothing, the clear that removes exactly what it set,
and the progress it reports."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

FILES = Path(__file__).resolve().parents[2] / "roles/kafka_broker/files"
SPREAD = [[1, 3, 5], [2, 4, 6], [3, 5, 1], [4, 6, 2], [5, 1, 3], [6, 2, 4]]
MIB = 2**20


@pytest.fixture
def catchup(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ModuleType:
    monkeypatch.syspath_prepend(str(FILES))
    sys.modules.pop("kafkaform_catchup", None)
    import kafkaform_catchup  # pylint: disable=import-outside-toplevel

    monkeypatch.setattr(kafkaform_catchup, "STATE", str(tmp_path / "catchup.json"))
    return kafkaform_catchup


class Admin:
    """kafka-python's admin client as the catch-up uses it: kf.orders over SPREAD, the brokers
    ``live`` running (6 is not unless named), each replica ``copied`` bytes of 100 MiB."""

    def __init__(self, live: set[int], isr_without: set[int] = frozenset({6}),
                 topic_configs: dict[str, str] | None = None) -> None:
        self.live, self.isr_without = live, isr_without
        self.topic = dict(topic_configs or {})
        self.rates: dict[str, dict[str, str]] = {}
        self.altered: list[tuple[str, str, dict[str, Any]]] = []
        self.copied = {b: 100 * MIB for b in range(1, 7)} | {6: 40 * MIB}

    def describe_cluster(self) -> dict[str, Any]:
        return {"controller_id": 3001, "brokers": [{"broker_id": b} for b in sorted(self.live)]}

    def describe_topics(self) -> list[dict[str, Any]]:
        isr = [[b for b in r if b not in self.isr_without] for r in SPREAD]
        return [{"name": "kf.orders", "partitions": [
            {"partition_index": i, "leader_id": isr[i][0], "replica_nodes": r,
             "isr_nodes": isr[i]} for i, r in enumerate(SPREAD)]}]

    def list_topics(self) -> list[str]:
        return ["kf.orders"]

    def describe_configs(self, resources: list[Any], config_filter: str = "") -> dict[str, Any]:
        found: dict[str, Any] = {"topic": {}, "broker": {}}
        for r in resources:
            if r.resource_type.name == "TOPIC":
                found["topic"][r.name] = {k: {"value": v} for k, v in self.topic.items()}
            else:
                assert int(r.name) in self.live, "kafka-python sends it to that broker"
                found["broker"][r.name] = {k: {"value": v}
                                           for k, v in self.rates.get(r.name, {}).items()}
        return found

    def alter_configs(self, resources: list[Any], **kwargs: Any) -> dict[str, Any]:
        assert kwargs == {"raise_on_unknown": False, "incremental": True}
        for r in resources:
            self.altered.append((r.resource_type.name, r.name, dict(r.configs)))
            held = self.topic if r.resource_type.name == "TOPIC" else \
                self.rates.setdefault(r.name, {})
            if r.resource_type.name == "BROKER":
                assert int(r.name) in self.live, "kafka-python sends it to that broker"
            for key, value in r.configs.items():
                if value == ("DELETE", None):
                    held.pop(key, None)
                else:
                    held[key] = str(value)
        return {r.resource_type.name.lower(): {r.name: "OK"} for r in resources}

    def describe_log_dirs(self, brokers: list[int]) -> list[dict[str, Any]]:
        (broker,) = brokers
        if broker not in self.live:
            raise RuntimeError("not running")
        return [{"broker": broker, "log_dirs": [{"error_code": 0, "log_dir": "/data",
                                                 "topics": [{"name": "kf.orders", "partitions": [
            {"partition_index": i, "partition_size": self.copied[broker]}
            for i, r in enumerate(SPREAD) if broker in r]}]}]}]


def cluster(catchup: ModuleType, admin: Admin, monkeypatch: pytest.MonkeyPatch,
            on_controller: list[tuple[str, dict[str, Any]]]) -> Any:
    def alter_on_controller(_admin: Any, controllers: list[str], broker: str,
                            changes: dict[str, Any], what: str) -> bool:
        assert controllers == ["c1:9093"]
        on_controller.append((broker, dict(changes)))
        return True

    monkeypatch.setattr(catchup, "alter_on_controller", alter_on_controller)
    return catchup.Cluster(admin, ["c1:9093"], None)


def test_the_lists_throttle_the_replaced_brokers_replicas_and_every_leader_they_follow(
        catchup: ModuleType) -> None:
    parts = [{"topic": "kf.orders", "partition": i, "replicas": r} for i, r in enumerate(SPREAD)]
    parts.append({"topic": "kf.other", "partition": 0, "replicas": [1, 2, 3]})
    assert catchup.throttle_lists(parts, [6]) == {"kf.orders": {
        "leader.replication.throttled.replicas": ["1:2", "1:4", "3:2", "3:4", "5:2", "5:4"],
        "follower.replication.throttled.replicas": ["1:6", "3:6", "5:6"]}}
    both = catchup.throttle_lists(parts, [4, 6])["kf.orders"]
    assert both["follower.replication.throttled.replicas"] == ["1:4", "1:6", "3:4", "3:6",
                                                                "5:4", "5:6"]
    assert both["leader.replication.throttled.replicas"] == ["1:2", "3:2", "5:2"]


@pytest.mark.parametrize(("value", "ours", "added", "removed"), [
    (None, ["1:6"], "1:6", None),
    ("0:1,0:2", ["1:6", "0:2"], "0:1,0:2,1:6", "0:1"),
    ("*", ["1:6"], None, None),  # every replica is throttled already: nothing to add
    ("1:6", ["1:6"], None, ""),  # ours alone: deleted
])
def test_the_lists_are_merged_with_what_is_there_and_only_ours_are_removed(
        catchup: ModuleType, value: str | None, ours: list[str], added: str | None,
        removed: str | None) -> None:
    assert catchup.merged(value, ours) == added
    assert catchup.without(value, ours) == removed


def test_a_stopped_brokers_rate_goes_to_the_controller_and_a_rerun_changes_nothing(
        catchup: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    admin, on_controller = Admin(live={1, 2, 3, 4, 5}), []
    found = catchup.throttle(cluster(catchup, admin, monkeypatch, on_controller), ["6"],
                             2 * MIB, 600, False, ingress=lambda: {1: 3.0 * MIB})
    assert found["changed"] == [
        "kf.orders follower.replication.throttled.replicas",
        "kf.orders leader.replication.throttled.replicas",
        f"broker 2 leader.replication.throttled.rate={2 * MIB}",
        f"broker 4 leader.replication.throttled.rate={2 * MIB}",
        f"broker 6 follower.replication.throttled.rate={2 * MIB}"]
    assert "below what broker 1 takes in now (3.0 MiB/s)" in found["warning"]
    assert admin.topic == {"leader.replication.throttled.replicas": "1:2,1:4,3:2,3:4,5:2,5:4",
                           "follower.replication.throttled.replicas": "1:6,3:6,5:6"}
    assert admin.rates == {"2": {"leader.replication.throttled.rate": str(2 * MIB)},
                           "4": {"leader.replication.throttled.rate": str(2 * MIB)}}
    assert on_controller == [("6", {"follower.replication.throttled.rate": 2 * MIB})]
    again = catchup.throttle(cluster(catchup, admin, monkeypatch, on_controller), ["6"],
                             2 * MIB, 600, False, ingress=lambda: {})
    assert again == {"changed": [], "warning": "", "notes": []}
    assert len(on_controller) == 1


def test_a_dry_run_reports_and_changes_nothing(catchup: ModuleType,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    admin, on_controller = Admin(live={1, 2, 3, 4, 5}), []
    c = cluster(catchup, admin, monkeypatch, on_controller)
    found = catchup.throttle(c, ["6"], MIB, 600, True)
    assert len(found["changed"]) == 5
    assert (admin.altered, on_controller, Path(catchup.STATE).exists()) == ([], [], False)
    assert catchup.clear(c, True) == {"cleared": []}


def test_the_clear_removes_what_it_set_and_leaves_an_operators_entries(
        catchup: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    admin = Admin(live={1, 2, 3, 4, 5},
                  topic_configs={"leader.replication.throttled.replicas": "0:1"})
    on_controller: list[tuple[str, dict[str, Any]]] = []
    catchup.throttle(cluster(catchup, admin, monkeypatch, on_controller), ["6"], MIB, 600, False)
    admin.live.add(6)  # the new host registered: its own rate is deleted on it
    admin.rates["6"] = {"follower.replication.throttled.rate": str(MIB)}
    c = cluster(catchup, admin, monkeypatch, on_controller)
    assert catchup.clear(c, True)["cleared"]  # a dry run says what it would remove
    assert admin.topic["follower.replication.throttled.replicas"] == "1:6,3:6,5:6"
    found = catchup.clear(c, False)
    assert found["cleared"] == [
        "kf.orders follower.replication.throttled.replicas",
        "kf.orders leader.replication.throttled.replicas",
        "broker 2 leader.replication.throttled.rate",
        "broker 4 leader.replication.throttled.rate",
        "broker 6 follower.replication.throttled.rate"]
    assert admin.topic == {"leader.replication.throttled.replicas": "0:1"}
    assert admin.rates == {"2": {}, "4": {}, "6": {}}
    assert catchup.clear(c, False) == {"cleared": []}  # a rerun: nothing left


def test_progress_counts_the_partitions_out_of_sync_and_the_bytes_they_lack(
        catchup: ModuleType) -> None:
    admin = Admin(live={1, 2, 3, 4, 5, 6})
    found = catchup.progress(admin, ["6"])
    assert (found["done"], found["partitions"], found["partitions_left"]) == (False, 3, 3)
    assert found["bytes_left"] == 3 * 60 * MIB
    assert found["said"] == "3 of 3 partitions not in sync yet, 180.0 MiB left to copy"
    admin.isr_without = set()
    assert catchup.progress(admin, ["6"])["said"] == "broker(s) 6 in sync on all 3 partitions"


def test_progress_before_the_host_registers_counts_every_byte(catchup: ModuleType) -> None:
    found = catchup.progress(Admin(live={1, 2, 3, 4, 5}), ["6"])
    assert found["bytes_left"] == 3 * 100 * MIB
    assert found["said"].endswith("; broker(s) 6 not registered yet")


def test_the_wait_stops_past_the_deadline_saying_what_to_raise(
        catchup: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    catchup.throttle(cluster(catchup, Admin(live={1, 2, 3, 4, 5}), monkeypatch, []), ["6"],
                     MIB, 0, False, clock=lambda: 100.0)
    with pytest.raises(SystemExit, match="Raise kafka_broker_reassignment_throttle_mb_s"):
        catchup.wait(Admin(live={1, 2, 3, 4, 5, 6}), ["6"], 30, sleep=lambda _s: None,
                     clock=lambda: 200.0)
