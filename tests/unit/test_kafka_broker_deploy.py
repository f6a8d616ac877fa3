"""The kafka_broker role and its pyinfra deploy read what the declared topics, ACLs and users are
compared with in one admin helper run (roles/kafka_broker/files/kafkaform-kafka ``state``), then
apply the topics' and ACLs' changes in one run each (``apply``, ``acl-apply``), the list on stdin,
and run ``users`` only when a user changes; without a cluster."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from pyinfra.api.exceptions import DeployError

from kafkaform.deploys import kafka_broker
from kafkaform.deploys.base import Ran

ROLE_TASKS = Path(__file__).resolve().parents[2] / "roles/kafka_broker/tasks"
TOPICS = [{"name": "orders", "partitions": 3, "replication_factor": 2},
          {"name": "events", "partitions": 6, "replication_factor": 2}]
ACLS = [{"principal": "User:app", "resource_type": "topic", "resource_name": "orders",
         "operations": ["Read"]},
        {"principal": "User:app", "resource_type": "group", "resource_name": "app",
         "operations": ["Read"]}]


USERS = [{"name": "app", "password": "secret"}]
#: An empty cluster, whose one declared user a converge would create.
EMPTY = Ran(True, json.dumps({"topics": {}, "bindings": [], "users_changed": ["app"]}), "")


def converge(monkeypatch: pytest.MonkeyPatch, answer: dict[str, Ran],
             users: list[dict[str, str]] | None = None) -> list[tuple[list[str], str | None]]:
    """The helper runs of the deploy's converge of TOPICS, ACLS and ``users``, each answered
    from ``answer`` by its command (state: :data:`EMPTY`)."""
    ran: list[tuple[list[str], str | None]] = []
    answers = {"state": EMPTY, **answer}

    def run_on(name: str, argv: list[str], stdin: str | None = None) -> Ran:
        assert name == "kafka-1"
        ran.append((argv, stdin))
        return answers[argv[1]]

    monkeypatch.setattr(kafka_broker, "run_on", run_on)
    monkeypatch.setattr(kafka_broker, "host", SimpleNamespace(name="kafka-1"))
    kafka_broker._converge_declared(["helper"], {"topics": TOPICS, "users": users or [],
                                                 "acls": ACLS, "iterations": 8192})
    return ran


def test_the_deploy_applies_each_plans_changes_in_one_helper_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ran = converge(monkeypatch, {"apply": Ran(True, "", ""), "acl-apply": Ran(True, "", "")})
    assert [argv for argv, _stdin in ran] == [
        ["helper", "state"], ["helper", "apply", "-"], ["helper", "acl-apply", "-"]]
    assert json.loads(ran[0][1] or "") == {"topics": True, "acls": True, "users": None}
    assert [a["topic"] for a in json.loads(ran[1][1] or "")] == ["orders", "events"]
    assert [a["resource_name"] for a in json.loads(ran[2][1] or "")] == ["orders", "app"]


def test_the_deploy_sets_users_only_when_one_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    done = {"apply": Ran(True, "", ""), "acl-apply": Ran(True, "", ""),
            "users": Ran(True, json.dumps({"changed": ["app"]}), "")}
    ran = converge(monkeypatch, done, USERS)
    assert [argv[1] for argv, _stdin in ran] == ["state", "apply", "users", "acl-apply"]
    assert json.loads(ran[0][1] or "")["users"]["users"] == USERS  # on stdin, not in argv
    converged = Ran(True, json.dumps({"topics": {t["name"]: {
        "partitions": t["partitions"], "replication_factor": 2, "configs": {}} for t in TOPICS},
        "bindings": [], "users_changed": []}), "")
    ran = converge(monkeypatch, {**done, "state": converged}, USERS)
    assert [argv[1] for argv, _stdin in ran] == ["state", "acl-apply"]


def test_the_deploy_stops_with_what_the_helper_says_of_the_action_that_failed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    failed = Ran(False, "create topic orders: 3 partitions, replication factor 2, rack-aware\n",
                 "kafkaform-kafka: action 2 of 2 failed, 'create topic events: ...': ...")
    with pytest.raises(DeployError, match=r"kafka-1: applying the topic changes failed: "
                                          r"create topic orders.*action 2 of 2 failed"):
        converge(monkeypatch, {"apply": failed})


@pytest.mark.parametrize(("tasks", "command", "actions"), [
    ("topics.yml", "apply", "kafka_broker_topics_plan.actions"),
    ("access.yml", "acl-apply", "kafka_broker_acls_plan"),
])
def test_the_role_applies_each_plans_changes_in_one_task(tasks: str, command: str,
                                                         actions: str) -> None:
    """One helper run for the whole list (no loop), only when the list has an action."""
    found = [t for t in yaml.safe_load((ROLE_TASKS / tasks).read_text())
             if f"'{command}'" in str(t.get("ansible.builtin.command", {}).get("argv"))]
    assert len(found) == 1, found
    (task,) = found
    assert "loop" not in task
    assert task["ansible.builtin.command"]["argv"].endswith(f"['{command}', '-'] }}}}")
    assert task["ansible.builtin.command"]["stdin"] == f"{{{{ {actions} | to_json }}}}"
    assert task["when"].endswith(f"{actions} | length > 0")
