"""Declared users and ACLs: their checks, and the ACL plan against the admin helper's acl-list
answer."""

from __future__ import annotations

import json

from kafkaform.acls import acl_problems, parse_list, plan, user_problems

# The admin helper's acl-list answer, as the lab's brokers give it.
LISTED = json.dumps({"bindings": [
    ["TOPIC", "kf.events", "LITERAL", "User:pipeline", "*", "READ", "ALLOW"],
    ["TOPIC", "kf.events", "LITERAL", "User:pipeline", "*", "DESCRIBE", "ALLOW"],
    ["GROUP", "kafkaform-", "PREFIXED", "User:pipeline", "*", "READ", "ALLOW"],
]})

READ_EVENTS = {"principal": "User:pipeline", "resource_type": "topic",
               "resource_name": "kf.events", "operations": ["Read", "Describe"]}


def test_list_answer_parses_into_bindings() -> None:
    found = parse_list(LISTED)
    assert ("TOPIC", "kf.events", "LITERAL", "User:pipeline", "*", "READ", "ALLOW") in found
    assert ("GROUP", "kafkaform-", "PREFIXED", "User:pipeline", "*", "READ", "ALLOW") in found
    assert len(found) == 3


def test_declared_acls_already_present_plan_nothing() -> None:
    group = {"principal": "User:pipeline", "resource_type": "group", "resource_name": "kafkaform-",
             "pattern_type": "prefixed", "operations": ["Read"]}
    assert plan([READ_EVENTS, group], LISTED) == []


def test_missing_operations_are_added_and_nothing_undeclared_is_removed() -> None:
    wanted = {**READ_EVENTS, "operations": ["Read", "Describe", "DescribeConfigs"]}
    actions = plan([wanted], LISTED)
    assert [(a["action"], a["operations"]) for a in actions] == [("add", ["DESCRIBE_CONFIGS"])]
    assert all(a["action"] == "add" for a in plan([], LISTED) + actions)


def test_an_acl_declared_absent_is_removed_only_when_present() -> None:
    gone = {**READ_EVENTS, "state": "absent"}
    assert [a["action"] for a in plan([gone], LISTED)] == ["remove"]
    assert plan([gone], "") == []


def test_cluster_acls_name_the_cluster() -> None:
    acl = {"principal": "User:ops", "resource_type": "cluster", "operations": ["Describe"]}
    assert acl_problems([acl]) == []
    assert plan([acl], "")[0]["resource_name"] == "kafka-cluster"


def test_bad_acls_are_reported_with_what_to_fix() -> None:
    problems = acl_problems([
        {"principal": "pipeline", "resource_type": "topic", "resource_name": "t",
         "operations": ["Read"]},
        {"principal": "User:a", "resource_type": "group", "resource_name": "g",
         "operations": ["Write"]},
        {"principal": "User:a", "resource_type": "table", "resource_name": "t",
         "operations": ["Read"]},
        {"principal": "User:a", "resource_type": "topic", "resource_name": "t",
         "operations": ["Read"], "permission": "maybe", "colour": "red"},
    ])
    text = "\n".join(problems)
    assert "must look like User:<name>" in text
    assert "Write not valid on a group" in text
    assert "resource_type 'table'" in text
    assert "permission 'maybe'" in text and "unknown keys colour" in text


def test_users_need_names_and_real_passwords_never_shown() -> None:
    problems = user_problems([
        {"name": "admin", "password": "short", "superuser": True},
        {"name": "admin", "password": "long-enough-secret"},
        {"name": "bad name", "password": "long-enough-secret", "superuser": "yes"},
        {"name": "gone", "state": "absent"},
    ])
    text = "\n".join(problems)
    assert "admin needs a password of at least 8 characters" in text
    assert "declared twice" in text
    assert "'bad name'" in text and "superuser must be true or false" in text
    assert "short" not in text and "gone" not in text
