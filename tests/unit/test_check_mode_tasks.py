"""Check mode never fails on a skipped command's output: Ansible skips a command (or shell) task
in check mode unless it says ``check_mode: false``, and its registered result then has an empty
``stdout``, on which ``from_json`` fails. So every ``<result>.stdout | from_json`` of such a
result, in its own task's ``changed_when`` or in a later task, is read only where check mode
cannot reach it: after ``not ansible_check_mode`` in the same expression, or in a task whose
``when`` (its own or its block's) says ``not ansible_check_mode``."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = {"command", "shell", "ansible.builtin.command", "ansible.builtin.shell"}
GUARD = "not ansible_check_mode"


def _task_files() -> list[Path]:
    return sorted(p for p in (ROOT / "roles").glob("*/*/*.yml")
                  if p.parent.name in ("tasks", "handlers"))


def _when(task: Mapping[str, Any]) -> str:
    when = task.get("when", "")
    return " and ".join(map(str, when)) if isinstance(when, list) else str(when)


def _tasks(items: Any, inherited: str = "") -> Iterator[tuple[Mapping[str, Any], str]]:
    """Every task of a task list, blocks opened, with the ``when`` its blocks add to its own."""
    for task in items or []:
        if not isinstance(task, dict):
            continue
        when = " and ".join(w for w in (inherited, _when(task)) if w)
        if "block" in task:
            for part in ("block", "rescue", "always"):
                yield from _tasks(task.get(part), when)
        else:
            yield task, when


def _all_tasks() -> list[tuple[str, Mapping[str, Any], str]]:
    return [(str(path.relative_to(ROOT)), task, when) for path in _task_files()
            for task, when in _tasks(yaml.safe_load(path.read_text()))]


def skipped_in_check_mode() -> set[str]:
    """The results registered by a command that check mode skips."""
    return {str(task["register"]) for _path, task, _when in _all_tasks()
            if "register" in task and COMMANDS & set(task) and task.get("check_mode") is not False}


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def unguarded(task: Mapping[str, Any], when: str, skipped: set[str]) -> list[str]:
    """The skipped results whose stdout the task parses where check mode reaches it."""
    if GUARD in when:
        return []
    found = []
    for text in _texts({k: v for k, v in task.items() if k != "when"}):
        for match in re.finditer(r"\b(\w+)\.stdout\s*\|\s*from_json\b", text):
            if match[1] in skipped and GUARD not in text[:match.start()]:
                found.append(match[1])
    found += [m[1] for m in re.finditer(r"\b(\w+)\.stdout\s*\|\s*from_json\b", when)
              if m[1] in skipped]
    return found


def test_a_skipped_commands_output_is_never_parsed_in_check_mode() -> None:
    skipped = skipped_in_check_mode()
    found = [f"{path}: {task.get('name')}: {name}.stdout | from_json"
             for path, task, when in _all_tasks() for name in unguarded(task, when, skipped)]
    assert not found, (
        "check mode skips these commands, and from_json fails on their empty stdout: guard the "
        f"read with `{GUARD} and ...` (or give the read-only command check_mode: false):\n"
        + "\n".join(found))


@pytest.mark.parametrize(("task", "when", "bad"), [
    ({"name": "t", "changed_when": "(r.stdout | from_json).started > 0"}, "", ["r"]),
    ({"name": "t", "changed_when": "not ansible_check_mode and (r.stdout | from_json).x"}, "", []),
    ({"name": "t", "debug": {"msg": "{{ (r.stdout | from_json).warning }}"}},
     "x and not ansible_check_mode", []),
    ({"name": "t", "debug": {"msg": "{{ (r.stdout | from_json).warning }}"}},
     "(r.stdout | from_json).warning | length > 0", ["r", "r"]),
    ({"name": "t", "debug": {"msg": "{{ (ok.stdout | from_json).said }}"}}, "", []),
])
def test_the_check_finds_an_unguarded_read_and_passes_a_guarded_one(
        task: dict[str, Any], when: str, bad: list[str]) -> None:
    assert unguarded(task, when, {"r"}) == bad


def test_the_day_two_commands_that_change_the_cluster_are_the_ones_check_mode_skips() -> None:
    """The moves' start, the election and the unregistration change the cluster: check mode
    skips them (their reads are guarded above); every read of the day-two tasks runs."""
    skipped = skipped_in_check_mode()
    assert {"kafka_broker_moves_started", "kafka_broker_moves_elected",
            "kafka_broker_unregistered"} <= skipped
    assert not {"kafka_broker_moves_placement", "kafka_broker_moves_after",
                "kafka_broker_moves_waited", "kafka_broker_moves_cordoned",
                "kafka_broker_uncordoned"} & skipped
