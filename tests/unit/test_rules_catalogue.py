"""The rule catalogue (kafkaform.rules, its rules in rules.yml): RULES.md is generated from it,
every rule id the repository cites is defined in it, every rule it defines is checked by the code
it names or marked documented only, and no file points at documents outside the repository or at
issue numbers."""

from __future__ import annotations

import re
import subprocess
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest

from kafkaform import rules
from kafkaform.checks import Finding

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "plugins" / "plugin_utils" / "kafkaform"

# References to issue trackers, the clear cases only: the word issue, bug or ticket before a
# number, fixes/closes/see and a hash before a number, a hashed number in parentheses, GH- and a
# number, and tracker URLs. A bare hash and number is too often something else (colours, counts).
ISSUE_REFERENCE = re.compile(
    r"\b(?:issue|bug|ticket)s?\s*#?\d+\b"
    r"|\b(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?|refs?|see)\s+#\d+\b"
    r"|\(#\d+\)|\bGH-\d+\b|/(?:issues|pull)/\d+",
    re.IGNORECASE)

#: A Markdown document named in a file (URLs are removed first).
DOCUMENT = re.compile(r"(?<![\w/.-])([\w./-]*\w\.md)\b")
URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)

#: The catalogue's own files, which define every rule and so cite none.
CATALOGUE_FILES = {f"plugins/plugin_utils/kafkaform/rules.{ext}" for ext in ("py", "yml")}

#: Anything shaped like a rule id, whatever its prefix.
RULE_SHAPED = re.compile(r"\b[A-Z]{2}-\d{2}\b")

#: A Python check naming its rule through the catalogue.
CITE = re.compile(r"\bcite\(\s*[\"']([^\"']+)[\"']\s*\)")


@cache
def repository_texts() -> dict[str, str]:
    """Tracked (and new, not ignored) text files by path from the root, RULES.md excepted."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode()
    texts = {}
    for name in sorted(set(filter(None, listed.split("\0")))):
        path = ROOT / name
        if name == "RULES.md" or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue  # binary
        try:
            texts[name] = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
    return texts


def occurrences(pattern: re.Pattern[str]) -> dict[str, list[str]]:
    """Each file's matches of ``pattern`` as ``line: match``."""
    found: dict[str, list[str]] = defaultdict(list)
    for name, text in repository_texts().items():
        for match in pattern.finditer(text):
            found[name].append(f"{text.count(chr(10), 0, match.start()) + 1}: {match[0]}")
    return found


def test_rules_md_is_generated_from_the_catalogue() -> None:
    assert (ROOT / "RULES.md").read_text() == rules.render(), \
        "RULES.md is out of date: run python -m kafkaform.rules"


def test_rules_cli_writes_and_checks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "RULES.md"
    output.write_text("stale\n")
    assert rules.main(["--check", "--output", str(output)]) == 1
    assert "out of date" in capsys.readouterr().err
    assert output.read_text() == "stale\n"
    assert rules.main(["--output", str(output)]) == 0
    assert rules.main(["--check", "--output", str(output)]) == 0
    assert output.read_text() == rules.render()


def test_catalogue_entries_are_well_formed_and_unique() -> None:
    ids = [rule.id for rule in rules.CATALOGUE]
    assert len(ids) == len(set(ids)), "a rule id is defined twice"
    for rule in rules.CATALOGUE:
        assert re.fullmatch(r"[A-Z]{2}-\d{2}", rule.id), rule.id
        assert rule.id[:2] in rules.PREFIXES, f"{rule.id}: prefix not in rules.PREFIXES"
        assert rule.title and rule.why and rule.fix, f"{rule.id} lacks a title, why or fix"
        assert len(set(rule.checked_by)) == len(rule.checked_by), f"{rule.id}: repeated checker"


def test_an_unknown_rule_id_is_an_error() -> None:
    unknown = "ZK-" + "99"  # built, so that this file cites no undefined id
    with pytest.raises(LookupError, match=unknown):
        rules.cite(unknown)
    with pytest.raises(LookupError):
        Finding(unknown, "message", "fix")


def test_every_rule_id_cited_in_the_repository_is_in_the_catalogue() -> None:
    undefined: dict[str, set[str]] = defaultdict(set)
    for pattern in (RULE_SHAPED, rules.ID_PATTERN):
        for name, hits in occurrences(pattern).items():
            undefined[name] |= {h for h in hits if h.split(": ", 1)[1] not in rules.RULES}
    assert {name: sorted(hits) for name, hits in undefined.items() if hits} == {}, \
        "rule ids not in kafkaform/rules.yml: define them, or fix the citation"


def test_every_rule_is_cited_outside_the_catalogue() -> None:
    """No dead rules: each rule is named by the code, a role or a document, not only defined."""
    cited = {hit.split(": ", 1)[1] for name, hits in occurrences(rules.ID_PATTERN).items()
             if name not in CATALOGUE_FILES for hit in hits}
    assert sorted(set(rules.RULES) - cited) == []


def python_citations() -> dict[str, set[str]]:
    """Rule id → the package's Python files that cite it through the catalogue."""
    cited: dict[str, set[str]] = defaultdict(set)
    for path in PACKAGE.rglob("*.py"):
        if path.name == "rules.py":
            continue
        for match in CITE.finditer(path.read_text()):
            cited[match[1]].add(path.relative_to(ROOT).as_posix())
    return cited


def test_python_checks_cite_exactly_the_rules_whose_entries_name_them() -> None:
    cited = python_citations()
    assert sorted(set(cited) - set(rules.RULES)) == []
    for rule in rules.CATALOGUE:
        # The package's checks; its live-host tests (verify/) assert, they cite nothing.
        declared = {p for p in rule.checked_by
                    if p.startswith("plugins/") and p.endswith(".py") and "/verify/" not in p}
        assert cited.get(rule.id, set()) == declared, \
            f"{rule.id}: checked_by in kafkaform/rules.yml differs from the files that cite it"


def test_every_checker_a_rule_names_exists_and_names_the_rule() -> None:
    for rule in rules.CATALOGUE:
        for name in rule.checked_by:
            path = ROOT / name
            assert path.is_file(), f"{rule.id}: {name} does not exist"
            assert rule.id in path.read_text(), f"{rule.id}: {name} does not name it"


def test_documented_only_rules_are_marked_and_shown() -> None:
    text = rules.render()
    for rule in rules.CATALOGUE:
        assert rule.enforced == bool(rule.checked_by)
        if not rule.enforced:
            section = text.split(f"### {rule.id}\n", 1)[1].split("\n### ", 1)[0]
            assert "*Documented only*" in section, rule.id


def test_no_file_cites_an_issue_number() -> None:
    assert occurrences(ISSUE_REFERENCE) == {}


def test_no_file_names_a_document_outside_the_repository() -> None:
    texts = repository_texts()
    documents = {Path(name).name for name in texts if name.endswith(".md")}
    missing: dict[str, list[str]] = defaultdict(list)
    for name, text in texts.items():
        text = URL.sub("", text)
        for match in DOCUMENT.finditer(text):
            document = match[1]
            if not ((ROOT / document).is_file() or (ROOT / name).parent.joinpath(document).is_file()
                    or Path(document).name in documents):
                line = text.count("\n", 0, match.start()) + 1
                missing[name].append(f"{line}: {document}")
    assert missing == {}
