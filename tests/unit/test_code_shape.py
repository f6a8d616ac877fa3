"""The project's size rule: no Python module over 600 lines, no function over 80, so that each
reads on its own. Lines are physical lines: a module's whole file, a function's from its ``def``
line to its last (docstring included). A file still over would be named in OVERSIZED_YET, so
that the list can only shrink; none is."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80

#: Files over a limit today, by path from the root; each must still be over (or leave the set).
OVERSIZED_YET: set[str] = set()


def _is_python_script(path: Path) -> bool:
    """A role's file without the .py suffix that python runs (its shebang says so)."""
    with path.open("rb") as handle:
        first = handle.readline()
    return first.startswith(b"#!") and b"python" in first


def python_files() -> list[Path]:
    """The Python the rule covers: the plugins and the package under them, the benchmarks, the
    lab's own code and the scripts the roles install; the tests are not covered."""
    found = {path for folder in ("plugins", "benchmarks", "lab")
             for path in (ROOT / folder).rglob("*.py")}
    found |= {p for p in ROOT.glob("roles/*/files/*")
              if p.is_file() and (p.suffix == ".py" or (not p.suffix and _is_python_script(p)))}
    return sorted(p for p in found if "__pycache__" not in p.parts)


def oversized(name: str, source: str) -> list[str]:
    """What in ``source`` (the file ``name``) breaks the rule, one line each."""
    problems = []
    lines = len(source.splitlines())
    if lines > MAX_MODULE_LINES:
        problems.append(f"{name}: {lines} lines (at most {MAX_MODULE_LINES} a module)")
    for node in ast.walk(ast.parse(source, filename=name)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                problems.append(f"{name}: {node.name} (line {node.lineno}) is {length} lines "
                                f"(at most {MAX_FUNCTION_LINES} a function)")
    return problems


def _problems_by_file() -> dict[str, list[str]]:
    by_file = {}
    for path in python_files():
        name = path.relative_to(ROOT).as_posix()
        by_file[name] = oversized(name, path.read_text(encoding="utf-8"))
    return by_file


def test_no_module_or_function_is_over_the_limits() -> None:
    problems = [problem for name, found in _problems_by_file().items()
                if name not in OVERSIZED_YET for problem in found]
    assert problems == [], (
        "split the module by concern, or the function into named helpers:\n"
        + "\n".join(problems))


def test_the_known_exceptions_are_still_over() -> None:
    by_file = _problems_by_file()
    assert sorted(name for name in OVERSIZED_YET if not by_file.get(name)) == [], (
        "within the limits now (or gone): drop them from OVERSIZED_YET")


def test_the_rule_covers_the_packages_benchmarks_and_role_scripts() -> None:
    names = {path.relative_to(ROOT).as_posix() for path in python_files()}
    assert "plugins/plugin_utils/kafkaform/checks/__init__.py" in names
    assert "benchmarks/kafka_drills.py" in names
    assert "roles/kafka_broker/files/kafkaform_admin.py" in names
    assert names >= OVERSIZED_YET  # a script without .py, by its shebang
    assert not any(name.startswith("tests/") for name in names)


@pytest.mark.parametrize(("lines", "expected"), [
    (MAX_FUNCTION_LINES - 1, []),  # with its def line: exactly the limit
    (MAX_FUNCTION_LINES, ["fake.py: long (line 1) is 81 lines (at most 80 a function)"]),
])
def test_a_function_over_the_limit_is_named_with_its_length(lines: int,
                                                            expected: list[str]) -> None:
    source = "def long() -> None:\n" + "    pass\n" * lines
    assert oversized("fake.py", source) == expected


def test_a_module_over_the_limit_is_named_with_its_length() -> None:
    source = "x = 1\n" * (MAX_MODULE_LINES + 1)
    assert oversized("fake.py", source) == ["fake.py: 601 lines (at most 600 a module)"]
    assert oversized("fake.py", "x = 1\n" * MAX_MODULE_LINES) == []


def test_a_nested_or_async_function_counts_too() -> None:
    body = "        pass\n" * MAX_FUNCTION_LINES
    source = f"class A:\n    async def method(self) -> None:\n{body}"
    assert oversized("fake.py", source) == [
        "fake.py: method (line 2) is 81 lines (at most 80 a function)"]
