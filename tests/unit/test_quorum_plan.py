"""A KRaft cluster's controller quorum (plans/quorum.py, KR-15, OP-12): how a dynamic quorum's
nodes find it and are formatted, when a controller joins it, the refusals of a removal and of a
switch between kinds, and the preflight's check of the setting."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from kafkaform import model
from kafkaform.checks import check
from kafkaform.plans.kafka_broker import KafkaBrokerHost, host_read, kafka_broker_plan, parse_host
from kafkaform.plans.quorum import controller_removal, directory_id, first_voters
from kafkaform.plans.running_cluster import running_cluster
from tests.unit.test_checks import kraft, view_of, with_controllers

BOOTSTRAP = ("controller.quorum.bootstrap.servers="
             "${file:/etc/kafka/quorum.properties:controller.quorum.bootstrap.servers}")


def cluster(**settings: Any) -> dict[str, Any]:
    return model.build(view_of(kraft("a", "b", "c"), {"kafka_cluster_name": "orders",
                                                      **settings})).to_dict()


def dynamic(**taken: Any) -> dict[str, Any]:
    return {**cluster(kafka_controller_quorum="dynamic"), **taken}


def lines(text: str) -> list[str]:
    return text.splitlines()


def test_a_dynamic_quorums_nodes_find_it_in_a_file_no_restart_waits_on() -> None:
    for host in ("c2", "k1"):
        p = kafka_broker_plan(dynamic(), host, {}, KafkaBrokerHost())
        props = lines(p.context["server_properties"])
        assert BOOTSTRAP in props and not [x for x in props if "quorum.voters" in x], host
        quorum = next(f for f in p.files if f.dest == "/etc/kafka/quorum.properties")
        assert quorum.content == ("controller.quorum.bootstrap.servers="
                                  "c1:9094,c2:9094,c3:9094\n")
        assert not quorum.restarts and quorum.dest not in p.context["restart_files"]


def test_a_static_quorum_keeps_its_voters_and_has_no_quorum_file() -> None:
    p = kafka_broker_plan(cluster(), "c2", {}, KafkaBrokerHost())
    assert "controller.quorum.voters=3001@c1:9094,3002@c2:9094,3003@c3:9094" in lines(
        p.context["server_properties"])
    assert not [f for f in p.files if f.dest.endswith("quorum.properties")]
    assert p.format_storage_argv[-2:] != ["--no-initial-controllers"]
    assert "--initial-controllers" not in p.format_storage_argv
    assert (p.quorum.dynamic, p.quorum.join_argv) == (False, [])


def test_a_new_dynamic_quorums_controllers_are_formatted_with_the_same_first_voters() -> None:
    formats = {h: kafka_broker_plan(dynamic(), h, {}, KafkaBrokerHost()).format_storage_argv
               for h in ("c1", "c2", "c3")}
    options = {h: argv[argv.index("--initial-controllers"):] for h, argv in formats.items()}
    assert len({tuple(o) for o in options.values()}) == 1
    voters = options["c1"][1].split(",")
    cluster_id = dynamic()["cluster_id"]
    assert voters == [f"{3000 + i}@c{i}:9094:{directory_id(cluster_id, 3000 + i)}"
                      for i in (1, 2, 3)]
    assert first_voters(dynamic()) == options["c1"][1]
    # A broker of the same cluster is formatted without voters of its own.
    broker = kafka_broker_plan(dynamic(), "k1", {}, KafkaBrokerHost()).format_storage_argv
    assert not [a for a in broker if "initial-controllers" in a]


def test_a_controller_added_to_a_formed_quorum_joins_it() -> None:
    p = kafka_broker_plan(dynamic(quorum_formed=True), "c3", {}, KafkaBrokerHost())
    assert p.format_storage_argv[-1] == "--no-initial-controllers"
    assert p.quorum.join_argv[:len(p.admin_argv)] == p.admin_argv
    assert p.quorum.join_argv[len(p.admin_argv):] == [
        "quorum-join", "--max-lag", "1000", "--wait", str(int(p.roll.timeout_s))]
    assert kafka_broker_plan(dynamic(), "k1", {}, KafkaBrokerHost()).quorum.join_argv == []


def test_directory_ids_are_kafka_uuids_stable_and_distinct() -> None:
    ids = {directory_id("MkU3OEVBNTcwNTJENDM2Qg", n) for n in range(3001, 3200)}
    assert len(ids) == 199
    assert all(len(i) == 22 and not i.startswith("-") and "=" not in i for i in ids)
    assert directory_id("x", 1) == directory_id("x", 1) != directory_id("y", 1)


def _read(cluster_id: str = "", config: str | None = None,
          started: bool = False) -> KafkaBrokerHost:
    return KafkaBrokerHost(cluster_id=cluster_id, running_config=config,
                           metadata_log_written=started)


def test_the_quorum_is_formed_once_a_leader_wrote_a_controllers_metadata_log() -> None:
    held = dynamic()["cluster_id"]
    broker_ran = {"k1": _read(held, started=True), "c1": _read()}
    assert not running_cluster(dynamic(), broker_ran, {}).quorum_formed
    formed = running_cluster(dynamic(), {"c2": _read(held, started=True), "c1": _read()}, {})
    assert formed.quorum_formed and formed.taken["quorum_formed"] is True


def test_a_first_format_stopped_midway_formats_the_rest_with_the_same_first_voters() -> None:
    # c1 was formatted with the first voters, then the run stopped before any controller started.
    held = dynamic()["cluster_id"]
    reads = {"c1": _read(held), "c2": _read(), "c3": _read()}
    taken = running_cluster(dynamic(), reads, {})
    assert not taken.quorum_formed
    rest = kafka_broker_plan(dynamic(**taken.taken), "c2", {}, KafkaBrokerHost())
    assert rest.format_storage_argv[-2:] == ["--initial-controllers", first_voters(dynamic())]


def test_the_read_tells_a_quorum_that_had_a_leader_from_one_only_formatted(tmp_path: Path) -> None:
    shape = dynamic()
    metadata = tmp_path / "metadata"
    shape["controllers_by_host"]["c1"] = {**shape["controllers_by_host"]["c1"],
                                          "metadata_dir": str(metadata)}

    def read() -> KafkaBrokerHost:
        argv = host_read(shape, "c1", {})
        return parse_host(subprocess.run(argv, capture_output=True, text=True,
                                         check=True).stdout)

    assert not read().metadata_log_written
    log = metadata / "__cluster_metadata-0"
    log.mkdir(parents=True)
    # What the format of a dynamic quorum's controller leaves: the bootstrap checkpoint.
    (log / "00000000000000000000-0000000000.checkpoint").write_bytes(b"\0")
    assert not read().metadata_log_written
    # Started, but its fellow first voters were not formatted yet: no leader, an empty segment.
    (log / "00000000000000000000.log").write_bytes(b"")
    assert not read().metadata_log_written
    (log / "00000000000000000000.log").write_bytes(b"\0" * 64)
    assert read().metadata_log_written


@pytest.mark.parametrize(("settings", "running", "said"), [
    ({"kafka_controller_quorum": "dynamic"}, "controller.quorum.voters=3001@c1:9094\n",
     "c1 run a static controller quorum (controller.quorum.voters), but "
     "kafka_controller_quorum is dynamic"),
    ({}, f"{BOOTSTRAP}\n", "c1 run a dynamic controller quorum, but kafka_controller_quorum is "
     "static: a dynamic quorum never becomes static again (KR-15"),
])
def test_a_running_quorum_keeps_its_kind(settings: dict[str, Any], running: str,
                                         said: str) -> None:
    found = running_cluster(cluster(**settings), {"c1": _read(config=running)}, {})
    assert said in found.problem
    same = running_cluster(cluster(**settings), {"c1": _read(config=None)}, {})
    assert same.problem == ""


@pytest.mark.parametrize("kind", [model.STATIC_QUORUM, model.DYNAMIC_QUORUM])
def test_whether_the_quorum_is_dynamic_is_one_value_of_the_model_every_part_reads(
        kind: str) -> None:
    """The model decides it once (dynamic_quorum); the plans and the server.properties read
    that value, never the setting's words again: with the words flipped under it, every part
    still follows the value."""
    declared = cluster(kafka_controller_quorum=kind)
    dyn = kind == model.DYNAMIC_QUORUM
    assert declared["dynamic_quorum"] is dyn
    flipped = {**declared, "controller_quorum": model.STATIC_QUORUM if dyn
               else model.DYNAMIC_QUORUM}
    p = kafka_broker_plan(flipped, "c2", {}, KafkaBrokerHost())
    props = lines(p.context["server_properties"])
    assert (BOOTSTRAP in props, any(f.dest.endswith("quorum.properties") for f in p.files),
            p.quorum.dynamic, bool(p.quorum.join_argv),
            "--initial-controllers" in p.format_storage_argv) == (dyn,) * 5
    assert any(x.startswith("controller.quorum.voters=") for x in props) is not dyn
    found = running_cluster(flipped, {"c1": _read(config=f"{BOOTSTRAP}\n")}, {})
    assert ("a dynamic quorum never becomes static again" in found.problem) is not dyn


def _quorums(**given: Any) -> dict[str, dict[str, Any]]:
    plans = {h: kafka_broker_plan(dynamic(), h, {}, KafkaBrokerHost()).quorum.as_vars()
             for h in ("c1", "c2", "c3")}
    return {h: {**q, **given} for h, q in plans.items()}


@pytest.mark.parametrize(("named", "given", "said"), [
    ("", {}, "no controller named: set kafka_controller_remove_host"),
    ("k1", {}, "k1: not a host of the kafka_controller group (c1, c2, c3), so "
     "kafka_controller_remove_host cannot name it (OP-12"),
    ("c3", {"dynamic": False}, "c3: the controllers' quorum is static"),
    ("c3", {"combined": ["c3"]}, "c3: a combined node (broker and controller)"),
    ("c3", {}, "c3: the quorum would keep 2 voter(s), fewer than 3"),
])
def test_a_removal_is_refused_before_anything_changes(named: str, given: dict[str, Any],
                                                      said: str) -> None:
    found = controller_removal(named, _quorums(**given))
    assert said in found.problem and found.remove_argv == []


def test_a_removal_is_asked_of_the_first_controller_that_stays() -> None:
    four = {"c4": 3004}
    quorums = _quorums()
    quorums = {h: {**q, "controllers": {**q["controllers"], **four}} for h, q in quorums.items()}
    found = controller_removal("c1", quorums)
    assert (found.problem, found.host, found.node_id, found.runner) == ("", "c1", 3001, "c2")
    assert found.remove_argv == [*quorums["c2"]["remove_argv"], "--ids", "3001"]
    assert "leaves the controllers' voters once the other 3 are caught up" in found.summary
    # Only c1 answered the run: no controller to ask the quorum.
    alone = controller_removal("c2", {"c1": quorums["c1"]} | {})
    assert alone.problem == "" and alone.runner == "c1"
    gone = controller_removal("c1", {"c1": quorums["c1"]})
    assert "no other controller answered this run" in gone.problem
    # A lab's single controller allowed: two may stay.
    assert controller_removal("c3", _quorums(allow_single=True)).problem == ""
    # The 3 that stay must keep no rack majority (KR-03): c4 shares rack a with c1.
    racked = {h: {**q, "racks": {**q["racks"], "c4": "a"}} for h, q in quorums.items()}
    assert controller_removal("c4", racked).problem == ""
    crowded = controller_removal("c2", racked)
    assert crowded.problem.startswith("c2: the 3 controllers that stay would put 2 in rack a, a "
                                      "majority: losing that rack would lose the quorum (OP-12")
    assert "Remove a controller of rack a instead" in crowded.problem


def test_the_preflight_names_a_quorum_kind_it_does_not_know_or_cannot_run() -> None:
    def kr15(spec: Any, **settings: Any) -> list[str]:
        return [f.message for f in check(view_of(spec, settings)) if f.rule == "KR-15"]

    assert kr15(kraft("a", "b", "c"), kafka_controller_quorum="elastic") == [
        "kafka_controller_quorum is 'elastic'"]
    assert kr15(kraft("a", "b", "c"), kafka_controller_quorum="dynamic") == []
    assert "a migration from ZooKeeper runs a static quorum" in kr15(
        with_controllers("a", "b", "c"), kafka_controller_quorum="dynamic")[0]


def test_an_even_count_of_controllers_is_a_step_on_a_dynamic_quorum_only() -> None:
    four = kraft("a", "b", "c")
    four["kafka_controller"]["c4"] = {"kafka_node_id": 3004, "rack": "a"}

    def kr01(**settings: Any) -> list[tuple[str, str]]:
        return [(f.severity, f.fix) for f in check(view_of(four, settings)) if f.rule == "KR-01"]

    assert kr01() == [("error", "use 3 or 5 controllers")]
    assert kr01(kafka_controller_quorum="dynamic") == [
        ("warning", "use 3 or 5 controllers once the change is done (remove_controller.yml)")]
