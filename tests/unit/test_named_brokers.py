"""The hosts a day-two operation names (plans.broker_moves.named_ids): a decommission, a
scale-out and a replacement refuse, before any host is touched, a name that is no broker of the
inventory, a KRaft controller's among them, naming the host, the setting and the fix; the same
check and the same words for every operation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kafkaform.plans.broker_moves import broker_moves, day_two_argv
from kafkaform.plans.replace import broker_replace

ROOT = Path(__file__).resolve().parents[2]
HOSTS = {f"kafka{i}": i for i in range(1, 4)}
CONTROLLERS = {"ctl1": 3001, "ctl2": 3002}


def argv(controllers: dict[str, int]) -> dict[str, Any]:
    """DayTwoArgv as vars, from a broker's context: ids_by_host names the controllers too."""
    kb = {"admin_argv": ["h"], "metadata_mode": "kraft" if controllers else "zookeeper",
          "release": "4.4.0", "health_options": ["--wait", "20"],
          "ids_by_host": {**HOSTS, **controllers}, "broker_ids": list(HOSTS.values())}
    return vars(day_two_argv(kb, 1.5, 600))


def refusal(operation: str, named: list[str], controllers: dict[str, int]) -> str:
    """The operation's refusal before the cluster is asked (no placement answer yet)."""
    if operation == "replace":
        return broker_replace(named, None, argv(controllers)).problem
    return broker_moves(operation, named, None, argv(controllers)).problem


def says(setting: str, rule: str, controllers: str = "", unknown: str = "") -> str:
    found = [f"{unknown}: not a host of the kafka_broker group, so it cannot be named in "
             f"{setting} ({rule}). Name brokers by their inventory hostnames"] if unknown else []
    return "; ".join(found + ([f"{controllers}: a KRaft controller, not a broker, so it cannot "
                               f"be named in {setting} ({rule}). Name hosts of the kafka_broker "
                               "group"] if controllers else []))


SETTINGS = {"decommission": ("kafka_broker_decommission_hosts", "OP-05"),
            # A scale-out's brokers take replicas: the rule of moves onto new brokers.
            "scale_out": ("kafka_broker_scale_out_hosts", "OP-06"),
            "replace": ("kafka_broker_replace_hosts", "OP-09")}
CASES = [
    ("a controller", ["ctl1"], CONTROLLERS, {"controllers": "ctl1"}),
    ("a broker and a controller", ["kafka3", "ctl2"], CONTROLLERS, {"controllers": "ctl2"}),
    ("no such host", ["kafka9"], CONTROLLERS, {"unknown": "kafka9"}),
    ("both at once", ["ctl1", "kafka9", "ctl2"], CONTROLLERS,
     {"unknown": "kafka9", "controllers": "ctl1, ctl2"}),
    # ZooKeeper mode: the inventory has no controller, a controller's name is no host at all.
    ("ZooKeeper mode", ["ctl1"], {}, {"unknown": "ctl1"}),
]


@pytest.mark.parametrize("operation", sorted(SETTINGS))
@pytest.mark.parametrize(("case", "named", "controllers", "words"), CASES,
                         ids=[c[0] for c in CASES])
def test_a_name_that_is_no_broker_is_refused_up_front_by_host_setting_and_fix(
        operation: str, case: str, named: list[str], controllers: dict[str, int],
        words: dict[str, str]) -> None:
    assert refusal(operation, named, controllers) == says(*SETTINGS[operation], **words), case


@pytest.mark.parametrize("operation", sorted(SETTINGS))
def test_brokers_named_pass_the_check_with_their_ids(operation: str) -> None:
    assert refusal(operation, ["kafka3", "kafka1"], CONTROLLERS) == ""
    if operation == "replace":
        assert broker_replace(["kafka3", "kafka1"], None, argv(CONTROLLERS)).ids == [3, 1]
    else:
        gate = broker_moves(operation, ["kafka3"], None, argv(CONTROLLERS))
        assert gate.leaving == (["kafka3"] if operation == "decommission" else [])


def test_a_decommission_naming_a_controller_is_refused_with_the_placement_too() -> None:
    """What the check replaces: the plan took the controller's node id for a broker that holds
    nothing, and decided to stop its host's Kafka and unregister the id."""
    answer = {"partitions": [{"topic": "t", "partition": 0, "replicas": [1, 2, 3],
                              "isr": [1, 2, 3], "min_insync": 2, "leader": 1}],
              "brokers": [{"id": i, "rack": "a"} for i in HOSTS.values()]}
    moves = broker_moves("decommission", ["ctl1"], answer, argv(CONTROLLERS))
    assert moves.problem == says(*SETTINGS["decommission"], controllers="ctl1")
    assert (moves.leaving, moves.unregister_argv, moves.reassignment) == ([], [], {})


@pytest.mark.parametrize(("operation", "named", "gated"), [
    ("decommission", ["kafka3"], "1,2"),
    ("scale_out", [], "1,2,3"),
    ("empty_log_dirs", ["/d1"], "1,2,3"),
])
def test_the_gate_before_anything_moves_names_brokers_never_a_dedicated_controller(
        operation: str, named: list[str], gated: str) -> None:
    """A dedicated controller is no broker registration: the brokers' health gate names the
    brokers alone, as the gate after the moves and the brokers' roll do (OP-06)."""
    for controllers in (CONTROLLERS, {}):
        gate = broker_moves(operation, named, None, argv(controllers))
        assert gate.problem == ""
        assert gate.health_argv == ["h", "health", "--ids", gated, "--wait", "20"]


@pytest.mark.parametrize(("playbook", "operation"), [
    ("decommission.yml", "decommission"), ("scale_out.yml", "scale_out"),
    ("empty_log_dirs.yml", "empty_log_dirs")])
def test_a_day_two_playbook_checks_the_names_before_any_host_changes(
        playbook: str, operation: str) -> None:
    """Each day-two playbook imports playbooks/day_two/check_names.yml right after the preflight:
    the read and the check of the names (tasks/moves_named.yml, which only decides and fails)
    come before the converge or the admin helper's install, so a bad name changes nothing on
    any host. tasks/moves.yml runs the same check first."""
    plays = yaml.safe_load((ROOT / "playbooks" / playbook).read_text())
    imported = [play.get("ansible.builtin.import_playbook") for play in plays]
    assert imported[:2] == ["preflight.yml", "day_two/check_names.yml"]
    assert plays[1]["vars"]["kafka_broker_moves_operation"] == operation
    check_play = yaml.safe_load((ROOT / "playbooks/day_two/check_names.yml").read_text())
    (block,) = check_play[0]["tasks"]
    steps = [t["ansible.builtin.include_role"]["tasks_from"] for t in block["block"]]
    assert steps == ["read.yml", "moves_named.yml"]
    tasks = ROOT / "roles/kafka_broker/tasks"
    check = yaml.safe_load((tasks / "moves_named.yml").read_text())
    assert {m for t in check for m in t if m.startswith("ansible.")} == {
        "ansible.builtin.set_fact", "ansible.builtin.fail"}
    moves = yaml.safe_load((tasks / "moves.yml").read_text())
    assert moves[0]["ansible.builtin.include_tasks"] == "moves_named.yml"
