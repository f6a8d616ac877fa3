"""The rule catalogue: every rule id the code, the roles and the docs cite, defined once.

The rules themselves are data, in ``rules.yml`` beside this module; this module reads them at
import and renders them. A check that reports a problem takes its rule's id through :func:`cite`,
so an id missing from the catalogue fails the check itself, and
``tests/unit/test_rules_catalogue.py`` fails on any rule-id-shaped token in the repository that is
not defined there. ``RULES.md`` is generated from the catalogue::

    python -m kafkaform.rules           # write RULES.md at the collection root
    python -m kafkaform.rules --check   # exit 1 when RULES.md differs from the catalogue
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from .defaults import SAFE_LOADER

# Where the code that reports violations lives, as checker() names it in RULES.md's summary.
_PKG = "plugins/plugin_utils/kafkaform"
PREFLIGHT = f"{_PKG}/checks/"
TOPIC_PLAN = f"{_PKG}/topics.py"
CAPACITY_PLAN = f"{_PKG}/sizing.py"
FAILURE_MARGINS = f"{_PKG}/topology.py"


@dataclass(frozen=True)
class Rule:
    """One rule: what it asks (title), why, how to meet it (fix), and what checks it.

    ``checked_by`` lists the files (from the collection root) whose code reports a violation:
    Python checks cite the id through :func:`cite`, task files and live-host tests name it. An
    empty ``checked_by`` marks a rule no code checks.
    """

    id: str
    title: str
    why: str
    fix: str
    checked_by: tuple[str, ...]

    @property
    def enforced(self) -> bool:
        return bool(self.checked_by)


def _load(path: Path) -> tuple[dict[str, str], tuple[Rule, ...]]:
    """The prefixes and the rules of the catalogue file, in its order."""
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=SAFE_LOADER)
    rules = tuple(Rule(entry["id"], entry["title"], entry["why"], entry["fix"],
                       tuple(entry["checked_by"])) for entry in data["rules"])
    return dict(data["prefixes"]), rules


#: The catalogue's data, kept apart from its code so that a rule reads as text.
CATALOGUE_FILE = Path(__file__).resolve().parent / "rules.yml"
#: Rule id prefixes and the area each covers, in the order RULES.md lists them; every rule.
PREFIXES, CATALOGUE = _load(CATALOGUE_FILE)

#: A rule id as the code and the docs cite it: a known prefix, a dash, digits.
ID_PATTERN = re.compile(r"\b(?:" + "|".join(PREFIXES) + r")-\d+\b")

#: The catalogue by id.
RULES: dict[str, Rule] = {rule.id: rule for rule in CATALOGUE}


def cite(rule_id: str) -> str:
    """``rule_id`` itself, once it is known to be in the catalogue: what a check names."""
    if rule_id not in RULES:
        raise LookupError(f"rule {rule_id} is not in the catalogue (kafkaform/rules.yml)")
    return rule_id


def _ordered() -> list[Rule]:
    order = list(PREFIXES)
    return sorted(RULES.values(), key=lambda r: (order.index(r.id[:2]), int(r.id[3:])))


#: The plans named after the role that runs them (plans/<role>.py).
ROLE_PLANS = frozenset({"artifact", "kafka_broker", "monitoring", "os_tuning", "spark_node",
                        "spark_pipeline", "zookeeper"})


def checker(path: str) -> str:
    """A short name for the code at ``path`` that checks a rule, for the summary table."""
    if path.startswith(PREFLIGHT):
        return "preflight"
    if path == TOPIC_PLAN:
        return "kafka_broker role"
    if path == CAPACITY_PLAN:
        return "kafkaform plan"
    if path == FAILURE_MARGINS:
        return "kafkaform topology"
    if path.startswith("roles/"):
        return f"{path.split('/')[1]} role"
    if "/plans/" in path:
        # A role's plan: both the role and its pyinfra deploy refuse by it. A plan shared by
        # the roles (a rolling restart's batches) is both engines' too.
        stem = Path(path).stem
        return f"{stem} role" if stem in ROLE_PLANS else "roles and pyinfra"
    if "/contexts/" in path:
        # The preflight runs each role's input checks (checks.role_inputs) before any host.
        return f"preflight ({Path(path).stem} inputs)"
    if "/verify/" in path:
        return "live-host tests"
    if path.startswith("benchmarks/"):
        return "drills"
    if "/cloud/" in path:
        return "kafkaform cloud"
    return path


def _anchor(rule_id: str) -> str:
    return f"#{rule_id.lower()}"


def render() -> str:
    """RULES.md: a summary table, then every rule by area with why, how to meet it and what
    checks it."""
    from .role_docs import markdown_text, wrap

    def md(text: str) -> str:
        # Rule ids in the text link to their entries.
        return ID_PATTERN.sub(lambda m: f"[{m[0]}]({_anchor(m[0])})", markdown_text(text))

    rules = _ordered()
    lines = [
        "<!-- Generated from plugins/plugin_utils/kafkaform/rules.yml: edit that, then run "
        "`python -m kafkaform.rules`. -->",
        "",
        "# Rules",
        "",
        wrap("Every rule id the code, the roles and this repository's documents cite is defined "
             "here. A check that finds a rule broken names its id, what is wrong and how to fix "
             "it. *Checked by* names the code that reports a violation: the preflight "
             "(`kafkaform check`, `playbooks/preflight.yml`) before any host is touched, a "
             "role's check before it changes a host or its verification after, a live-host test "
             "or a drill. A rule marked *documented only* is applied by the roles' defaults, "
             "templates and tasks, and no check reports a violation."),
        "",
        "| Rule | What it asks | Checked by |",
        "| --- | --- | --- |",
    ]
    for rule in rules:
        where = ", ".join(dict.fromkeys(checker(p) for p in rule.checked_by))
        lines.append(f"| [{rule.id}]({_anchor(rule.id)}) | {md(rule.title)} | "
                     f"{where or '*documented only*'} |")
    lines.append("")
    for prefix, area in PREFIXES.items():
        in_area = [r for r in rules if r.id.startswith(prefix + "-")]
        if not in_area:
            continue
        lines += [f"## {prefix}: {area}", ""]
        for rule in in_area:
            lines += [f"### {rule.id}", "", wrap(f"**{md(rule.title)}.**"), "",
                      wrap(f"**Why.** {md(rule.why)}"), "", wrap(f"**Fix.** {md(rule.fix)}"), ""]
            if rule.enforced:
                links = ", ".join(f"[`{p}`]({p})" for p in rule.checked_by)
                lines += [wrap(f"**Checked by** {links}."), ""]
            else:
                lines += ["*Documented only*: no check reports a violation.", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    from .paths import collection_root

    parser = argparse.ArgumentParser(prog="python -m kafkaform.rules",
                                     description="Write RULES.md from the rule catalogue.")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when RULES.md differs from the catalogue")
    parser.add_argument("--output", type=Path, default=None,
                        help="the file to write or check (default: RULES.md at the collection "
                        "root)")
    args = parser.parse_args(argv)
    output: Path = args.output or collection_root() / "RULES.md"
    text = render()
    current = output.read_text() if output.is_file() else None
    if args.check:
        if current != text:
            print(f"{output} is out of date: run python -m kafkaform.rules", file=sys.stderr)
            return 1
        return 0
    if current != text:
        output.write_text(text)
        print(f"wrote {output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
