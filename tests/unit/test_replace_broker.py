"""Replacing a dead broker's host keeping its id (kafkaform.plans.replace, OP-09), from a placement
answer as the admin helper gives it: refusals table-tested with their messages, the helper's
command lines, and the same decisions in KRaft and in ZooKeeper mode (the plan reads the same
answer; only the helper's calls differ by mode, as plans.broker_moves builds them)."""

from __future__ import annotations

from typing import Any

import pytest

from kafkaform.plans.broker_moves import day_two_argv
from kafkaform.plans.replace import broker_replace, broker_replace_vars, verify_argv

HOSTS = {f"kafka{i}": i for i in range(1, 7)}
RACKS = {1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}


def argv(mode: str) -> dict[str, Any]:
    """DayTwoArgv as vars, from a broker's context in ``mode`` (kraft, zookeeper)."""
    controllers = {f"ctl{i}": 3000 + i for i in (1, 2, 3)} if mode == "kraft" else {}
    kb = {"admin_argv": ["h"], "metadata_mode": mode, "release": "4.4.0" if mode == "kraft"
          else "3.9.1", "health_options": ["--wait", "20"],
          "ids_by_host": {**HOSTS, **controllers}, "broker_ids": list(HOSTS.values())}
    return vars(day_two_argv(kb, 1.5, 600))


#: Six partitions over 6 brokers in 3 racks, one replica per rack.
SPREAD = [[1, 3, 5], [2, 4, 6], [3, 5, 1], [4, 6, 2], [5, 1, 3], [6, 2, 4]]


def answer(isr: dict[int, list[int]] | None = None, brokers: list[int] | None = None,
           leaders: dict[int, int] | None = None) -> dict[str, Any]:
    """kf.orders over SPREAD, broker 6 dead (not registered, out of every ISR) unless
    ``brokers`` says otherwise; ``isr`` overrides partition i's in-sync replicas."""
    live = [1, 2, 3, 4, 5] if brokers is None else brokers
    parts = []
    for i, replicas in enumerate(SPREAD):
        in_sync = (isr or {}).get(i, [r for r in replicas if r in live])
        parts.append({"topic": "kf.orders", "partition": i, "replicas": replicas,
                      "isr": in_sync, "min_insync": 2,
                      "leader": (leaders or {}).get(i, in_sync[0] if in_sync else -1)})
    return {"partitions": parts, "brokers": [{"id": b, "rack": RACKS[b]} for b in live]}


@pytest.mark.parametrize("mode", ["kraft", "zookeeper"])
def test_a_dead_broker_is_throttled_converged_waited_for_and_cleared(mode: str) -> None:
    plan = broker_replace(["kafka6"], answer(), argv(mode))
    assert plan.problem == ""
    assert (plan.replaced, plan.ids, plan.catch_up) == (["kafka6"], [6], True)
    assert plan.summary == ("broker(s) 6 (kafka6) hold 3 partition(s), 3 not in sync; broker(s) "
                            "6 not running; the catch-up is throttled before the host starts")
    assert plan.throttle_argv == ["h", "catch-up-throttle", "--throttle", str(int(1.5 * 2**20)),
                                  "--timeout", "600", "--ids", "6"]
    assert plan.wait_argv == ["h", "catch-up-wait", "--for", "30", "--ids", "6"]
    assert plan.clear_argv == ["h", "catch-up-clear"]
    assert plan.elect_argv == ["h", "elect"]
    assert plan.health_argv == ["h", "health", "--ids", "1,2,3,4,5,6", "--wait", "20"]
    assert plan.catching_up == ["kafka6"]


@pytest.mark.parametrize("mode", ["kraft", "zookeeper"])
def test_a_broker_in_sync_has_nothing_to_catch_up_but_a_left_throttle_is_cleared(mode: str) -> None:
    """A rerun on a caught-up broker: no throttle, no wait; the clear (of what an interrupted
    run may have left) and the election still run, and change nothing when nothing is left."""
    plan = broker_replace("kafka6", answer(brokers=[1, 2, 3, 4, 5, 6]), argv(mode))
    assert (plan.problem, plan.catch_up, plan.throttle_argv, plan.wait_argv) == ("", False, [], [])
    assert plan.summary == ("broker(s) 6 (kafka6) hold 3 partition(s), every one in sync: "
                            "nothing to catch up")
    assert plan.clear_argv == ["h", "catch-up-clear"]


def test_a_rerun_finds_the_broker_registered_and_catching_up() -> None:
    """Interrupted mid-catch-up: broker 6 runs, two partitions still out of sync."""
    plan = broker_replace("kafka6", answer(brokers=[1, 2, 3, 4, 5, 6],
                                           isr={1: [2, 4], 3: [4, 2]}), argv("kraft"))
    assert (plan.problem, plan.catch_up) == ("", True)
    assert "2 not in sync; the catch-up" in plan.summary


OP = "(OP-09)"
REFUSED = [
    ("no host", "", answer(), (
        "no broker named: set kafka_broker_replace_hosts to the hosts of the kafka_broker group "
        f"whose broker ids new, empty hosts take {OP}")),
    ("not a broker", "kafka9", answer(), (
        "kafka9: not a host of the kafka_broker group, so it cannot be named in "
        f"kafka_broker_replace_hosts {OP}. Name brokers by their inventory hostnames")),
    ("an id the cluster does not know is a scale-out", "kafka6",
     {"partitions": [{"topic": "t", "partition": 0, "replicas": [1, 3, 5], "isr": [1, 3, 5],
                      "min_insync": 2, "leader": 1}],
      "brokers": [{"id": b, "rack": RACKS[b]} for b in (1, 2, 3, 4, 5)]}, (
        "broker 6 (kafka6): the cluster does not know this id (not registered, no replica on "
        "it), so a new host under it is a new broker, not a replacement (OP-09). Run "
        "playbooks/scale_out.yml -e kafka_broker_scale_out_hosts=kafka6 instead")),
    ("another broker down", "kafka6", answer(brokers=[1, 2, 3, 5]), (
        "broker 4 (kafka4) hold replicas but are not running either: the cluster is unhealthy "
        "beyond the broker(s) replaced (OP-09). Start them first, or name them in "
        "kafka_broker_replace_hosts too if their hosts are replaced as well")),
    ("another broker out of sync", "kafka6", answer(isr={0: [1, 3]}), (
        "1 partition(s) are out of sync on brokers that are not replaced: kf.orders-0 (replicas "
        "1, 3, 5, in sync on 1, 3) (OP-09). Wait until they are back in sync and run again")),
    ("a partition in sync only on the dead broker", "kafka6",
     answer(isr={1: [6]}, leaders={1: -1}), (
         "1 partition(s) have no in-sync replica but on the broker(s) replaced, so their data is "
         "offline already and an empty host under the id cannot bring it back: kf.orders-1 "
         "(replicas 2, 4, 6, in sync on 6) (OP-09). Bring the old host's disks back and start it "
         "as it was if at all possible; to give up what only those brokers held (those "
         "partitions come back empty, or stay offline), run again with -e "
         "kafka_broker_replace_accept_data_loss=true")),
]


@pytest.mark.parametrize("mode", ["kraft", "zookeeper"])
@pytest.mark.parametrize(("case", "named", "found", "problem"), REFUSED,
                         ids=[r[0] for r in REFUSED])
def test_refusals_name_the_host_the_setting_and_the_fix(
        mode: str, case: str, named: str, found: dict[str, Any], problem: str) -> None:
    plan = broker_replace(named, found, argv(mode))
    assert plan.problem == problem, case
    assert (plan.throttle_argv, plan.clear_argv) == ([], [])  # nothing to run: refused


def test_two_replaced_brokers_holding_a_partitions_only_in_sync_replicas_lose_it() -> None:
    """Replacing 4 and 6 at once: partition 1 (2, 4, 6) is in sync on 2, so nothing is lost;
    with 2 out too it would be: the plan counts every replaced broker together."""
    fine = broker_replace("kafka4,kafka6", answer(brokers=[1, 2, 3, 5]), argv("kraft"))
    assert (fine.problem, fine.ids) == ("", [4, 6])
    lost = broker_replace("kafka4,kafka6", answer(brokers=[1, 2, 3, 5], isr={1: [4, 6]},
                                                  leaders={1: -1}), argv("kraft"))
    assert "kf.orders-1 (replicas 2, 4, 6, in sync on 4, 6)" in lost.problem


def test_the_loss_accepted_is_said_and_the_run_goes_on() -> None:
    found = answer(isr={1: [6]}, leaders={1: -1})
    plan = broker_replace_vars("kafka6", found, argv("kraft"), "true")
    assert (plan["problem"], plan["catch_up"]) == ("", True)
    assert plan["warning"] == (
        "kafka_broker_replace_accept_data_loss is set: 1 partition(s) had no in-sync replica but "
        "on the broker(s) replaced and lose what only they held: kf.orders-1 (replicas 2, 4, 6, "
        "in sync on 6) (OP-09)")
    assert broker_replace_vars("kafka6", found, argv("kraft"), "false")["problem"]


def test_without_an_answer_only_the_names_are_checked() -> None:
    gate = broker_replace("kafka6", None, argv("kraft"))
    assert (gate.problem, gate.replaced, gate.ids, gate.throttle_argv) == ("", ["kafka6"], [6], [])
    assert broker_replace("kafka9", None, argv("kraft")).problem.startswith("kafka9: not a host")


def test_the_converge_check_excuses_only_the_brokers_catching_up() -> None:
    kb = {"admin_argv": ["h"], "verify_args": ["health", "--ids", "1,2"],
          "ids_by_host": {"kafka1": 1, "kafka2": 2}}
    assert verify_argv(kb, []) == ["h", "health", "--ids", "1,2"]
    assert verify_argv(kb, ["kafka2"]) == ["h", "health", "--ids", "1,2", "--catching-up", "2"]
    assert verify_argv(kb, "kafka2,kafka9") == [
        "h", "health", "--ids", "1,2", "--catching-up", "2"]
