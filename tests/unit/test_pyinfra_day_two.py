"""pyinfra's decommission and scale-out (kafkaform.deploys.day_two), without hosts: what runs on
which broker, in which order, and where it stops (OP-05, OP-06). The decisions are
plans.broker_moves' (tests/unit/test_broker_moves.py); these are the engine's steps."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace
from typing import Any

import pytest
from pyinfra.api.exceptions import DeployError

from kafkaform.deploys import base, day_two
from kafkaform.deploys.base import Ran
from kafkaform.plans.broker_moves import DayTwoArgv

HOSTS = {f"k{i}": i for i in range(1, 7)}
RACKS = {1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}
ARGV = vars(DayTwoArgv(placement=["placement"], start=["reassign"], wait=["reassign-wait"],
                       cancel=["reassign-cancel"], elect=["elect"], health=["health"],
                       health_tail=[], unregister=["unregister"], ids_by_host=HOSTS,
                       in_flight=["reassign-in-flight"]))
SPREAD = [[1, 3, 5], [2, 4, 6], [3, 5, 1], [4, 6, 2], [5, 1, 3], [6, 2, 4]]


def placement(replicas: list[list[int]], level: int | None = None) -> str:
    return json.dumps({"partitions": [{"topic": "t", "partition": i, "replicas": r, "isr": r,
                                       "min_insync": 2} for i, r in enumerate(replicas)],
                       "brokers": [{"id": b, "rack": r} for b, r in RACKS.items()],
                       "metadata_level": level})


#: A KRaft cluster on Kafka 4.4 (plans.cordon: its brokers can be cordoned, OP-08).
KRAFT_44 = {**ARGV, "cordon": ["cordon"], "uncordon": ["uncordon"], "metadata_mode": "kraft",
            "release": "4.4.0"}


def run(monkeypatch: pytest.MonkeyPatch, operation: str, named: list[str],
        waits: list[dict[str, Any]], placements: list[str],
        ran: list[tuple[str, str]] | None = None,
        argv: dict[str, Any] | None = None, in_flight: list[dict[str, Any]] | None = None,
        unhealthy: str = "") -> list[tuple[str, str]]:
    """carry_out on k1 with the helper's answers scripted; (host, command) in the order run,
    also into ``ran`` when given (to read after a failure). ``in_flight``: the moves an
    interrupted run left; ``unhealthy``: a health check naming it fails."""
    ran = [] if ran is None else ran
    waits, placements = list(waits), list(placements)

    def run_on(name: str, argv: list[str], stdin: str | None = None) -> Ran:
        ran.append((name, " ".join(argv)))
        if argv == ["reassign-in-flight"]:
            return Ran(True, json.dumps({"in_flight": in_flight or []}), "")
        if argv[0] == "health" and unhealthy and unhealthy in " ".join(argv):
            return Ran(False, "", "brokers not registered: 3")
        if argv[0] == "uncordon":
            return Ran(True, json.dumps({"uncordoned": argv[-1].split(",")}), "")
        if argv == ["reassign-wait"]:
            answer = waits.pop(0)
            return Ran("error" not in answer, json.dumps(answer), answer.get("error", ""))
        if argv == ["placement"]:
            return Ran(True, placements.pop(0) if len(placements) > 1 else placements[0], "")
        if argv == ["reassign"]:
            assert stdin is not None and json.loads(stdin)["partitions"]
            return Ran(True, json.dumps({"started": 3, "warning": ""}), "")
        return Ran(True, "{}", "")

    monkeypatch.setattr(base, "run_on", run_on)
    monkeypatch.setattr(day_two, "host", SimpleNamespace(name="k1"))
    day_two.carry_out(operation, named, argv or ARGV, timeout_s=0, delay_s=0)
    return ran


DONE = {"done": True}
MOVING = {"done": False, "said": "2 of 3 partitions still moving, 10.0 MiB left to copy"}


def test_a_decommission_moves_then_stops_and_unregisters_only_once_the_broker_holds_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    emptied = [[r if r != 6 else 5 for r in p] for p in SPREAD]
    ran = run(monkeypatch, "decommission", ["k6"], [DONE, MOVING, DONE],
              [placement(SPREAD), placement(emptied)])
    assert ran == [("k1", "reassign-in-flight"), ("k1", "reassign-wait"),
                   ("k1", "health --ids 1,2,3,4,5"), ("k1", "placement"), ("k1", "reassign"),
                   ("k1", "reassign-wait"),
                   ("k1", "reassign-wait"), ("k1", "elect"), ("k1", "placement"),
                   ("k6", "systemctl disable --now kafka.service"), ("k1", "unregister --ids 6"),
                   ("k1", "health --ids 1,2,3,4,5")]


def test_a_rerun_with_nothing_to_move_still_runs_the_election_an_interrupted_run_missed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    astray = json.loads(placement(SPREAD))
    for p in astray["partitions"]:
        p["leader"] = p["replicas"][1 if p["partition"] == 3 else 0]
    ran = run(monkeypatch, "scale_out", [], [DONE], [json.dumps(astray)])
    assert [c for _, c in ran if c in ("reassign", "elect")] == ["elect"]
    answers = {("placement",): json.dumps(astray),
               ("reassign-wait", "--dry-run"): NOTHING_IN_FLIGHT}
    todo, said = planned(monkeypatch, "scale_out", [], answers, WITH_CONTROLLER)
    assert todo is True and "1 partition(s) led by another replica" in said[0] and "t-3" in said[0]


def test_moves_that_fail_are_cancelled_and_no_broker_stops(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[tuple[str, str]] = []
    with pytest.raises(DeployError, match=r"watching the moves in flight failed: .*deadline"):
        run(monkeypatch, "decommission", ["k6"],
            [DONE, {"done": False, "error": "2 of 3 partitions were still moving at the deadline"}],
            [placement(SPREAD)], ran)
    assert ran[-1] == ("k1", "reassign-cancel")
    assert not any(c.startswith(("systemctl", "unregister")) for _, c in ran)


def test_a_decommission_of_a_whole_rack_is_refused_before_anything_moves(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(DeployError, match=r"No replica moved: t: its replicas are spread over 3 "
                                          r"racks now.*\(OP-05\)"):
        run(monkeypatch, "decommission", ["k5", "k6"], [DONE], [placement(SPREAD)])


def test_a_scale_out_moves_onto_the_empty_broker_and_stops_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    before = [[r if r != 6 else 5 for r in p] for p in SPREAD]
    ran = run(monkeypatch, "scale_out", [], [DONE, DONE], [placement(before)])
    assert [c for _, c in ran] == ["reassign-in-flight", "reassign-wait",
                                   "health --ids 1,2,3,4,5,6", "placement",
                                   "reassign", "reassign-wait", "elect",
                                   "health --ids 1,2,3,4,5,6"]


def test_an_unhealthy_cluster_stops_the_run_before_anything_moves(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[tuple[str, str]] = []

    def run_on(name: str, argv: list[str], stdin: str | None = None) -> Ran:
        ran.append((name, " ".join(argv)))
        if argv == ["reassign-in-flight"]:
            return Ran(True, json.dumps({"in_flight": []}), "")
        if argv == ["reassign-wait"]:
            return Ran(True, json.dumps(DONE), "")
        return Ran(False, "", "broker 3 is not registered")

    monkeypatch.setattr(base, "run_on", run_on)
    monkeypatch.setattr(day_two, "host", SimpleNamespace(name="k1"))
    with pytest.raises(DeployError, match=r"^k1: the cluster was not healthy before anything "
                       r"moved after 0 s: broker 3 is not registered \(OP-06\)$"):
        day_two.carry_out("decommission", ["k6"], ARGV, timeout_s=0, delay_s=0)
    # The gate asks about the brokers that stay: the one leaving may already be down.
    assert [command for _host, command in ran] == ["reassign-in-flight", "reassign-wait",
                                                   "health --ids 1,2,3,4,5"]


#: A move an interrupted run left in flight: partition 1 of t onto broker 5 (from 6).
LEFT = [{"topic": "t", "partition": 1, "replicas": [2, 4, 5]}]


def test_a_rerun_watches_the_moves_in_flight_under_a_gate_excusing_them_then_gates_fully(
        monkeypatch: pytest.MonkeyPatch) -> None:
    emptied = [[r if r != 6 else 5 for r in p] for p in SPREAD]
    ran = run(monkeypatch, "decommission", ["k6"], [MOVING, DONE, DONE, DONE],
              [placement(SPREAD), placement(emptied)], in_flight=LEFT)
    steps = [c for _, c in ran]
    assert steps[:5] == ["reassign-in-flight", "health --ids 1,2,3,4,5 --catching-up 2,4,5",
                         "reassign-wait", "reassign-wait", "health --ids 1,2,3,4,5"]
    assert steps.index("health --ids 1,2,3,4,5") < steps.index("reassign")


def test_a_rerun_with_moves_in_flight_still_refuses_a_cluster_with_a_broker_down(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[tuple[str, str]] = []
    with pytest.raises(DeployError, match=r"^k1: the cluster was not healthy with moves in "
                       r"flight after 0 s: brokers not registered: 3 \(OP-06\)$"):
        run(monkeypatch, "decommission", ["k6"], [DONE], [placement(SPREAD)], ran,
            in_flight=LEFT, unhealthy="health")
    assert [c for _, c in ran] == ["reassign-in-flight",
                                   "health --ids 1,2,3,4,5 --catching-up 2,4,5"]


def test_a_decommission_on_kafka_4_4_cordons_before_any_move_and_uncordons_once_stopped(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Cordoned before the moves start (a topic created meanwhile stays off broker 6); the
    cordon lifted once 6 is stopped, before its unregistration (Kafka then refuses its
    configs)."""
    emptied = [[r if r != 6 else 5 for r in p] for p in SPREAD]
    ran = run(monkeypatch, "decommission", ["k6"], [DONE, DONE],
              [placement(SPREAD, 33), placement(emptied, 33)], argv=KRAFT_44)
    steps = [command for _, command in ran]
    assert steps.index("cordon --ids 6") < steps.index("reassign")
    assert steps.index("systemctl disable --now kafka.service") \
        < steps.index("uncordon --ids 6") < steps.index("unregister --ids 6")
    assert ("k1", "cordon --ids 6") in ran and steps.count("cordon --ids 6") == 1


def test_a_decommission_below_metadata_version_4_3_cordons_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    emptied = [[r if r != 6 else 5 for r in p] for p in SPREAD]
    ran = run(monkeypatch, "decommission", ["k6"], [DONE, DONE],
              [placement(SPREAD, 27), placement(emptied, 27)], argv=KRAFT_44)
    assert not [c for _, c in ran if "cordon" in c]
    assert "unregister --ids 6" in [c for _, c in ran]


def test_a_scale_out_lifts_a_cordon_on_the_joining_broker_before_the_moves(
        monkeypatch: pytest.MonkeyPatch) -> None:
    before = [[r if r != 6 else 5 for r in p] for p in SPREAD]
    steps = [c for _, c in run(monkeypatch, "scale_out", [], [DONE, DONE],
                               [placement(before, 33)], argv=KRAFT_44)]
    lifted = [c for c in steps if c.startswith("uncordon")]
    assert len(lifted) == 1 and "6" in lifted[0].split()[-1].split(",")
    assert steps.index(lifted[0]) < steps.index("reassign")
    assert "cordon --ids 6" not in steps


def test_a_decommission_lifts_the_cordon_of_every_broker_its_moves_name_before_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Kafka refuses a move naming a cordoned broker: a cordon an operator or an interrupted
    run left on a broker that stays is lifted before the moves, never the leaving one's."""
    emptied = [[r if r != 6 else 5 for r in p] for p in SPREAD]
    steps = [c for _, c in run(monkeypatch, "decommission", ["k6"], [DONE, DONE],
                               [placement(SPREAD, 33), placement(emptied, 33)], argv=KRAFT_44)]
    lifted = next(c for c in steps if c.startswith("uncordon") and c != "uncordon --ids 6")
    named = {int(i) for i in lifted.split()[-1].split(",")}
    assert 6 not in named and {2, 4, 5} <= named
    assert steps.index("cordon --ids 6") < steps.index(lifted) < steps.index("reassign")


def planned(monkeypatch: pytest.MonkeyPatch, operation: str, named: list[str],
            answers: dict[tuple[str, ...], str], argv: dict[str, Any]) -> tuple[bool, list[str]]:
    """_something_to_do on k1 as the deploy is planned (also a dry run's only look, --dry):
    whether an operation is added, and what it said."""
    said: list[str] = []
    monkeypatch.setattr(day_two, "host", SimpleNamespace(
        name="k1", get_fact=lambda _fact, argv: answers[tuple(argv)]))
    monkeypatch.setattr(day_two, "logger", SimpleNamespace(info=said.append))
    return day_two._something_to_do(operation, named, argv), said


#: A KRaft cluster with a dedicated controller (ids_by_host holds it too) and its brokers' racks.
WITH_CONTROLLER = {**ARGV, "ids_by_host": {**HOSTS, "c1": 3001},
                   "brokers": {str(b): r for b, r in RACKS.items()}}
NOTHING_IN_FLIGHT = json.dumps({"done": True, "partitions": 0, "in_flight": []})


def test_a_scale_out_with_nothing_to_move_plans_nothing_though_a_controller_holds_no_replica(
        monkeypatch: pytest.MonkeyPatch) -> None:
    answers = {("placement",): placement(SPREAD),
               ("reassign-wait", "--dry-run"): NOTHING_IN_FLIGHT}
    assert planned(monkeypatch, "scale_out", [], answers, WITH_CONTROLLER) == (False, [])


def test_a_scale_out_planned_before_its_converge_moves_onto_the_broker_not_running_yet(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Planned before the converge starts broker 6 (and in --dry, which starts nothing): 6 is
    taken as running in its rack, holding nothing, and the moves onto it are said."""
    before = [[r if r != 6 else 5 for r in p] for p in SPREAD]
    answer = json.loads(placement(before))
    answer["brokers"] = [b for b in answer["brokers"] if b["id"] != 6]
    answers = {("placement",): json.dumps(answer),
               ("reassign-wait", "--dry-run"): NOTHING_IN_FLIGHT}
    todo, said = planned(monkeypatch, "scale_out", [], answers, WITH_CONTROLLER)
    assert todo is True
    assert said[0].startswith("k1: ") and "onto broker(s) 6" in said[0]
    assert "new replicas on broker(s) 6 (" in said[0]
    assert said[1:] and all(re.fullmatch(r"k1:   t-\d: [\d,]+ -> [\d,]*6[\d,]*", line)
                            for line in said[1:]), said


def test_a_decommission_rerun_takes_the_moves_in_flight_as_done_and_says_so(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An interrupted run's moves still in flight: they are waited for first (something to do),
    and what else moves is decided as if they were done: here nothing."""
    emptied = [[r if r != 6 else 5 for r in p] for p in SPREAD]
    in_flight = [{"topic": "t", "partition": i, "replicas": r}
                 for i, r in enumerate(emptied) if 6 in SPREAD[i]]
    answers = {("placement",): placement(SPREAD),
               ("reassign-wait", "--dry-run"): json.dumps(
                   {"done": False, "partitions": len(in_flight), "in_flight": in_flight})}
    todo, said = planned(monkeypatch, "decommission", ["k6"], answers, WITH_CONTROLLER)
    assert todo is True
    assert said == ["k1: 3 partition move(s) an interrupted run left in flight, waited for first",
                    "k1: broker(s) 6 to be stopped and unregistered"]


def test_a_replacements_catch_up_is_watched_then_cleared_even_when_the_watch_fails(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """OP-09: the wait says what is left until done; the throttle is cleared after it, and
    also when it fails (past its deadline), before the deploy stops."""
    decided = {"wait_argv": ["catch-up-wait"], "clear_argv": ["catch-up-clear"],
               "elect_argv": ["elect"], "health_argv": ["health"]}
    waits = [{"done": False, "said": "3 of 3 partitions not in sync yet"}, {"done": True}]
    ran: list[str] = []

    def run_on(name: str, argv: list[str], stdin: str | None = None) -> Ran:
        ran.append(" ".join(argv))
        if argv == ["catch-up-wait"]:
            answer = waits.pop(0)
            return Ran("error" not in answer, json.dumps(answer), answer.get("error", ""))
        return Ran(True, json.dumps({"cleared": []}), "")

    monkeypatch.setattr(base, "run_on", run_on)
    monkeypatch.setattr(base, "until_ok", lambda node, argv, timeout_s, delay_s: Ran(True, "", ""))
    monkeypatch.setattr(day_two, "host", SimpleNamespace(name="k1"))
    day_two.catch_up(decided, 60, 1)
    assert ran == ["catch-up-wait", "catch-up-wait", "catch-up-clear", "elect"]
    ran.clear()
    waits[:] = [{"done": False, "said": "", "error": "past the deadline"}]
    with pytest.raises(DeployError, match="watching the catch-up failed"):
        day_two.catch_up(decided, 60, 1)
    assert ran == ["catch-up-wait", "catch-up-clear"]


def test_an_emptying_of_log_directories_planned_says_each_replica_it_would_move(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """pyinfra's dry run (--dry) says what an emptying moves, replica by replica, as Ansible's
    check mode does (OP-11): the plan's words, from the placement's log directories."""
    answer = {"partitions": [{"topic": "t", "partition": 0, "replicas": [1, 2], "isr": [1, 2],
                              "min_insync": 1}],
              "brokers": [{"id": 1, "rack": "a", "log_dirs": {
                  "/d0/kafka": {"total": 100, "usable": 90, "replicas": {}},
                  "/d1/kafka": {"total": 100, "usable": 90, "replicas": {"t-0": 10}}}},
                  {"id": 2, "rack": "a", "log_dirs": {
                      "/d0/kafka": {"total": 100, "usable": 90, "replicas": {"t-0": 10}}}}]}
    answers = {("placement",): json.dumps(answer),
               ("reassign-wait", "--dry-run"): NOTHING_IN_FLIGHT}
    todo, said = planned(monkeypatch, "empty_log_dirs", ["k1:/d1"], answers, WITH_CONTROLLER)
    assert todo is True
    assert said[0].startswith("k1: 1 replica(s), 0.0 MiB, move off log directory k1:/d1")
    assert said[1:] == ["k1:   t-0: broker 1 /d1/kafka -> /d0/kafka"]


@pytest.mark.parametrize(("operation", "named", "installed"), [
    ("decommission", "c1", False),
    ("empty_log_dirs", "c1:/d1", False),
    ("decommission", "k9", False),
    ("decommission", "k6", True),
])
def test_a_name_that_is_no_brokers_stops_the_deploy_before_it_installs_anything(
        monkeypatch: pytest.MonkeyPatch, operation: str, named: str, installed: bool) -> None:
    """As playbooks/decommission.yml: the names are checked before the admin helper is
    installed (pyinfra's prepare stage, before any operation)."""
    calls: list[str] = []
    argv = DayTwoArgv(**{**WITH_CONTROLLER, "broker_ids": list(HOSTS.values())})
    monkeypatch.setattr(day_two, "host", SimpleNamespace(
        name="k1", groups=["kafka_broker"], data={day_two.NAMED[operation]: named}))
    monkeypatch.setattr(day_two, "plan", lambda: SimpleNamespace(install="install",
                                                                 day_two=argv))
    monkeypatch.setattr(day_two, "install_admin_helper", calls.append)
    monkeypatch.setattr(day_two, "play_hosts", lambda _group: [SimpleNamespace(name="k1")])
    monkeypatch.setattr(day_two, "_something_to_do", lambda *_: False)
    if installed:
        day_two._operation(operation)
    else:
        with pytest.raises(DeployError, match=f"^{named}: "):
            day_two._operation(operation)
    assert calls == (["install"] if installed else [])
