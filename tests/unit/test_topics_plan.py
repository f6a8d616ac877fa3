"""Declared topics: the plan from declared and current state (kafkaform.topics)."""

from __future__ import annotations

import json

from kafkaform.topics import declared_problems, parse_describe, plan

# The admin helper's describe answer: partitions, replication factor and non-default configs.
DESCRIBE = json.dumps({"topics": {
    "orders": {"partitions": 6, "replication_factor": 3,
               "configs": {"retention.ms": "86400000", "min.insync.replicas": 2}},
    "legacy": {"partitions": 1, "replication_factor": 1, "configs": {}},
}})


def current() -> dict[str, dict[str, object]]:
    return parse_describe(DESCRIBE)


def test_describe_answer_parses_into_partitions_rf_and_configs_as_text() -> None:
    assert current() == {
        "orders": {"partitions": 6, "replication_factor": 3,
                   "configs": {"retention.ms": "86400000", "min.insync.replicas": "2"}},
        "legacy": {"partitions": 1, "replication_factor": 1, "configs": {}},
    }


def test_missing_topic_is_created() -> None:
    result = plan([{"name": "clicks", "partitions": 12, "replication_factor": 2,
                    "configs": {"cleanup.policy": "delete"}}], current())
    assert result["refusals"] == []
    assert result["actions"] == [{
        "topic": "clicks", "action": "create", "partitions": 12, "replication_factor": 2,
        "configs": {"cleanup.policy": "delete"},
        "message": "create topic clicks: 12 partitions, replication factor 2, rack-aware"}]


def test_matching_declaration_changes_nothing() -> None:
    declared = [{"name": "orders", "partitions": 6, "replication_factor": 3,
                 "configs": {"retention.ms": 86400000, "min.insync.replicas": 2}}]
    assert plan(declared, current()) == {"actions": [], "refusals": []}


def test_partitions_grow_and_configs_converge() -> None:
    declared = [{"name": "orders", "partitions": 9, "replication_factor": 3,
                 "configs": {"retention.ms": 3600000}}]
    actions = plan(declared, current())["actions"]
    assert [a["action"] for a in actions] == ["partitions", "configs"]
    assert actions[0]["partitions"] == 9
    assert actions[1]["add"] == {"retention.ms": "3600000"}
    assert actions[1]["delete"] == []  # broker-level values shown by describe are left alone


def test_partition_decrease_is_refused_with_a_message() -> None:
    declared = [{"name": "orders", "partitions": 3, "replication_factor": 3,
                 "configs": {"retention.ms": 1}}]
    result = plan(declared, current())
    assert result["actions"] == []
    assert "refusing to decrease partitions from 6 to 3" in result["refusals"][0]["message"]


def test_replication_factor_change_is_refused() -> None:
    declared = [{"name": "legacy", "partitions": 1, "replication_factor": 3}]
    result = plan(declared, current())
    assert result["actions"] == []
    assert "replication factor from 1 to 3" in result["refusals"][0]["message"]


def test_undeclared_topics_are_never_touched() -> None:
    result = plan([], current())
    assert result == {"actions": [], "refusals": []}


def test_declaration_problems() -> None:
    problems = declared_problems([
        {"name": "__internal", "partitions": 1, "replication_factor": 1},
        {"name": "a.b_c", "partitions": 0, "replication_factor": 1},
        {"name": "ok", "partitions": 1, "replication_factor": 1},
        {"name": "ok", "partitions": 1, "replication_factor": 1},
    ])
    assert any("__internal" in p for p in problems)
    assert any("mixes periods and underscores" in p for p in problems)
    assert any("partitions must be a positive integer" in p for p in problems)
    assert any("declared twice" in p for p in problems)
    assert declared_problems([{"name": "kf.orders", "partitions": 3,
                               "replication_factor": 3}]) == []
