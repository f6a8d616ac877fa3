"""Every systemd unit kafkaform renders scores an exposure of 2.0 or less in
``systemd-analyze security --offline=yes`` (the sandbox of kafkaform.contexts.sandbox, SE-04).

Each ``roles/*/templates/**/*.service.j2`` is rendered from its golden sample input, as
``tests/unit/test_templates.py`` renders it, written to a temporary directory and scored by
systemd's own analyzer; ``--threshold`` takes the exposure times ten and fails above it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kafkaform import render
from kafkaform.contexts.sandbox import ROOT_READER, SANDBOX, root_reader_sandbox
from kafkaform.plans.files import template as role_template
from tests.unit.test_templates import context_of

#: The highest exposure a unit may score (systemd-analyze's scale: 0.0 safe to 10.0 unsafe).
MAX_EXPOSURE = 2.0
ANALYZE = shutil.which("systemd-analyze")
OVERALL = re.compile(r"Overall exposure level for \S+: (\d+\.\d+)")
#: Each unit template as ``(role, name)``.
UNITS = [(role, name) for role, name in render.all_templates() if name.endswith(".service.j2")]
UNIT_IDS = [f"{role}/{name}" for role, name in UNITS]

pytestmark = pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")


def exposure(role: str, name: str, context: dict[str, object],
             directory: Path) -> tuple[float, str]:
    """The overall exposure systemd-analyze gives the rendered unit, and its report when the
    threshold failed it (empty otherwise)."""
    unit = directory / Path(name).name.removesuffix(".j2")
    unit.write_text(render.render(role_template(role, name), context))
    assert ANALYZE is not None
    result = subprocess.run(
        [ANALYZE, "security", "--offline=yes", f"--threshold={round(MAX_EXPOSURE * 10)}",
         "--no-pager", str(unit)],
        capture_output=True, encoding="utf-8", check=False)
    match = OVERALL.search(result.stdout)
    assert match, f"{unit.name}: no overall exposure in\n{result.stdout}{result.stderr}"
    failed = [line for line in result.stdout.splitlines() if line.startswith("✗")]
    return float(match.group(1)), "\n".join(failed) if result.returncode else ""


def test_every_unit_template_is_scored() -> None:
    assert {Path(name).name for _role, name in UNITS} >= {
        "zookeeper.service.j2", "zookeeper-purge.service.j2", "kafka.service.j2",
        "spark-daemon.service.j2", "kafkaform-pipeline.service.j2"}


@pytest.mark.parametrize(("role", "name"), UNITS, ids=UNIT_IDS)
def test_golden_contexts_carry_the_shipped_sandbox(role: str, name: str) -> None:
    """The units scored here are the ones the roles write: each golden context's sandbox is
    kafkaform.contexts.sandbox's, line for line."""
    sandboxes = [v["sandbox"] for v in context_of(role, name).values()
                 if isinstance(v, dict) and "sandbox" in v]
    assert sandboxes == [list(SANDBOX)], f"{role}/{name}: update its golden context's sandbox"


@pytest.mark.parametrize(("role", "name"), UNITS, ids=UNIT_IDS)
def test_unit_exposure_is_at_most_2(role: str, name: str, tmp_path: Path) -> None:
    score, report = exposure(role, name, context_of(role, name), tmp_path)
    assert score <= MAX_EXPOSURE and not report, (
        f"{Path(name).name}: exposure {score} > {MAX_EXPOSURE}; what it lacks:\n{report}")


def test_a_unit_without_the_shared_sandbox_fails(tmp_path: Path) -> None:
    """The score discriminates: the Kafka unit without the shared lines scores above 2.0."""
    unit = ("kafka_broker", "etc/systemd/system/kafka.service.j2")
    context = context_of(*unit)
    broker = context["kafka_broker"]
    assert isinstance(broker, dict)
    score, report = exposure(*unit, {**context, "kafka_broker": {**broker, "sandbox": []}},
                             tmp_path)
    assert score > MAX_EXPOSURE and report, score


def test_the_root_reader_sandbox_differs_only_in_its_documented_lines() -> None:
    """The process-metrics job runs as root: its sandbox is the shared one except the lines
    ROOT_READER replaces (one capability to read, no user namespace), and its unit carries it."""
    reader = root_reader_sandbox()
    assert [line for line in SANDBOX if line not in reader] == list(ROOT_READER)
    assert "PrivateUsers=yes" not in reader and "CapabilityBoundingSet=" not in reader
    unit = ("monitoring", "etc/systemd/system/kafkaform-process-metrics.service.j2")
    context = context_of(*unit)["monitoring"]
    assert isinstance(context, dict)
    assert context["process_metrics"]["sandbox"] == reader
