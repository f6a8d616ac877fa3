"""The cloud spec: every bad spec is refused with a message naming the field and the fix, before
any AWS call (AWS_ENDPOINT_URL points at a closed port: a call would fail differently)."""

from __future__ import annotations

import copy
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from kafkaform.cli import main
from kafkaform.cloud.spec import SpecError, load, parse

EXAMPLE = Path(__file__).parents[2] / "inventory" / "aws" / "cluster.yml"


def example() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text())
    return data


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def edit(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    data = copy.deepcopy(example())
    change(data)
    return data


BAD: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    ("two zones", lambda d: d.update(zones=d["zones"][:2]),
     "2 zone(s) cannot hold a ZooKeeper ensemble of 3"),
    ("unknown group", lambda d: d["groups"].update(kafka_connect={"count": 1,
                                                                  "instance_type": "m5.large"}),
     "unknown group 'kafka_connect'"),
    ("even ensemble", lambda d: d["groups"]["zookeeper"].update(count=4),
     "preflight ZK-06"),
    ("too few brokers", lambda d: d["groups"]["kafka_broker"].update(count=2),
     "preflight TR-01"),
    ("volume type", lambda d: d["groups"]["kafka_broker"]["volumes"][0].update(type="gp4"),
     "volume type 'gp4' does not exist"),
    ("iops on gp2", lambda d: d["groups"]["kafka_broker"]["volumes"][0].update(type="gp2"),
     "iops: is not settable on gp2"),
    ("io2 without iops", lambda d: d["groups"]["zookeeper"]["volumes"][0].update(
        type="io2", iops=None, throughput_mbps=None), "iops: is required for io2"),
    ("volume size", lambda d: d["groups"]["zookeeper"]["volumes"][0].update(size_gb=0),
     "size_gb: is 0"),
    ("spark volumes", lambda d: d["groups"]["spark_worker"].update(
        volumes=[{"type": "gp3", "size_gb": 10}]), "spark_worker hosts have no data-disk"),
    ("two zk volumes", lambda d: d["groups"]["zookeeper"]["volumes"][0].update(count=2),
     "ZooKeeper writes one transaction log"),
    ("zone outside region", lambda d: d["zones"][0].update(name="us-east-1a"),
     "zone us-east-1a is not in region eu-west-1"),
    ("ssh to the world", lambda d: d.update(admin_cidrs=["0.0.0.0/0"]),
     "opens SSH to the whole Internet"),
    ("bad cidr", lambda d: d.update(client_cidrs=["10.0.0.1/16"]), "is not a CIDR block"),
    ("reserved tag", lambda d: d["tags"].update({"kafkaform:cluster": "x"}), "is reserved"),
    ("unknown field", lambda d: d.update(vpc="vpc-1"), "vpc: is not a spec field"),
    ("no name", lambda d: d.pop("name"), "name: is None"),
    ("bad name", lambda d: d.update(name="Demo_1"), "'Demo_1' is not a cluster name"),
    ("isr", lambda d: d["settings"].update(kafka_min_insync_replicas=3), "preflight TR-02"),
]


def test_example_spec_is_valid() -> None:
    spec = load(EXAMPLE)
    assert spec.name == "demo" and len(spec.zones) == 3


@pytest.mark.parametrize(("change", "message"), [(c, m) for _, c, m in BAD],
                         ids=[name for name, _, _ in BAD])
def test_bad_spec_is_refused(change: Callable[[dict[str, Any]], None], message: str) -> None:
    with pytest.raises(SpecError) as error:
        parse(edit(change))
    assert message in str(error.value)
    assert all("Fix:" in problem for problem in error.value.problems)


def test_every_problem_is_reported_at_once() -> None:
    def many(d: dict[str, Any]) -> None:
        d.update(zones=d["zones"][:2], admin_cidrs=["0.0.0.0/0"])
        d["groups"]["kafka_broker"]["volumes"][0]["type"] = "gp4"

    with pytest.raises(SpecError) as error:
        parse(edit(many))
    assert len(error.value.problems) == 3


@pytest.mark.parametrize("action", ["plan", "up", "inventory", "down"])
def test_cli_refuses_bad_spec_before_any_call(action: str, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{closed_port()}")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    spec = tmp_path / "bad.yml"
    spec.write_text(yaml.safe_dump(edit(lambda d: d.update(zones=d["zones"][:1]))))
    extra = ["--output", str(tmp_path / "out")] if action == "inventory" else []
    assert main(["cloud", action, "--spec", str(spec), *extra]) == 1
    err = capsys.readouterr().err
    assert "1 zone(s) cannot hold a ZooKeeper ensemble" in err
    assert "Connect" not in err and not (tmp_path / "out").exists()
