"""Emptying log directories (kafkaform.plans.log_dir_moves through plans.broker_moves, OP-11):
which replicas move to which of their broker's other directories, and the refusals."""

from __future__ import annotations

from typing import Any

import pytest

from kafkaform.plans.broker_moves import broker_moves

MIB = 2**20
ARGV = {"ids_by_host": {"k1": 1, "k2": 2}, "health": ["h"], "health_tail": [],
        "unregister": [], "cordon": [], "uncordon": []}


def disk(usable_mib: int, total_mib: int = 1000, **replicas: int) -> dict[str, Any]:
    return {"total": total_mib * MIB, "usable": usable_mib * MIB,
            "replicas": {name.replace("_", "-").replace("kf-", "kf."): size * MIB
                         for name, size in replicas.items()}}


def answer(k1: dict[str, Any], k2: dict[str, Any]) -> dict[str, Any]:
    return {"partitions": [{"topic": "kf.events", "partition": n, "replicas": [1, 2]}
                           for n in range(4)],
            "brokers": [{"id": 1, "log_dirs": k1}, {"id": 2, "log_dirs": k2}]}


CLUSTER = answer(
    {"/d0/kafka-logs": disk(900, kf_events_0=30, kf_events_1=20),
     "/d1/kafka-logs": disk(500, kf_events_2=40, kf_events_3=10),
     "/d2/kafka-logs": disk(800)},
    {"/d0/kafka-logs": disk(900, kf_events_0=30, kf_events_1=20, kf_events_2=40),
     "/d1/kafka-logs": disk(900, kf_events_3=10)})


def test_a_named_directory_empties_into_its_brokers_other_directories_with_most_room() -> None:
    moves = broker_moves("empty_log_dirs", ["k1:/d1"], CLUSTER, ARGV)
    assert moves.problem == ""
    # The largest first, each to the directory with the most room left: both fit in /d0.
    assert moves.reassignment["partitions"] == [
        {"topic": "kf.events", "partition": 2, "replicas": [1, 2],
         "log_dirs": ["/d0/kafka-logs", "any"]},
        {"topic": "kf.events", "partition": 3, "replicas": [1, 2],
         "log_dirs": ["/d0/kafka-logs", "any"]}]
    assert moves.summary.startswith("2 replica(s), 50.0 MiB, move off log directory k1:/d1")
    assert moves.health_argv == ["h", "--ids", "1,2"]
    # What a dry run (--check, --dry) says it would move, replica by replica.
    assert moves.moved == ["kf.events-2: broker 1 /d1/kafka-logs -> /d0/kafka-logs",
                           "kf.events-3: broker 1 /d1/kafka-logs -> /d0/kafka-logs"]


def test_a_directory_named_everywhere_moves_each_brokers_replicas_on_that_broker() -> None:
    moves = broker_moves("empty_log_dirs", ["/d1"], CLUSTER, ARGV)
    by_partition = {p["partition"]: p["log_dirs"] for p in moves.reassignment["partitions"]}
    assert by_partition == {2: ["/d0/kafka-logs", "any"],
                            3: ["/d0/kafka-logs", "/d0/kafka-logs"]}
    assert moves.moved == ["kf.events-2: broker 1 /d1/kafka-logs -> /d0/kafka-logs",
                           "kf.events-3: broker 1 /d1/kafka-logs -> /d0/kafka-logs",
                           "kf.events-3: broker 2 /d1/kafka-logs -> /d0/kafka-logs"]


@pytest.mark.parametrize(("named", "problem"), [
    (["/d0", "/d1"], "broker 2: every log directory it has is named"),
    ([], "no log directory named: set kafka_broker_empty_log_dirs"),
    (["k9:/d1"], "k9:/d1: not a broker of the inventory"),
    (["/d1", "k2:/d2", "/srv"], "k2:/d2, /srv: names no log directory the running brokers report "
                                "(/d0/kafka-logs, /d1/kafka-logs, /d2/kafka-logs) (OP-11). Set "
                                "kafka_broker_empty_log_dirs to directories of log.dirs or their "
                                "mounts, DIR or HOST:DIR"),
])
def test_refusals_name_the_broker_and_the_fix(named: list[str], problem: str) -> None:
    moves = broker_moves("empty_log_dirs", named, CLUSTER, ARGV)
    assert problem in moves.problem and "OP-11" in moves.problem
    assert not moves.reassignment.get("partitions")


def test_a_directory_that_would_fill_is_refused() -> None:
    full = answer({"/d0/kafka-logs": disk(120, kf_events_0=30),
                   "/d1/kafka-logs": disk(60, kf_events_1=50)},
                  {"/d0/kafka-logs": disk(900)})
    moves = broker_moves("empty_log_dirs", ["k1:/d1"], full, ARGV)
    assert "kf.events-1 (50 MiB) fits in none of /d0/kafka-logs keeping 10% free (OP-07)" \
        in moves.problem
    assert moves.reassignment["partitions"] == []


#: A KRaft inventory with a dedicated controller: ids_by_host names it too, broker_ids not.
WITH_CONTROLLER = {**ARGV, "ids_by_host": {"k1": 1, "k2": 2, "ctl1": 3001},
                   "broker_ids": [1, 2]}
FIX = ("set kafka_broker_empty_log_dirs to the log directories (or their mounts) to empty, DIR "
       "or HOST:DIR (OP-11)")
CONTROLLER = ("a KRaft controller, not a broker, so kafka_broker_empty_log_dirs cannot name it: "
              "a controller holds no replica (OP-11). Name log directories of hosts of the "
              "kafka_broker group (HOST:DIR), or DIR for every broker")
NAMES = [
    ("a controller", ["ctl1:/d1"], WITH_CONTROLLER, f"ctl1:/d1: {CONTROLLER}"),
    ("a broker's and a controller's", ["k1:/d1", "ctl1:/d0"], WITH_CONTROLLER,
     f"ctl1:/d0: {CONTROLLER}"),
    ("no such host", ["k9:/d1"], WITH_CONTROLLER, f"k9:/d1: not a broker of the inventory: {FIX}"),
    ("both at once", ["ctl1:/d1", "k9:/d1"], WITH_CONTROLLER,
     f"k9:/d1: not a broker of the inventory: {FIX}; ctl1:/d1: {CONTROLLER}"),
    # ZooKeeper mode: the inventory has no controller, a controller's name is no host at all.
    ("ZooKeeper mode", ["ctl1:/d1"], ARGV, f"ctl1:/d1: not a broker of the inventory: {FIX}"),
    ("none", [], WITH_CONTROLLER, f"no log directory named: {FIX}"),
    ("a broker's", ["k1:/d1", "/d0"], WITH_CONTROLLER, ""),
]


@pytest.mark.parametrize(("case", "named", "argv", "said"), NAMES, ids=[n[0] for n in NAMES])
def test_a_log_directory_of_no_broker_is_refused_up_front_by_item_setting_and_fix(
        case: str, named: list[str], argv: dict[str, Any], said: str) -> None:
    """Before the cluster is asked (the gate) and with the placement alike: a controller's
    directory was taken for one of no broker's, and the run emptied nothing, saying nothing."""
    gate = broker_moves("empty_log_dirs", named, None, argv)
    assert gate.problem == said, case
    assert gate.health_argv == ([] if said else ["h", "--ids", "1,2"])
    moves = broker_moves("empty_log_dirs", named, CLUSTER, argv)
    assert moves.problem == said, case
    assert bool(moves.reassignment.get("partitions")) is not bool(said)
