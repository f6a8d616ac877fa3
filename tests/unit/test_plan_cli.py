"""`kafkaform plan`: the plan as text and JSON, the workload from options and a file, its input
errors (exit 2, naming the option and the fix), and an inventory's shortfalls (warnings, exit 1
with --strict)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kafkaform import cli

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "inventory" / "lab"
SMALL_CLUSTER = ROOT / "tests" / "unit" / "fixtures" / "small-cluster.yml"

#: A workload that the worked example of the book's "How Many Brokers?" sizes: 10 TB kept (a
#: day at 10 TB a day) on 2 TB brokers with two replicas, at fill 1 and no overhead: 10 brokers.
TEN_TB = ["--ingress-mb-s", str(10_000_000 / 86_400), "--retention-days", "1", "--disk-tb", "2",
          "--replication-factor", "2", "--overhead", "1", "--target-disk-fill", "1"]


def plan(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["plan", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def kafkaform(*argv: str) -> subprocess.CompletedProcess[str]:
    """The command in its own interpreter: reading an inventory sets up Ansible process-wide."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins" / "plugin_utils")}
    return subprocess.run([sys.executable, "-m", "kafkaform", *argv], capture_output=True,
                          text=True, check=False, cwd=ROOT, env=env)


def test_plan_is_registered_as_a_command() -> None:
    assert "plan" in cli.COMMANDS
    help_text = cli.build_parser().format_help()
    assert "plan" in help_text


def test_text_plan_shows_every_formula_with_its_numbers_and_rule(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = plan(capsys, *TEN_TB)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "kafkaform plan: 10 brokers, bound by disk"
    assert "limits in kraft mode: 4,000 partition replicas a broker, no cluster-wide limit" in out
    for formula in ("disk = ingress x retention x replication x overhead / target fill",
                    "egress = ingress x (consumer groups + replication - 1)",
                    "partitions = ceil(max(target / producer rate, target / consumer rate))",
                    "page cache per broker = writes / brokers x 30 s",
                    "replicas per broker = partitions per topic x replication / brokers"):
        assert formula in out
    assert "= ceil(20 TB / (2 TB x 1)) = 10  [CP-01]" in out
    assert [line for line in lines if line and not line.startswith(" ")][3:] == [
        "brokers", "storage", "network", "memory", "partitions"]


def test_json_plan_for_ci(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = plan(capsys, *TEN_TB, "--format", "json", "--mode", "zookeeper")
    assert code == 0
    report = json.loads(out)
    assert set(report) == {"mode", "workload", "limits", "brokers", "bound_by", "sections",
                           "inventory", "findings"}
    assert (report["mode"], report["brokers"], report["bound_by"]) == ("zookeeper", 10, ["disk"])
    assert report["limits"] == {"per_broker": 4_000, "per_cluster": 200_000}
    assert (report["inventory"], report["findings"]) == (None, [])
    assert report["workload"]["replication_factor"] == 2
    assert report["workload"]["retention_hours"] == 24
    assert list(report["sections"]) == ["brokers", "storage", "network", "memory", "partitions"]
    figures = [f for section in report["sections"].values() for f in section]
    assert all(set(f) == {"key", "name", "formula", "numbers", "value", "unit", "rule"}
               for f in figures)
    by_key = {f["key"]: f for f in figures}
    assert by_key["disk_tb"]["value"] == pytest.approx(20.0)
    assert by_key["brokers"]["value"] == 10
    assert by_key["disk_bound"]["rule"] == "CP-01"


@pytest.mark.parametrize(("argv", "message"), [
    (["--ingress-mb-s", "-5"],
     "--ingress-mb-s must be above 0, got -5.0. Fix: give the rate producers write at the peak, "
     "in MB/s, e.g. --ingress-mb-s 50"),
    (["--ingress-mb-s", "5", "--target-disk-fill", "1.5"],
     "--target-disk-fill must be at most 1, got 1.5. Fix: give the fraction of the disks the "
     "retained data may fill, e.g. --target-disk-fill 0.7"),
    (["--ingress-mb-s", "5", "--headroom", "1"], "--headroom must be below 1, got 1.0. Fix:"),
    (["--ingress-mb-s", "5", "--retention-days", "0"],
     "--retention-days must be above 0, got 0.0. Fix: give how long records are kept, in days, "
     "e.g. --retention-days 7"),
    (["--ingress-mb-s", "5", "--ram-gb", "4"],
     "--ram-gb must be above the heap (5 GB) to leave some for the page cache, got 4.0. Fix:"),
    (["--ingress-mb-s", "inf"], "--ingress-mb-s must be a finite number, got inf. Fix:"),
    (["--retention-days", "7"],
     "the peak ingress is missing. Fix: give the rate producers write at the peak, in MB/s, "
     "e.g. --ingress-mb-s 50"),
    (["--ingress-mb-s", "5", "--topic", "events"],
     "--topic names a declared topic to compare, which takes an inventory. Fix: add -i"),
])
def test_input_errors_exit_2_naming_the_option_and_the_fix(
        capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code, out, err = plan(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.startswith(f"kafkaform plan: {message}")


def test_every_refused_input_is_named_at_once(capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = plan(capsys, "--ingress-mb-s", "-1", "--disk-tb", "0")
    assert code == 2
    assert "--ingress-mb-s must be above 0" in err and "; --disk-tb must be above 0" in err


def test_a_value_argparse_refuses_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["plan", "--ingress-mb-s", "5", "--replication-factor", "2.5"])
    assert exit_.value.code == 2
    assert "--replication-factor: invalid int value: '2.5'" in capsys.readouterr().err


def write(tmp_path: Path, data: Any, name: str = "workload.yml") -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data))
    return str(path)


def test_a_workload_file_is_read_and_options_override_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workload = write(tmp_path, {"ingress_mb_s": 50, "retention_days": 7, "consumer_groups": 3,
                                "mode": "zookeeper", "replication_factor": 2})
    code, out, _err = plan(capsys, "--workload", workload, "--replication-factor", "3",
                           "--format", "json")
    report = json.loads(out)
    assert code == 0
    assert report["mode"] == "zookeeper"
    assert report["workload"]["retention_hours"] == 168
    assert report["workload"]["consumer_groups"] == 3
    assert report["workload"]["replication_factor"] == 3  # the option's, not the file's 2


def test_a_json_workload_file_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workload = write(tmp_path, json.dumps({"ingress_mb_s": 1000, "consumer_mb_s": 50,
                                           "producer_mb_s": 100}), "workload.json")
    code, out, _err = plan(capsys, "--workload", workload, "--format", "json")
    assert code == 0
    partitions = next(f for f in json.loads(out)["sections"]["partitions"]
                      if f["key"] == "partitions_needed")
    assert partitions["value"] == 20


@pytest.mark.parametrize(("content", "message"), [
    ({"ingress_mb_s": -3}, "--workload {path}: ingress_mb_s must be above 0, got -3. Fix: give "
                           "the rate producers write at the peak, in MB/s, e.g. ingress_mb_s: 50"),
    ({"ingress_mb_s": 3, "mode": "zk"},
     "--workload {path}: mode must be zookeeper or kraft, got 'zk'. Fix: give the cluster's mode "
     "(zookeeper or kraft), e.g. mode: kraft"),
    ({"ingress_mb_s": 3, "retention_days": "a week"},
     "--workload {path}: retention_days must be a number, got 'a week'. Fix: give how long "
     "records are kept, in days, e.g. retention_days: 7"),
    ({"ingress_mb_s": 3, "ingres": 4}, "--workload {path}: unknown input(s) ingres. Fix: use "
                                       "the inputs ingress_mb_s, record_bytes"),
    ({"ingress_mb_s": 3, "retention_days": 7, "retention_hours": 1},
     "--workload {path} gives both retention_hours and retention_days. Fix: keep one"),
    ([1, 2], "--workload {path} is not a mapping of workload inputs. Fix:"),
    ("ingress_mb_s: [", "--workload {path} is not YAML or JSON ("),
])
def test_workload_file_errors_exit_2_naming_the_key(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], content: Any, message: str) -> None:
    path = write(tmp_path, content)
    code, _out, err = plan(capsys, "--workload", path)
    assert code == 2
    assert err.startswith(f"kafkaform plan: {message.format(path=path)}")


def test_a_missing_workload_file_is_an_input_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = plan(capsys, "--workload", str(tmp_path / "nope.yml"))
    assert code == 2
    assert "cannot be read (No such file or directory). Fix: pass a YAML or JSON file" in err


def test_the_lab_falls_short_of_a_large_workload_with_warnings() -> None:
    result = kafkaform("plan", "-i", str(LAB), "--ingress-mb-s", "300", "--topic", "kf.events")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("kafkaform plan: 428 brokers, bound by disk")
    assert "limits in zookeeper mode" in result.stdout  # the lab's brokers use ZooKeeper
    warnings = result.stderr.splitlines()
    assert len(warnings) == 3, result.stderr
    assert warnings[0].startswith("WARNING kf-kafka1, kf-kafka2, kf-kafka3 [CP-01] the "
                                  "kafka_broker group has 3 broker(s), the plan needs 428")
    assert "[CP-06] the brokers span 2 rack(s) (lab-a, lab-b)" in warnings[1]
    assert "[CP-03] topic kf.events has 6 partitions, the workload needs at least 30" in warnings[2]


def test_strict_makes_a_shortfall_exit_1_and_json_lists_it() -> None:
    # 3 MB/s kept 7 days, 3 replicas: 8.55 TB on 3 brokers of 4 TB; but the lab has 2 racks.
    result = kafkaform("plan", "-i", str(LAB), "--ingress-mb-s", "3", "--disk-tb", "4",
                       "--strict", "--format", "json")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["inventory"] == str(LAB)
    assert [(f["rule"], f["severity"]) for f in report["findings"]] == [("CP-06", "error")]


def test_an_inventory_that_meets_the_plan_passes_strict() -> None:
    result = kafkaform("plan", "-i", str(SMALL_CLUSTER), "--ingress-mb-s", "3", "--disk-tb", "4",
                       "--strict")
    assert result.returncode == 0, result.stderr
    assert result.stderr == f"kafkaform plan: {SMALL_CLUSTER} has what the plan needs\n"


def test_the_mode_comes_from_the_inventory_unless_named() -> None:
    kraft = ROOT / "inventory" / "lab-kraft"
    found = kafkaform("plan", "-i", str(kraft), "--ingress-mb-s", "3", "--format", "json")
    assert json.loads(found.stdout)["mode"] == "kraft", found.stderr
    named = kafkaform("plan", "-i", str(kraft), "--ingress-mb-s", "3", "--mode", "zookeeper",
                      "--format", "json")
    assert json.loads(named.stdout)["mode"] == "zookeeper", named.stderr


def test_a_missing_inventory_is_a_usage_error(tmp_path: Path) -> None:
    result = kafkaform("plan", "-i", str(tmp_path / "nope"), "--ingress-mb-s", "3")
    assert result.returncode == 2
    assert "does not exist" in result.stderr
