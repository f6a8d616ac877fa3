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


def test_a_directory_named_everywhere_moves_each_brokers_replicas_on_that_broker() -> None:
    moves = broker_moves("empty_log_dirs", ["/d1"], CLUSTER, ARGV)
    by_partition = {p["partition"]: p["log_dirs"] for p in moves.reassignment["partitions"]}
    assert by_partition == {2: ["/d0/kafka-logs", "any"],
                            3: ["/d0/kafka-logs", "/d0/kafka-logs"]}


@pytest.mark.parametrize(("named", "problem"), [
    (["/d0", "/d1"], "broker 2: every log directory it has is named"),
    ([], "no log directory named: set kafka_broker_empty_log_dirs"),
    (["k9:/d1"], "k9:/d1: not a broker of the inventory"),
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
