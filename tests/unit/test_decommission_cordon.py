"""Whether a decommission cordons the brokers it empties, and a scale-out lifts a cordon
(kafkaform.plans.cordon through plans.broker_moves, OP-08, KIP-1066): only on KRaft, from Kafka
4.3 and metadata.version 4.3-IV0 (level 30), with the reason said once otherwise."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from kafkaform.plans.broker_moves import DayTwoArgv, broker_moves
from kafkaform.plans.cordon import Cordon, cordon, uncordon_receiving

HOSTS = {f"kafka{i}": i for i in range(1, 7)}
RACKS = {1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}
SPREAD = [[1, 3, 5], [2, 4, 6], [3, 5, 1], [4, 6, 2], [5, 1, 3], [6, 2, 4]]
KRAFT = DayTwoArgv(placement=["h", "placement"], start=["h", "reassign"],
                   wait=["h", "reassign-wait"], cancel=["h", "reassign-cancel"],
                   elect=["h", "elect"], health=["h", "health"], health_tail=[],
                   unregister=["h", "unregister"], ids_by_host=HOSTS, cordon=["h", "cordon"],
                   uncordon=["h", "uncordon"], metadata_mode="kraft", release="4.4.0")
#: ZooKeeper mode: the helper is given no cordon command (plans.broker_moves.day_two_argv).
ZOOKEEPER = replace(KRAFT, unregister=[], cordon=[], uncordon=[], metadata_mode="zookeeper",
                    release="3.9.2")


def answer(replicas: list[list[int]], level: int | None,
           brokers: list[int] | None = None) -> dict[str, Any]:
    live = sorted(RACKS) if brokers is None else brokers
    return {"partitions": [{"topic": "kf.orders", "partition": i, "replicas": r, "isr": r,
                            "min_insync": 2} for i, r in enumerate(replicas)],
            "brokers": [{"id": b, "rack": RACKS[b]} for b in live], "metadata_level": level}


def test_kraft_on_4_4_cordons_the_registered_brokers_that_leave() -> None:
    plan = cordon("kraft", "4.4.0", 33, [5, 6], registered={1, 2, 3, 4, 6})
    assert (plan.ids, plan.reason) == ([6], "")


@pytest.mark.parametrize(("mode", "release", "level", "said"), [
    ("zookeeper", "3.9.2", None, "ZooKeeper mode has no cordoned.log.dirs"),
    ("kraft", "3.9.2", 21, "Kafka 3.9.2 has no cordoned.log.dirs, 4.3 and later have"),
    ("kraft", "4.1.2", 27, "Kafka 4.1.2 has no cordoned.log.dirs"),
    # 4.4's jars at a metadata.version below 4.3-IV0: the controllers refuse the config.
    ("kraft", "4.4.0", 29, "metadata.version (level 29) is older than 4.3-IV0 (level 30)"),
    ("kraft", "4.4.0", None, "metadata.version (level None) is older than 4.3-IV0"),
])
def test_no_cordon_where_kafka_has_none_and_the_reason_says_why(
        mode: str, release: str, level: int | None, said: str) -> None:
    plan = cordon(mode, release, level, [6], registered={6})
    assert plan.ids == []
    assert said in plan.reason and "OP-08" in plan.reason


def test_the_first_metadata_version_with_cordons_is_enough() -> None:
    assert cordon("kraft", "4.3.0", 30, [6], registered={6}).ids == [6]


def test_a_decommission_cordons_before_the_moves_and_uncordons_after() -> None:
    moves = broker_moves("decommission", ["kafka6"], answer(SPREAD, 33), vars(KRAFT))
    assert moves.problem == "" and moves.reassignment["partitions"]
    assert moves.cordon_argv == ["h", "cordon", "--ids", "6"]
    assert moves.uncordon_leaving_argv == ["h", "uncordon", "--ids", "6"]
    assert moves.cordon_note == ""
    # Kafka refuses a move naming a cordoned broker: those the moves name are uncordoned first,
    # never the one that leaves.
    taking = sorted(int(i) for i in moves.uncordon_receiving_argv[-1].split(","))
    assert taking and 6 not in taking
    assert moves.uncordon_receiving_argv[:3] == ["h", "uncordon", "--ids"]


def test_a_rerun_after_the_broker_stopped_cordons_nothing_and_still_uncordons() -> None:
    after = [[r if r != 6 else 5 for r in p] for p in SPREAD]
    moves = broker_moves("decommission", ["kafka6"], answer(after, 33, [1, 2, 3, 4, 5]),
                         vars(KRAFT))
    assert moves.cordon_argv == [] and moves.cordon_note == ""
    assert moves.uncordon_leaving_argv == ["h", "uncordon", "--ids", "6"]


@pytest.mark.parametrize(("argv", "level", "said"), [
    (ZOOKEEPER, None, "ZooKeeper mode"),
    (replace(KRAFT, release="4.1.2"), 27, "Kafka 4.1.2"),
    (KRAFT, 27, "older than 4.3-IV0"),
])
def test_a_decommission_where_kafka_cannot_cordon_changes_nothing_and_says_why(
        argv: DayTwoArgv, level: int | None, said: str) -> None:
    moves = broker_moves("decommission", ["kafka6"], answer(SPREAD, level), vars(argv))
    assert moves.problem == "" and moves.reassignment["partitions"]  # the moves go on
    assert (moves.cordon_argv, moves.uncordon_leaving_argv) == ([], [])
    assert said in moves.cordon_note


def test_a_refused_decommission_cordons_nothing() -> None:
    moves = broker_moves("decommission", ["kafka5", "kafka6"], answer(SPREAD, 33), vars(KRAFT))
    assert moves.problem and (moves.cordon_argv, moves.uncordon_leaving_argv) == ([], [])


def test_a_scale_out_lifts_a_cordon_on_the_brokers_that_join_and_cordons_none() -> None:
    emptied = [[r if r != 6 else 5 for r in p] for p in SPREAD]
    moves = broker_moves("scale_out", [], answer(emptied, 33), vars(KRAFT))
    assert moves.joining == ["kafka6"]
    named = {b for p in moves.reassignment["partitions"] for b in p["replicas"]}
    assert 6 in named and 5 not in named  # 5 gives replicas away, keeping none that move
    assert moves.uncordon_receiving_argv == ["h", "uncordon", "--ids",
                                             ",".join(map(str, sorted(named)))]
    assert "6 (" in moves.uncordon_note and "new replica(s))" in moves.uncordon_note
    assert (moves.cordon_argv, moves.uncordon_leaving_argv, moves.cordon_note) == ([], [], "")
    zookeeper = broker_moves("scale_out", [], answer(emptied, None), vars(ZOOKEEPER))
    assert (zookeeper.uncordon_receiving_argv, zookeeper.cordon_note) == ([], "")
    assert zookeeper.uncordon_note == ""


#: Broker 4 leaves; 1 and 2 (racks a) and 3 (rack b) stay, 3 cordoned by hand: the live case.
FOUR = [[1, 3, 4], [2, 4, 1], [3, 1, 2], [4, 2, 3]]


def test_a_decommission_lifts_the_cordon_of_every_broker_its_moves_name_and_says_so() -> None:
    # Measured on 4.4.0: with broker 3 cordoned, Kafka refused every one of these moves, those
    # keeping a replica on 3 too ("all its log directories are cordoned").
    moves = broker_moves("decommission", ["kafka4"], answer(FOUR, 33, [1, 2, 3, 4]), vars(KRAFT))
    assert moves.problem == ""
    named = {b for p in moves.reassignment["partitions"] for b in p["replicas"]}
    assert named == {1, 2, 3}
    assert moves.uncordon_receiving_argv == ["h", "uncordon", "--ids", "1,2,3"]
    assert moves.cordon_argv == ["h", "cordon", "--ids", "4"]
    new = {b: sum(b in p["replicas"] and b not in FOUR[p["partition"]]
                  for p in moves.reassignment["partitions"]) for b in named}
    said = ", ".join(f"{b} ({n} new replica(s))" if n else f"{b} (keeps replicas that move)"
                     for b, n in sorted(new.items()))
    assert moves.uncordon_note == (
        f"a cordon on broker(s) {said} is lifted before the moves: Kafka refuses any move whose "
        "replicas include a broker with all its log directories cordoned (OP-08); the brokers "
        "that leave keep theirs")


def test_nothing_to_move_lifts_no_cordon() -> None:
    done = [[1, 3, 2], [2, 3, 1], [3, 1, 2], [1, 2, 3]]
    moves = broker_moves("decommission", ["kafka4"], answer(done, 33, [1, 2, 3, 4]), vars(KRAFT))
    assert moves.reassignment["partitions"] == []
    assert (moves.uncordon_receiving_argv, moves.uncordon_note) == ([], "")
    assert moves.cordon_argv == ["h", "cordon", "--ids", "4"]


@pytest.mark.parametrize(("argv", "level"), [(ZOOKEEPER, None), (KRAFT, 29)])
def test_no_uncordon_where_kafka_has_no_cordon(argv: DayTwoArgv, level: int | None) -> None:
    moves = broker_moves("decommission", ["kafka4"], answer(FOUR, level, [1, 2, 3, 4]),
                         vars(argv))
    assert moves.reassignment["partitions"]
    assert (moves.uncordon_receiving_argv, moves.uncordon_note) == ([], "")


def test_uncordon_receiving_names_each_broker_and_why() -> None:
    plan = uncordon_receiving({3: 2, 1: 1, 2: 0}, [5, 7], leaving=[1], registered={3, 5})
    assert plan.ids == [2, 3, 5]
    assert plan.reason.startswith("a cordon on broker(s) 2 (keeps replicas that move), 3 (2 new "
                                  "replica(s)), 5 (joins) is lifted before the moves")
    assert uncordon_receiving({}, [], [], set()) == Cordon()
