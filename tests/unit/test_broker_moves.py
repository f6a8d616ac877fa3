"""What a decommission or a scale-out moves (kafkaform.plans.broker_moves, OP-05, OP-06), from a
placement answer as the admin helper gives it: decisions and refusals table-tested with their
messages."""

from __future__ import annotations

from typing import Any

import pytest

from kafkaform.plans.broker_moves import DayTwoArgv, broker_moves, broker_moves_vars, settled

HOSTS = {f"kafka{i}": i for i in range(1, 7)}
RACKS = {1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}
ARGV = vars(DayTwoArgv(placement=["h", "placement"], start=["h", "reassign"],
                       wait=["h", "reassign-wait"], cancel=["h", "reassign-cancel"],
                       elect=["h", "elect"], health=["h", "health"],
                       health_tail=["--wait", "20"], unregister=["h", "unregister"],
                       ids_by_host=HOSTS))


MIB = 2**20


def answer(replicas: list[list[int]], brokers: list[int] | None = None,
           usable_mib: dict[int, int | None] | None = None) -> dict[str, Any]:
    """A placement answer: partition i of kf.orders on ``replicas[i]``, all in sync, 100 MiB
    each; every broker's disks 1 GiB with ``usable_mib`` free (500 MiB unless given; None: the
    broker did not say)."""
    live = sorted(RACKS) if brokers is None else brokers
    free = {b: 500 for b in live} | (usable_mib or {})
    return {"partitions": [{"topic": "kf.orders", "partition": i, "replicas": r, "isr": r,
                            "min_insync": 2, "size": 100 * MIB} for i, r in enumerate(replicas)],
            "brokers": [{"id": b, "rack": RACKS[b],
                         "total": None if free[b] is None else 1024 * MIB,
                         "usable": None if free[b] is None else free[b] * MIB} for b in live]}


#: Six partitions over 6 brokers in 3 racks, one replica per rack.
SPREAD = [[1, 3, 5], [2, 4, 6], [3, 5, 1], [4, 6, 2], [5, 1, 3], [6, 2, 4]]


def test_a_decommission_moves_each_replica_to_its_racks_other_broker_and_gates_on_the_rest(
) -> None:
    moves = broker_moves("decommission", ["kafka6"], answer(SPREAD), ARGV)
    assert moves.problem == ""
    assert moves.reassignment == {"version": 1, "partitions": [
        {"topic": "kf.orders", "partition": 1, "replicas": [2, 4, 5]},
        {"topic": "kf.orders", "partition": 3, "replicas": [4, 5, 2]},
        {"topic": "kf.orders", "partition": 5, "replicas": [5, 2, 4]}]}
    assert moves.leaving == ["kafka6"]
    assert moves.health_argv == ["h", "health", "--ids", "1,2,3,4,5", "--wait", "20"]
    assert moves.unregister_argv == ["h", "unregister", "--ids", "6"]


def test_a_rerun_after_the_broker_stopped_moves_nothing_and_unregisters_again() -> None:
    """The broker is gone and holds nothing: nothing to move, the same steps after."""
    after = [[r if r != 6 else 5 for r in p] for p in SPREAD]
    moves = broker_moves("decommission", ["kafka6"], answer(after, [1, 2, 3, 4, 5]), ARGV)
    assert (moves.problem, moves.reassignment["partitions"]) == ("", [])
    assert moves.unregister_argv == ["h", "unregister", "--ids", "6"]
    assert moves.elect is False  # every partition led by its preferred replica


def led(placement: dict[str, Any], leaders: dict[int, int]) -> dict[str, Any]:
    """``placement`` with each partition led by its preferred replica, but those in
    ``leaders`` (partition: leader)."""
    for p in placement["partitions"]:
        p["leader"] = leaders.get(p["partition"], p["replicas"][0])
    return placement


def test_a_rerun_with_nothing_to_move_gives_leadership_back_an_interrupted_run_left_astray(
) -> None:
    """A run stopped between its moves and its election: the rerun moves nothing and elects."""
    after = [[r if r != 6 else 5 for r in p] for p in SPREAD]
    astray = led(answer(after, [1, 2, 3, 4, 5]), {0: 3, 2: 5})
    moves = broker_moves("decommission", ["kafka6"], astray, ARGV)
    assert (moves.problem, moves.reassignment["partitions"], moves.elect) == ("", [], True)
    assert moves.summary.endswith("; 2 partition(s) led by another replica than their preferred "
                                  "one (kf.orders-0, kf.orders-2): a preferred-replica election "
                                  "follows")
    # A preferred replica out of sync cannot lead: no election for it, on every rerun.
    out_of_sync = led(answer(after, [1, 2, 3, 4, 5]), {0: 3})
    out_of_sync["partitions"][0]["isr"] = [3, 5]
    assert broker_moves("decommission", ["kafka6"], out_of_sync, ARGV).elect is False
    # A scale-out with no broker to fill says so, and elects all the same.
    scale_out = broker_moves("scale_out", [], led(answer(SPREAD), {1: 4}), ARGV)
    assert (scale_out.reassignment["partitions"], scale_out.elect) == ([], True)
    assert scale_out.summary.startswith("no broker to fill: every running broker holds "
                                        "replicas, so nothing moves (name brokers in "
                                        "kafka_broker_scale_out_hosts to give them a fair share); "
                                        "1 partition(s) led by another replica")
    # Moves elect whatever the leaders were.
    assert broker_moves("decommission", ["kafka6"], led(answer(SPREAD), {}), ARGV).elect is True


@pytest.mark.parametrize(("named", "placement", "says"), [
    (["kafka9"], answer(SPREAD),
     "kafka9: not a host of the kafka_broker group, so it cannot be named in "
     "kafka_broker_decommission_hosts (OP-05). Name brokers by their inventory hostnames"),
    ([], answer(SPREAD),
     "no broker named: set kafka_broker_decommission_hosts to the hosts to remove (OP-05)"),
    # Refused with the names, before the cluster is read (playbooks/day_two/check_names.yml).
    ([], None,
     "no broker named: set kafka_broker_decommission_hosts to the hosts to remove (OP-05)"),
    # The whole of rack c: a partition's spread over 3 racks would go.
    (["kafka5", "kafka6"], answer(SPREAD),
     "kf.orders: its replicas are spread over 3 racks now, and the brokers that stay are in 2 "
     "(a, b), so a rack's loss could take a partition (OP-05). Keep a broker in every rack, or "
     "add one to the rack you empty first"),
    # Broker 6 is down but still holds replicas: they cannot be copied from it.
    (["kafka6"], answer(SPREAD, [1, 2, 3, 4, 5]),
     "broker(s) 6 hold replicas but are not running, so their replicas cannot move off (OP-05). "
     "Start them again and run again, or replace the host keeping its broker id"),
])
def test_a_decommission_that_would_cost_data_or_a_rack_is_refused_by_name(
        named: list[str], placement: dict[str, Any] | None, says: str) -> None:
    moves = broker_moves("decommission", named, placement, ARGV)
    assert moves.problem == says
    assert moves.reassignment == {}


def test_a_scale_out_finds_the_empty_broker_and_fills_it_from_the_others_keeping_racks() -> None:
    """Broker 6 (rack c) is back with nothing, its rack mate 5 holding a replica of every
    partition: 6 takes the fair share, 3 of 18 replicas, each from 5 in its place, so no
    partition loses rack c."""
    before = [[r if r != 6 else 5 for r in p] for p in SPREAD]
    moves = broker_moves("scale_out", [], answer(before), ARGV)
    assert (moves.problem, moves.joining) == ("", ["kafka6"])
    moved = {p["partition"]: p["replicas"] for p in moves.reassignment["partitions"]}
    assert len(moved) == 3
    for number, replicas in moved.items():
        assert replicas == [6 if b == 5 else b for b in before[number]], number
    assert moves.health_argv == ["h", "health", "--ids", "1,2,3,4,5,6", "--wait", "20"]


def test_a_scale_out_onto_a_broker_that_is_not_running_is_refused() -> None:
    moves = broker_moves("scale_out", ["kafka6"], answer(SPREAD[:2], [1, 2, 3, 4, 5]), ARGV)
    assert moves.problem == (
        "broker(s) 6 are not running, so no replica can move to them (OP-06). Converge them "
        "first (playbooks/kafka.yml)")


def test_the_gate_before_spares_the_brokers_a_decommission_names_and_reads_a_comma_list(
) -> None:
    gate = broker_moves_vars("kafka5, kafka6", "decommission", None, ARGV)
    assert gate["leaving"] == ["kafka5", "kafka6"]
    assert gate["health_argv"] == ["h", "health", "--ids", "1,2,3,4", "--wait", "20"]
    assert broker_moves_vars([], "scale_out", None, ARGV)["health_argv"][3] == "1,2,3,4,5,6"


#: Moves an interrupted run left in flight: partition 1 onto broker 5 (from 6), partition 3
#: onto broker 1 (from 6).
LEFT = [{"topic": "kf.orders", "partition": 1, "replicas": [2, 4, 5]},
        {"topic": "kf.orders", "partition": 3, "replicas": [4, 1, 2]}]


@pytest.mark.parametrize(("operation", "named", "in_flight", "argv", "note"), [
    # Nothing in flight: the full gate, no note.
    ("decommission", "kafka6", [], ["h", "health", "--ids", "1,2,3,4,5", "--wait", "20"], ""),
    # A rerun: replicas out of sync on the brokers the moves copy to are excused until the moves
    # in flight are done; the leaving broker is no part of the gate, even as a target.
    ("decommission", "kafka6", LEFT,
     ["h", "health", "--ids", "1,2,3,4,5", "--wait", "20", "--catching-up", "1,2,4,5"],
     "2 partition move(s) an interrupted run left are still in flight: until they are done, "
     "the gate takes replicas out of sync on broker(s) 1, 2, 4, 5 (where they copy to) for the "
     "moves', while every broker must be registered, a controller active and no partition "
     "offline; the full gate runs once they are done (OP-06)"),
    ("scale_out", "", LEFT[:1],
     ["h", "health", "--ids", "1,2,3,4,5,6", "--wait", "20", "--catching-up", "2,4,5"],
     "1 partition move(s) an interrupted run left are still in flight: until they are done, "
     "the gate takes replicas out of sync on broker(s) 2, 4, 5 (where they copy to) for the "
     "moves', while every broker must be registered, a controller active and no partition "
     "offline; the full gate runs once they are done (OP-06)"),
])
def test_the_gate_of_a_rerun_excuses_only_the_moves_in_flight_and_says_so(
        operation: str, named: str, in_flight: list[dict[str, Any]], argv: list[str],
        note: str) -> None:
    gate = broker_moves_vars(named, operation, None, ARGV, in_flight)
    assert (gate["health_argv"], gate["gate_note"]) == (argv, note)
    # The gate before the moves (in_flight waited for first) is the full one again.
    assert broker_moves_vars(named, operation, None, ARGV)["health_argv"] == argv[:6]


@pytest.mark.parametrize(("free", "problem", "warning"), [
    # Broker 5 takes 3 partitions of 100 MiB: 400 MiB free leaves 100, under a tenth of 1 GiB.
    ({5: 400}, "broker 5 would take 300 MiB of new replicas with 400 MiB free of 1024 MiB, "
               "leaving less than 10% free (OP-07). Add disk or brokers first, or shorten the "
               "retention of the largest topics", ""),
    ({5: 410}, "", ""),
    # A broker that does not say what it has free is not refused, but named.
    ({5: None}, "", "broker(s) 5 did not say how much disk they have free: the moves onto them "
                    "are not checked against it (OP-07)"),
])
def test_moves_that_would_fill_a_receiving_brokers_disks_are_refused(
        free: dict[int, int | None], problem: str, warning: str) -> None:
    moves = broker_moves("decommission", ["kafka6"], answer(SPREAD, usable_mib=free), ARGV)
    assert (moves.problem, moves.warning) == (problem, warning)
    assert bool(moves.reassignment) == (not problem)


# --- dry runs (Ansible's --check, pyinfra's --dry): nothing changed, what a real run would do --

#: ARGV with every broker's inventory rack (plans.broker_moves.day_two_argv).
DRY_ARGV = {**ARGV, "brokers": {str(b): r for b, r in RACKS.items()}}


def test_a_decommission_says_each_move_and_where_the_new_replicas_go() -> None:
    moves = broker_moves("decommission", ["kafka6"], answer(SPREAD), ARGV)
    assert moves.summary == ("3 partition(s) move off broker(s) 6; 5 broker(s) stay: new "
                             "replicas on broker(s) 5 (3)")
    assert moves.moved == ["kf.orders-1: 2,4,6 -> 2,4,5", "kf.orders-3: 4,6,2 -> 4,5,2",
                           "kf.orders-5: 6,2,4 -> 5,2,4"]


def test_a_dry_run_decides_again_after_the_moves_as_if_it_had_made_them() -> None:
    """Check mode moved nothing: its check after the moves takes the moves it would have made
    as made, so it goes on to the stop, as the real run would; a real run's check (nothing
    taken as done) still finds the replicas left."""
    first = broker_moves("decommission", ["kafka6"], answer(SPREAD), ARGV)
    again = broker_moves("decommission", ["kafka6"], answer(SPREAD), ARGV,
                         first.reassignment["partitions"])
    assert (again.problem, again.reassignment["partitions"]) == ("", [])
    assert broker_moves("decommission", ["kafka6"], answer(SPREAD), ARGV).reassignment[
        "partitions"] == first.reassignment["partitions"]


def test_moves_an_interrupted_run_left_in_flight_are_taken_as_done_by_a_dry_run() -> None:
    """While a move is in flight Kafka lists the old and the new replicas together (a partition
    of 4 replicas here): decided as is, the partition would keep 4 replicas; taken as done, it
    is left alone and only what is left moves."""
    in_flight = [{"topic": "kf.orders", "partition": 1, "replicas": [2, 4, 5]}]
    during = [list(p) for p in SPREAD]
    during[1] = [2, 4, 5, 6]
    as_is = broker_moves("decommission", ["kafka6"], answer(during), ARGV)
    assert as_is.reassignment["partitions"][0] == {"topic": "kf.orders", "partition": 1,
                                                   "replicas": [2, 4, 5, 1]}
    moves = broker_moves("decommission", ["kafka6"], answer(during), ARGV, in_flight)
    assert moves.problem == ""
    assert [p["partition"] for p in moves.reassignment["partitions"]] == [3, 5]


def test_a_dry_run_scale_out_takes_the_brokers_its_converge_would_start_as_running() -> None:
    """Broker 6 is stopped (decommissioned, still in the inventory): a real scale-out's converge
    starts it, a dry run's does not. The gate spares it, and the moves onto it are decided as
    for a running broker in its inventory rack holding nothing; its disks are unknown."""
    before = [[r if r != 6 else 5 for r in p] for p in SPREAD]
    gate = broker_moves("scale_out", [], None, DRY_ARGV, starting=["kafka6"])
    assert gate.health_argv == ["h", "health", "--ids", "1,2,3,4,5", "--wait", "20"]
    stopped = answer(before, [1, 2, 3, 4, 5])
    assert broker_moves("scale_out", [], stopped, DRY_ARGV).reassignment["partitions"] == []
    moves = broker_moves("scale_out", [], stopped, DRY_ARGV, starting=["kafka6"])
    assert (moves.problem, moves.joining) == ("", ["kafka6"])
    assert moves.reassignment == broker_moves("scale_out", [], answer(before), ARGV).reassignment
    assert moves.warning.startswith("broker(s) 6 did not say how much disk they have free")
    assert moves.health_argv == gate.health_argv
    # A decommission starts nothing: the brokers named are never taken as starting.
    assert broker_moves("decommission", ["kafka6"], None, DRY_ARGV,
                        starting=["kafka5"]).health_argv[3] == "1,2,3,4,5"


def test_a_settled_placement_keeps_what_the_moves_do_not_touch() -> None:
    placement = answer([[1, 3, 5], [2, 4, 6]])
    done = settled(placement, [{"topic": "kf.orders", "partition": 0, "replicas": [2, 3, 5]}],
                   {7: "d"})
    assert [(p["replicas"], p["isr"]) for p in done["partitions"]] == [
        ([2, 3, 5], [2, 3, 5]), ([2, 4, 6], [2, 4, 6])]
    assert done["brokers"][-1] == {"id": 7, "rack": "d", "total": None, "usable": None}
    assert placement["partitions"][0]["replicas"] == [1, 3, 5]  # the answer read is untouched
