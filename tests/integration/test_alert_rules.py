"""The alert rules under Prometheus's own tools (MO-06), run from the lab image (~10 s).

`promtool check rules` on the rules file the monitoring role renders (its golden copy, which
tests/unit/test_templates.py keeps equal to the template's output), then `promtool test rules`
on tests/promtool/alerts.test.yml, which fires every alert; a wrong expectation fails it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from .test_pyinfra_os_tuning import ENV, IMAGE, ROOT

TESTS = ROOT / "tests"

pytestmark = pytest.mark.skipif(not shutil.which("podman"), reason="needs podman")


def promtool(tests_dir: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """promtool of the lab image (Debian's prometheus package), ``tests_dir`` mounted at /tests."""
    if subprocess.run(["podman", "image", "exists", IMAGE], env=ENV).returncode != 0:
        pytest.skip(f"{IMAGE} is missing: build it with `kafkaform lab image`")
    return subprocess.run(
        ["podman", "run", "--rm", "--network=none", "-v", f"{tests_dir}:/tests:ro",
         "-w", "/tests/promtool", IMAGE, "promtool", *argv],
        env=ENV, capture_output=True, text=True, check=False)


def test_the_rendered_rules_pass_promtool_check() -> None:
    result = promtool(TESTS, "check", "rules",
                      "/tests/golden/monitoring/etc/prometheus/rules/kafkaform.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_every_alert_fires_as_its_test_expects() -> None:
    result = promtool(TESTS, "test", "rules", "alerts.test.yml")
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_wrong_expectation_fails_promtool(tmp_path: Path) -> None:
    shutil.copytree(TESTS / "golden" / "monitoring", tmp_path / "golden" / "monitoring")
    cases = yaml.safe_load((TESTS / "promtool" / "alerts.test.yml").read_text())
    expected = cases["tests"][0]["alert_rule_test"][-1]["exp_alerts"][0]
    expected["exp_labels"]["instance"] = "kf-kafka2"
    (tmp_path / "promtool").mkdir()
    (tmp_path / "promtool" / "alerts.test.yml").write_text(yaml.safe_dump(cases))
    result = promtool(tmp_path, "test", "rules", "alerts.test.yml")
    assert result.returncode != 0 and "HostDown" in result.stdout + result.stderr
