"""Decisions are made once, in a role's plan (kafkaform.plans): a role that has one neither reads
its host by line position nor asks its host anything the plan's host read does not, and its
pyinfra deploy asks its host only through that read. The roles not moved onto a plan yet are
named, so that the list can only shrink."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ROLES = ROOT / "roles"
DEPLOYS = ROOT / "plugins" / "plugin_utils" / "kafkaform" / "deploys"

#: Roles whose every decision is in kafkaform.plans.<role>.
PLANNED = ("zookeeper", "kafka_broker", "spark_node", "spark_pipeline", "monitoring", "os_tuning",
           "artifact")
#: Roles without a plan of their own, and why none is needed.
WITHOUT_PLAN = {
    # Runs the kafka_broker role (and so its plan) with its own defaults beside it; its one task
    # file of its own stops a controller for good in a rollback (playbooks/kraft_rollback.yml).
    "kafka_controller": "runs kafka_broker's plan",
    # The one rolling restart every plan's roll terms are carried out by (deploys.base.Roll in
    # pyinfra): it decides nothing of a role, only the order its inputs give.
    "rolling_restart": "carries out the plans' roll terms",
}
#: Plans a role makes at run time from the live cluster (the kafkaform.plans filters), whose
#: command lines its tasks run like the plan's own: where a decommission's moves go, how a
#: replaced broker catches up.
RUNTIME_PLANS = {"kafka_broker": ("kafka_broker_moves.", "kafka_broker_moves_gate.",
                                  "kafka_broker_replace.", "kafka_broker_controller_removal.")}
#: Roles that still read a command's output by line position (`stdout_lines[N]`): none.
POSITIONAL_YET: set[str] = set()

_POSITIONAL = re.compile(r"stdout_lines\s*\[|stdout\.split\(\)\s*\[")
_QUESTIONS = re.compile(r"ansible\.builtin\.(?:command|shell|slurp|stat)\b")


def _yaml_of(role: str) -> dict[str, str]:
    return {str(p.relative_to(ROOT)): p.read_text() for p in sorted((ROLES / role).rglob("*.yml"))}


def test_every_role_has_a_plan_or_a_reason_it_needs_none() -> None:
    roles = {p.name for p in ROLES.iterdir() if (p / "tasks").is_dir()}
    assert roles == set(PLANNED) | set(WITHOUT_PLAN), (
        f"plan {sorted(roles - set(PLANNED) - set(WITHOUT_PLAN))} in kafkaform.plans and name "
        "it in PLANNED" if roles - set(PLANNED) - set(WITHOUT_PLAN) else
        f"{sorted(set(PLANNED) | set(WITHOUT_PLAN) - roles)} are no roles")
    assert not set(PLANNED) & set(WITHOUT_PLAN)


def test_only_the_named_roles_read_output_by_position() -> None:
    found = {path.split("/")[1] for role in (p.name for p in ROLES.iterdir())
             for path, text in _yaml_of(role).items() if _POSITIONAL.search(text)}
    found |= {"playbooks" for p in (ROOT / "playbooks").glob("*.yml")
              if _POSITIONAL.search(p.read_text())}
    assert found == POSITIONAL_YET, (
        "a role reads a command's output by line position: read it by label through the "
        "role's host read (kafkaform.plans.hostread)" if found - POSITIONAL_YET else
        f"{sorted(POSITIONAL_YET - found)} no longer read by position: drop them from "
        "POSITIONAL_YET")


@pytest.mark.parametrize("role", PLANNED)
def test_a_planned_role_asks_its_host_only_through_its_plan(role: str) -> None:
    """Its only command before the plan is the host read; its other commands are probes whose
    argument vectors the plan holds."""
    for path, text in _yaml_of(role).items():
        assert "stdout_lines" not in text, path
        for match in _QUESTIONS.finditer(text):
            after = text[match.end():match.end() + 200]
            planned = (f"{role}_plan.", f"{role}_host_read", *RUNTIME_PLANS.get(role, ()))
            assert any(name in after for name in planned), (
                f"{path}: {match.group(0)} with an argument vector of its own; put the "
                f"question in the host read or the probe in the plan")


@pytest.mark.parametrize("role", PLANNED)
def test_a_planned_deploy_asks_its_host_only_through_the_host_read(role: str) -> None:
    source = (DEPLOYS / f"{role}.py").read_text()
    asked = re.findall(r"get_fact\((\w+)", source)
    assert asked.count("CommandOutput") == 1, asked
    assert "host_read(" in source


#: Names a condition may read besides its role's plan and its role's own registered results: the
#: run's mode and which hosts the play runs on (the rolling restarts' marks among them).
_RUNTIME = {"ansible_check_mode", "ansible_play_hosts", "hostvars", "inventory_hostname"}
#: Jinja's own words.
_JINJA = {"not", "and", "or", "in", "is", "if", "else", "true", "false", "none", "defined"}


def _names(condition: str) -> set[str]:
    """The variables a condition reads: identifiers that are not string literals, attributes,
    filters, tests or calls."""
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "''", condition)
    found = set()
    for match in re.finditer(r"[A-Za-z_]\w*", text):
        before = text[:match.start()].rstrip()
        after = text[match.end():].lstrip()
        if before.endswith((".", "|")) or re.search(r"\bis(?: not)?$", before) \
                or after.startswith("(") or match[0] in _JINJA:
            continue
        found.add(match[0])
    return found


@pytest.mark.parametrize("role", PLANNED)
def test_a_planned_role_decides_nothing_its_plan_does_not(role: str) -> None:
    """Every condition of its tasks reads its plan, what its own tasks found at run time (a
    service start, an issued certificate, a stale daemon, registered or remembered as a fact),
    the run's mode or the play's hosts: the plan decides; the tasks only observe."""
    texts = _yaml_of(role)
    registered = {name for text in texts.values()
                  for name in re.findall(r"^\s*register: (\w+)$", text, flags=re.MULTILINE)}
    registered |= _remembered(texts.values()) - {f"{role}_plan"}
    allowed = {f"{role}_plan", *registered, *_RUNTIME}
    for path, text in texts.items():
        if "/tasks/" not in path:
            continue
        for condition in _conditions(text):
            assert _names(condition) <= allowed, (
                f"{path}: when: {condition} reads {sorted(_names(condition) - allowed)}; "
                f"decide it in kafkaform.plans.{role} and read the plan's field")


def _remembered(texts: Iterable[str]) -> set[str]:
    """The facts a role's tasks and handlers set (``ansible.builtin.set_fact``)."""
    found = set()
    for text in texts:
        for match in re.finditer(r"^(\s*)ansible\.builtin\.set_fact:\n((?:\1  .*\n)+)", text,
                                 flags=re.MULTILINE):
            found |= set(re.findall(rf"^{match[1]}  (\w+):", match[2], flags=re.MULTILINE))
    return found


def _conditions(text: str) -> list[str]:
    """Each ``when:`` of a task file: a folded one (``>-``) joined onto one line, each item of a
    list on its own."""
    found = []
    lines = text.splitlines()
    for index, line in enumerate(lines):
        matched = re.match(r"^(\s*)(?:- )?when:(.*)$", line)
        if not matched:
            continue
        if matched[2].strip() not in ("", ">-", ">", "|"):
            found.append(matched[2].strip())
            continue
        indent, parts = len(matched[1]), []
        for following in lines[index + 1:]:
            if following.strip() and len(following) - len(following.lstrip()) <= indent:
                break
            parts.append(following.strip())
        if matched[2].strip():
            found.append(" ".join(parts))
            continue
        for part in parts:  # a list: each item, its continuation lines joined onto it
            if part.startswith("- "):
                found.append(part.removeprefix("- "))
            elif found and part:
                found[-1] += " " + part
    return found


#: What a planned deploy may not call itself: the plan already holds what they decide (a
#: securing step's refusal, a setting's effect, the templates' context).
_OWN_CONTEXTS = "|".join(PLANNED)
_DECIDERS = re.compile(
    rf"\bsecurity_steps\b|\bsetting\(|\brelease_key\(|\b(?:{_OWN_CONTEXTS})_context\(")


@pytest.mark.parametrize("role", PLANNED)
def test_a_planned_deploy_decides_nothing_its_plan_does_not(role: str) -> None:
    source = (DEPLOYS / f"{role}.py").read_text()
    found = sorted({m[0] for m in _DECIDERS.finditer(source)})
    assert not found, (f"deploys/{role}.py calls {found}: decide it in kafkaform.plans.{role} "
                       "and read the plan's field")
