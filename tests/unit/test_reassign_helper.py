"""The admin helper's replica moves (roles/kafka_broker/files/kafkaform_reassign.py, OP-06), on a
scripted stand-in for Kafka's tools: the throttle set at the start and cleared at the end, the
progress in partitions and bytes, the warning of a throttle below the ingress, and the moves
cancelled (throttles cleared) past their deadline. Kafka's own answers were checked on a 4.4.0
cluster (benchmarks/day_two.py)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

FILES = Path(__file__).resolve().parents[2] / "roles/kafka_broker/files"
MIB = 1024 * 1024
MOVES = {"version": 1, "partitions": [
    {"topic": "kf.orders", "partition": 0, "replicas": [1, 2, 5]},
    {"topic": "kf.orders", "partition": 1, "replicas": [2, 4, 5]}]}


@pytest.fixture
def reassign(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ModuleType:
    monkeypatch.syspath_prepend(str(FILES))
    sys.modules.pop("kafkaform_reassign", None)
    import kafkaform_reassign  # pylint: disable=import-outside-toplevel

    monkeypatch.setattr(kafkaform_reassign, "MOVES", str(tmp_path / "moves.json"))
    monkeypatch.setattr(kafkaform_reassign, "DEADLINE", str(tmp_path / "moves.deadline"))
    return kafkaform_reassign


class Out:
    def __init__(self, stdout: str, returncode: int = 0, stderr: str = "") -> None:
        self.stdout = stdout
        self.returncode = returncode
        self.stderr = stderr


class LogDirsAdmin:
    """The admin client's describe_log_dirs as kafka-python answers it, each broker's replica
    sizes in one log directory (``sizes`` None: no broker answers in time, as seen under a
    reassignment's load); ``answers`` replays recorded answers by broker instead."""

    def __init__(self, sizes: dict[tuple[int, str], int] | None,
                 answers: dict[int, list[dict[str, Any]]] | None = None) -> None:
        self.sizes = sizes
        self.answers = answers
        self.asked: list[int] = []

    def describe_cluster(self) -> dict[str, Any]:
        ids = sorted(self.answers or {b for b, _part in self.sizes or {}})
        return {"controller_id": 3001, "brokers": [{"broker_id": b, "is_fenced": False}
                                                   for b in ids]}

    def describe_log_dirs(self, brokers: list[int]) -> list[dict[str, Any]]:
        (broker,) = brokers
        self.asked.append(broker)
        if self.answers is not None:
            return self.answers[broker]
        if self.sizes is None:
            raise OSError(f"broker {broker} did not answer in time")
        topics: dict[str, list[dict[str, Any]]] = {}
        for (b, part), size in self.sizes.items():
            topic, _dash, number = part.rpartition("-")
            if b == broker:
                topics.setdefault(topic, []).append({
                    "partition_index": int(number), "partition_size": size, "offset_lag": 0,
                    "is_future_key": False})
        return [{"broker": broker, "log_dirs": [
            {"error_code": 0, "log_dir": "/data", "total_bytes": 10**9, "usable_bytes": 10**8,
             "topics": [{"name": t, "partitions": p} for t, p in topics.items()]}]}]


class Session:
    """kafkaform_admin.Session's shape: the admin client, closed at the end of a ``with``."""

    def __init__(self, admin: Any) -> None:
        self.admin = admin
        self.closed = False

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.closed = True


class Kafka:
    """Kafka's tools as the helper runs them: each call recorded, answered from a script."""

    def __init__(self, verify: list[list[str]],
                 sizes: dict[tuple[int, str], int] | None) -> None:
        self.calls: list[list[str]] = []
        self.verify = verify  # the partitions still moving at each --verify
        self.log_dirs = LogDirsAdmin(sizes)
        self.deleted: set[str] = set()  # topics deleted since the moves started

    def session(self) -> Session:
        return Session(self.log_dirs)

    def admin(self) -> list[str]:
        return ["--bootstrap-server", "k1:9092"]

    def run(self, main_class: str, *args: str, check: bool = True) -> Out:
        self.calls.append([main_class.rsplit(".", 1)[-1], *args[2:]])
        if "--reassignment-json-file" in args:
            moved = {p["topic"] for p in json.loads(Path(args[3]).read_text())["partitions"]}
            for topic in sorted(moved & self.deleted):
                return Out("", 1, f"Error: The topic '{topic}' does not exist.")
        if "--verify" in args:
            if self.verify[0] == ["cancelled"]:
                if len(self.verify) > 1:
                    self.verify.pop(0)
                return Out("Reassignment of partition kf.orders-0 is completed.\nThere is no "
                           "active reassignment of partition kf.orders-1, but replica set is "
                           "2,4,6 rather than 2,4,5.\n")
            still = self.verify.pop(0) if len(self.verify) > 1 else self.verify[0]
            return Out("Status of partition reassignment:\n" + "\n".join(
                f"Reassignment of partition kf.orders-{n} is "
                f"{'still in progress' if f'kf.orders-{n}' in still else 'completed'}."
                for n in (0, 1)))
        return Out("")


def test_moves_start_throttled_then_report_what_is_left_then_clear_the_throttles(
        reassign: ModuleType) -> None:
    kafka = Kafka(verify=[["kf.orders-1"], ["kf.orders-1"], []],
                  sizes={(2, "kf.orders-1"): 100 * MIB, (4, "kf.orders-1"): 100 * MIB,
                         (5, "kf.orders-1"): 40 * MIB, (6, "kf.orders-1"): 100 * MIB})
    started = reassign.start(kafka, MOVES, 10 * MIB, 600, clock=lambda: 1000.0,
                             ingress=lambda tools: {1: 1.0 * MIB})
    assert started == {"started": 2, "warning": ""}
    assert kafka.calls[-1] == ["ReassignPartitionsCommand", "--reassignment-json-file",
                               reassign.MOVES, "--execute", "--throttle", str(10 * MIB),
                               "--replica-alter-log-dirs-throttle", str(10 * MIB)]
    assert json.loads(Path(reassign.MOVES).read_text()) == MOVES
    # A watch of 0 s: one look, partition 1 still copies 60 MiB to broker 5.
    left = reassign.wait(kafka, 0, clock=lambda: 1001.0)
    assert left == {"done": False, "partitions_left": 1, "partitions": 2,
                    "bytes_left": 60 * MIB,
                    "said": "1 of 2 partitions still moving, 60.0 MiB left to copy"}
    # The sizes asked of the moves' brokers only, by the admin client: no JVM started.
    assert kafka.log_dirs.asked == [1, 2, 4, 5]
    assert not any(c[0] == "LogDirsCommand" for c in kafka.calls)
    assert all("--preserve-throttles" in c for c in kafka.calls if "--verify" in c)
    # Done: a --verify without --preserve-throttles clears them, and the moves are forgotten.
    kafka.calls.clear()
    done = reassign.wait(kafka, 30, sleep=lambda s: None, clock=lambda: 1002.0)
    assert done == {"done": True, "partitions_left": 0, "bytes_left": 0, "partitions": 2}
    assert kafka.calls[-1][-1] == "--verify"
    assert not Path(reassign.MOVES).exists() and not Path(reassign.DEADLINE).exists()
    assert reassign.wait(kafka, 30)["done"] is True  # nothing in flight: done at once


def test_sizes_a_broker_does_not_give_leave_the_bytes_unknown_and_the_moves_going(
        reassign: ModuleType) -> None:
    kafka = Kafka(verify=[["kf.orders-0"]], sizes=None)
    assert reassign.ingress_per_broker(kafka, sleep=lambda s: None) == {}
    started = reassign.start(kafka, MOVES, MIB, 600, clock=lambda: 1000.0,
                             ingress=lambda t: reassign.ingress_per_broker(t, sleep=lambda s: None))
    assert started == {"started": 2, "warning": ""}
    assert reassign.wait(kafka, 0, clock=lambda: 1001.0)["said"] == (
        "1 of 2 partitions still moving, bytes left unknown (a broker did not say)")
    assert Path(reassign.MOVES).exists()


def test_moves_cancelled_outside_the_run_are_never_taken_for_done(reassign: ModuleType) -> None:
    """Kafka's --verify says "no active reassignment" of a partition left where it was: the run
    stops (no broker may leave on it) and clears the throttles."""
    kafka = Kafka(verify=[["cancelled"]], sizes={})
    reassign.start(kafka, MOVES, MIB, 600, clock=lambda: 1000.0, ingress=lambda tools: {})
    with pytest.raises(SystemExit, match=r"cancelled outside this run \(kf\.orders-1 on 2,4,6, "
                                         r"not 2,4,5\)"):
        reassign.wait(kafka, 30, sleep=lambda s: None, clock=lambda: 1001.0)
    assert kafka.calls[-1][-1] == "--cancel"
    assert not Path(reassign.MOVES).exists()
    assert sum("--verify" in c for c in kafka.calls) == reassign.ABANDONED_LOOKS


def test_a_move_that_only_looks_cancelled_while_a_broker_catches_up_is_done(
        reassign: ModuleType) -> None:
    """--verify asks the controller whether a move is in flight and a broker for the replicas:
    just after a move completes, the broker may still list the replica that left."""
    kafka = Kafka(verify=[["cancelled"], []], sizes={})
    reassign.start(kafka, MOVES, MIB, 600, clock=lambda: 1000.0, ingress=lambda tools: {})
    paused: list[float] = []
    assert reassign.wait(kafka, 30, sleep=paused.append, clock=lambda: 1001.0)["done"] is True
    assert paused == [reassign.ABANDONED_PAUSE_S]
    assert not any(c[-1] == "--cancel" for c in kafka.calls)


def test_moves_of_a_topic_deleted_since_are_dropped_not_stuck(reassign: ModuleType) -> None:
    """Kafka refuses a --verify or --cancel naming a deleted topic: its partitions are dropped
    from the moves in flight, the rest verified or cancelled."""
    moves = {"version": 1, "partitions": [*MOVES["partitions"],
                                          {"topic": "gone", "partition": 0, "replicas": [1]}]}
    kafka = Kafka(verify=[[]], sizes={})
    reassign.start(kafka, moves, MIB, 600, clock=lambda: 1000.0, ingress=lambda tools: {})
    kafka.deleted.add("gone")
    assert reassign.wait(kafka, 0, clock=lambda: 1001.0)["done"] is True
    reassign.start(kafka, moves, MIB, 600, clock=lambda: 1000.0, ingress=lambda tools: {})
    assert reassign.cancel(kafka) == {"cancelled": 3}
    assert kafka.calls[-1][-1] == "--cancel" and not Path(reassign.MOVES).exists()
    kafka.deleted.add("kf.orders")
    reassign.start(kafka, moves, MIB, 600, clock=lambda: 1000.0, ingress=lambda tools: {})
    calls = len(kafka.calls)
    assert reassign.wait(kafka, 0, clock=lambda: 1001.0)["done"] is True  # nothing left to ask
    assert len(kafka.calls) == calls + 2  # refused twice, then nothing to run


def test_moves_past_their_deadline_are_cancelled_and_the_run_says_what_to_do(
        reassign: ModuleType) -> None:
    kafka = Kafka(verify=[["kf.orders-0", "kf.orders-1"]], sizes={})
    reassign.start(kafka, MOVES, MIB, 60, clock=lambda: 1000.0, ingress=lambda tools: {})
    with pytest.raises(SystemExit, match=r"2 of 2 partitions were still moving at the deadline "
                                         r"\(kf\.orders-0, kf\.orders-1\): the moves were "
                                         r"cancelled and their throttles cleared"):
        reassign.wait(kafka, 30, sleep=lambda s: None, clock=lambda: 1061.0)
    assert kafka.calls[-1][-1] == "--cancel"
    assert not Path(reassign.MOVES).exists()


def test_a_dry_run_looks_once_and_neither_clears_cancels_nor_forgets(
        reassign: ModuleType) -> None:
    """--check's look at the moves an interrupted run left: what a real run would wait for, the
    moves' targets (taken as done by the plan), and the throttles and the record left as they
    were, done or not, past the deadline or cancelled outside the run."""
    kafka = Kafka(verify=[["kf.orders-1"]],
                  sizes={(2, "kf.orders-1"): 100 * MIB, (4, "kf.orders-1"): 100 * MIB,
                         (5, "kf.orders-1"): 40 * MIB})
    reassign.start(kafka, MOVES, MIB, 60, clock=lambda: 1000.0, ingress=lambda tools: {})
    kafka.calls.clear()
    looked = reassign.wait(kafka, 30, sleep=lambda s: pytest.fail("a dry run waited"),
                           clock=lambda: 1001.0, dry_run=True)
    assert looked == {
        "done": False, "dry_run": True, "partitions": 2, "partitions_left": 1,
        "bytes_left": 60 * MIB, "in_flight": MOVES["partitions"],
        "said": "1 of 2 partitions an interrupted run moves are still moving, 60.0 MiB left to "
                "copy: a real run waits for them, then clears their throttles (dry run: nothing "
                "changed)"}
    assert [c for c in kafka.calls if "--verify" in c] == [
        ["ReassignPartitionsCommand", "--reassignment-json-file", reassign.MOVES, "--verify",
         "--preserve-throttles"]]
    kafka.verify = [[]]
    kafka.calls.clear()
    done = reassign.wait(kafka, 30, clock=lambda: 1002.0, dry_run=True)
    assert (done["done"], done["partitions_left"], done["bytes_left"]) == (True, 0, 0)
    assert done["said"].startswith("the 2 partition moves an interrupted run left are done: a "
                                   "real run clears their throttles")
    assert all("--preserve-throttles" in c for c in kafka.calls if "--verify" in c)
    assert Path(reassign.MOVES).exists() and Path(reassign.DEADLINE).exists()
    kafka.verify = [["kf.orders-0"]]
    with pytest.raises(SystemExit, match="past the deadline: a real run cancels them"):
        reassign.wait(kafka, 30, clock=lambda: 1061.0, dry_run=True)
    kafka.verify = [["cancelled"]]
    with pytest.raises(SystemExit, match=r"cancelled outside this run .*dry run: nothing was "
                                         r"cancelled"):
        reassign.wait(kafka, 30, sleep=lambda s: None, clock=lambda: 1001.0, dry_run=True)
    assert not any(c[-1] == "--cancel" for c in kafka.calls)
    assert json.loads(Path(reassign.MOVES).read_text()) == MOVES
    Path(reassign.MOVES).unlink()
    assert reassign.wait(kafka, 30, dry_run=True)["in_flight"] == []


def test_a_dry_run_says_when_a_broker_did_not_give_the_bytes_left(reassign: ModuleType) -> None:
    assert reassign.dry_run_answer(MOVES, ["kf.orders-0"], None)["said"].startswith(
        "1 of 2 partitions an interrupted run moves are still moving, bytes left unknown")


def test_no_second_move_starts_while_one_is_in_flight_and_none_starts_for_nothing(
        reassign: ModuleType) -> None:
    kafka = Kafka(verify=[[]], sizes={})
    assert reassign.start(kafka, {"version": 1, "partitions": []}, MIB, 60) == \
        {"started": 0, "warning": ""}
    assert kafka.calls == []
    reassign.start(kafka, MOVES, MIB, 60, ingress=lambda tools: {})
    with pytest.raises(SystemExit, match="still in flight"):
        reassign.start(kafka, MOVES, MIB, 60, ingress=lambda tools: {})
    assert reassign.cancel(kafka) == {"cancelled": 2}
    assert reassign.cancel(kafka) == {"cancelled": 0}


def test_a_throttle_below_a_brokers_ingress_is_warned_of_by_name(reassign: ModuleType) -> None:
    sizes = {(3, "kf.orders-0"): 0}

    def grow(seconds: float) -> None:
        sizes[(3, "kf.orders-0")] = 30 * MIB  # 30 MiB in the sample of 5 s: 6 MiB/s

    kafka = Kafka(verify=[[]], sizes=sizes)
    clock = iter([0.0, 5.0])
    ingress = reassign.ingress_per_broker(kafka, sleep=grow, clock=lambda: next(clock))
    assert ingress == {3: 6 * MIB}
    assert reassign.throttle_warning(5 * MIB, ingress) == (
        "the reassignment throttle, 5.0 MiB/s, is below what broker 3 takes in now (6.0 MiB/s): "
        "its new replicas may never catch up. Raise kafka_broker_reassignment_throttle_mb_s "
        "above the brokers' ingress, or move while the load is lower (OP-06)")
    assert reassign.throttle_warning(8 * MIB, ingress) == ""


class CordonAdmin:
    """kafka-python's admin client as the cordon commands use it, on brokers 1 to 6 with
    ``live`` running, ``registered`` known to the controllers, and the configs each holds. A
    running broker answers its own configs; a request sent to a node by name reaches the
    controller that node names (c1, c2, c3; c2 active)."""

    def __init__(self, live: set[str], registered: set[str], cordoned: dict[str, str]) -> None:
        self.live, self.registered, self.cordoned = live, registered, dict(cordoned)
        self.altered: list[tuple[str, str, object]] = []
        nodes: dict[str, Any] = {}
        self._manager = SimpleNamespace(cluster=SimpleNamespace(_coordinator_brokers=nodes),
                                        send=self._send, run=lambda coro: asyncio.run(coro()))

    def describe_configs(self, resources: list[Any]) -> dict[str, Any]:
        for r in resources:
            if r.name not in self.live:
                raise RuntimeError(f"UnknownBrokerIdError: {r.name}")  # kafka-python's
        return {"broker": {r.name: ({"cordoned.log.dirs": {"value": self.cordoned[r.name]}}
                                    if r.name in self.cordoned else {}) for r in resources}}

    def _answer(self, node: str, resource: Any) -> str:
        value = resource.configs["cordoned.log.dirs"]
        self.altered.append((node, resource.name, value))
        if node not in ("broker", "c2"):
            return "[Error 41] NotControllerError: The active controller appears to be 3002"
        if resource.name not in self.registered:
            return "[Error 102] BrokerIdNotRegisteredError: No node with id 6 found."
        if value == "*":
            self.cordoned[resource.name] = value
        else:
            self.cordoned.pop(resource.name, None)
        return "OK"

    def alter_configs(self, resources: list[Any], **kwargs: Any) -> dict[str, Any]:
        assert kwargs == {"raise_on_unknown": False, "incremental": True}
        assert all(r.name in self.live for r in resources)  # kafka-python: to the broker itself
        return {"broker": {r.name: self._answer("broker", r) for r in resources}}

    @staticmethod
    def _alter_configs_request(resources: list[Any], validate_only: bool,
                               incremental: bool) -> list[Any]:
        assert (validate_only, incremental) == (False, True)
        return resources

    @staticmethod
    def _alter_configs_process_responses(responses: dict[str, str]) -> dict[str, Any]:
        return {"broker": responses}

    async def _send(self, request: list[Any], node_id: str) -> Any:
        host = self._manager.cluster._coordinator_brokers[node_id].host
        return SimpleNamespace(responses={r.name: self._answer(host, r) for r in request})


CONTROLLERS = ["c1:9094", "c2:9094", "c3:9094"]
ALL = {str(i) for i in range(1, 7)}


@pytest.fixture
def cordons(reassign: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ModuleType:
    monkeypatch.setattr(reassign, "CORDONS", str(tmp_path / "cordoned.json"))
    return reassign


def test_cordon_sets_every_log_dir_once_and_a_dry_run_only_says_so(cordons: ModuleType) -> None:
    admin = CordonAdmin(ALL, ALL, {"5": "/data/a"})
    assert cordons.cordon(admin, ["5", "6"], dry_run=True) == {"cordoned": ["5", "6"]}
    assert admin.altered == []
    assert cordons.cordon(admin, ["5", "6"], dry_run=False) == {"cordoned": ["5", "6"]}
    assert admin.altered == [("broker", "5", "*"), ("broker", "6", "*")]
    assert cordons.cordon(admin, ["5", "6"], dry_run=False) == {"cordoned": []}  # a rerun
    assert len(admin.altered) == 2


def test_cordon_skips_a_stopped_broker_which_gets_no_new_replica(cordons: ModuleType) -> None:
    admin = CordonAdmin(ALL - {"6"}, ALL, {})
    assert cordons.cordon(admin, ["6"], dry_run=False) == {"cordoned": []}
    assert admin.altered == []


def test_uncordon_of_a_running_broker_deletes_only_a_cordon_it_finds(
        cordons: ModuleType) -> None:
    admin = CordonAdmin(ALL, ALL, {"6": "*"})
    assert cordons.uncordon(admin, CONTROLLERS, ["5", "6"], dry_run=True) == \
        {"uncordoned": ["6"]}
    assert admin.altered == []
    assert cordons.uncordon(admin, CONTROLLERS, ["5", "6"], dry_run=False) == \
        {"uncordoned": ["6"]}
    assert admin.altered == [("broker", "6", ("DELETE", None))] and admin.cordoned == {}
    assert cordons.uncordon(admin, CONTROLLERS, ["6"], dry_run=False) == {"uncordoned": []}


def test_a_stopped_brokers_cordon_is_deleted_on_the_active_controller(
        cordons: ModuleType) -> None:
    admin = CordonAdmin(ALL, ALL, {})
    cordons.cordon(admin, ["6"], dry_run=False)
    admin.live = ALL - {"6"}  # stopped, still registered
    assert cordons.uncordon(admin, CONTROLLERS, ["6"], dry_run=False) == {"uncordoned": ["6"]}
    assert admin.altered[1:] == [("c1", "6", ("DELETE", None)), ("c2", "6", ("DELETE", None))]
    assert admin.cordoned == {}
    # Run again: nothing this helper set is left, so nothing is reported changed.
    assert cordons.uncordon(admin, CONTROLLERS, ["6"], dry_run=False) == {"uncordoned": []}


def test_an_unregistered_brokers_cordon_cannot_be_reached_and_is_no_error(
        cordons: ModuleType) -> None:
    admin = CordonAdmin(ALL, ALL, {})
    cordons.cordon(admin, ["6"], dry_run=False)
    admin.live, admin.registered = ALL - {"6"}, ALL - {"6"}
    assert cordons.uncordon(admin, CONTROLLERS, ["6"], dry_run=False) == {"uncordoned": []}


def test_uncordon_stops_when_no_controller_takes_it(cordons: ModuleType) -> None:
    admin = CordonAdmin(ALL - {"6"}, ALL, {})
    with pytest.raises(SystemExit, match=r"no controller changed broker 6's cordoned.log.dirs"):
        cordons.uncordon(admin, ["c1:9094", "c3:9094"], ["6"], dry_run=False)


def test_replicas_moving_between_log_directories_are_waited_for_and_counted(
        reassign: ModuleType) -> None:
    """--verify of a move between a broker's log directories (as Kafka 4.4.0 printed it on the
    jbod cluster): the partition is "completed" at once, its replica "still in progress"."""
    moves = {"version": 1, "partitions": [{"topic": "kf.events", "partition": 0,
                                           "replicas": [1, 2], "log_dirs": ["/d1", "any"]}]}
    answers = iter(["Reassignment of partition kf.events-0 is completed.\n"
                    "Reassignment of replica kf.events-0-1 is still in progress.\n",
                    "Reassignment of partition kf.events-0 is completed.\n"
                    "Reassignment of replica kf.events-0-1 completed successfully.\n"])
    calls: list[list[str]] = []

    class Tools:
        def admin(self) -> list[str]:
            return ["--bootstrap-server", "k1:9091"]

        def run(self, main_class: str, *args: str, check: bool = True) -> Out:
            calls.append(list(args))
            return Out(next(answers) if "--verify" in args else "")

    reassign.start(Tools(), moves, MIB, 600, clock=lambda: 1000.0, ingress=lambda tools: {})
    left = reassign.wait(Tools(), 0, clock=lambda: 1001.0)
    assert left["done"] is False and left["bytes_left"] is None
    assert left["said"] == ("1 of 1 partitions still moving, 1 replica(s) still moving between "
                            "log directories")
    answers = iter(["Reassignment of partition kf.events-0 is completed.\n"
                    "Reassignment of replica kf.events-0-1 completed successfully.\n"] * 2)
    assert reassign.wait(Tools(), 30, sleep=lambda s: None, clock=lambda: 1002.0)["done"]


def test_a_replica_left_in_its_log_directory_is_a_cancelled_move(reassign: ModuleType) -> None:
    moves = {"version": 1, "partitions": [{"topic": "kf.events", "partition": 0,
                                           "replicas": [1, 2], "log_dirs": ["/d1", "any"]}]}
    said = ("Reassignment of partition kf.events-0 is completed.\nPartition kf.events-0 on "
            "broker 1 is not being moved from log dir /d0 to /d1.\n")

    class Tools:
        def admin(self) -> list[str]:
            return ["--bootstrap-server", "k1:9091"]

        def run(self, main_class: str, *args: str, check: bool = True) -> Out:
            return Out(said if "--verify" in args else "")

    reassign.start(Tools(), moves, MIB, 600, clock=lambda: 1000.0, ingress=lambda tools: {})
    with pytest.raises(SystemExit, match=r"kf\.events-0 on broker 1 in /d0, not /d1"):
        reassign.moving(Tools(), preserve_throttles=True, sleep=lambda s: None)


def test_the_sizes_are_those_log_dirs_command_gave_on_a_real_cluster(reassign: ModuleType) -> None:
    """Recorded at one moment on a Kafka 4.4.0 KRaft cluster of 3 brokers, each with two log
    directories (JBOD), after 20 MiB were produced: each broker's describe_log_dirs answer, and
    the output of LogDirsCommand --describe, which the helper read before (one JVM a call)."""
    recorded = json.loads((Path(__file__).parent / "data/log-dirs-4.4.0.json").read_text())
    command: dict[tuple[int, str], int] = {}
    for line in recorded["log_dirs_command"].splitlines():
        for broker in json.loads(line)["brokers"] if line.startswith("{") else []:
            for log_dir in broker["logDirs"]:
                for part in log_dir["partitions"]:
                    key = (int(broker["broker"]), str(part["partition"]))
                    command[key] = max(command.get(key, 0), int(part["size"]))
    kafka = Kafka(verify=[[]], sizes=None)
    kafka.log_dirs = LogDirsAdmin(None, {int(b): answer for b, answer
                                         in recorded["describe_log_dirs"].items()})
    assert len(command) == 12 and reassign.sizes(kafka) == command
    assert kafka.log_dirs.asked == [1, 2, 3]  # every registered broker when none is named
    assert reassign.sizes(kafka, ["kf.events"], [2]) == {
        key: size for key, size in command.items() if key[0] == 2}
    assert reassign.sizes(kafka, ["kf.other"], [1, 3]) == {}


#: A process holding the watcher's lock as a watcher an interrupted run left behind does: its
#: pid in the file, its command line naming the helper (or not, for a pid reused by another).
HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
os.pwrite(fd, str(os.getpid()).encode(), 0)
print("held", flush=True)
time.sleep(60)
"""


def _holder(path: Path, name: str) -> Any:
    held = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), name],
                            stdout=subprocess.PIPE, text=True)
    assert held.stdout is not None and held.stdout.readline() == "held\n"
    return held


def test_a_watcher_an_interrupted_run_left_is_stopped_by_the_next(
        reassign: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(signal, "signal", lambda *_: None)  # this test process keeps its own
    lock = tmp_path / "watcher"
    left = _holder(lock, "kafkaform-kafka")
    try:
        fd = reassign.take_watch(str(lock), stop_s=10)
        assert left.wait(timeout=10) == -signal.SIGTERM
        assert lock.read_text() == str(os.getpid())
        os.close(fd)
    finally:
        left.kill()


def test_a_lock_held_by_another_program_is_never_killed_and_the_run_stops(
        reassign: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(signal, "signal", lambda *_: None)
    lock = tmp_path / "watcher"
    other = _holder(lock, "something-else")
    try:
        with pytest.raises(SystemExit, match=r"another helper \(pid \d+\) acts on the moves and "
                                             r"did not stop in 1s"):
            reassign.take_watch(str(lock), stop_s=1)
        assert other.poll() is None  # still running: not ours to stop
    finally:
        other.kill()
        other.wait()
