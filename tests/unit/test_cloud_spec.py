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
from kafkaform.cloud.spec import SpecError, internet_covered, load, parse

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
    ("two zones, KRaft", lambda d: (d.update(zones=d["zones"][:2]), d["groups"].pop("zookeeper"),
                                    d["groups"].update(kafka_controller={
                                        "count": 3, "instance_type": "m5.large"})),
     "2 zone(s) cannot hold a KRaft controller quorum of 3"),
    ("monitoring with volumes", lambda d: d["groups"].update(monitoring={
        "count": 1, "instance_type": "m5.large", "volumes": [{"type": "gp3", "size_gb": 10}]}),
     "monitoring hosts have no data-disk purpose"),
    ("unknown group", lambda d: d["groups"].update(kafka_connect={"count": 1,
                                                                  "instance_type": "m5.large"}),
     "unknown group 'kafka_connect'"),
    ("two members", lambda d: d["groups"]["zookeeper"].update(count=2),
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
    ("bad cidr", lambda d: d.update(client_cidrs=["10.0.0.1/16"]), "is not a CIDR block"),
    ("reserved tag", lambda d: d["tags"].update({"kafkaform:cluster": "x"}), "is reserved"),
    ("unknown field", lambda d: d.update(vpc="vpc-1"), "vpc: is not a spec field"),
    ("no name", lambda d: d.pop("name"), "name: is None"),
    ("bad name", lambda d: d.update(name="Demo_1"), "'Demo_1' is not a cluster name"),
    ("isr", lambda d: d["settings"].update(kafka_min_insync_replicas=3), "preflight TR-02"),
    ("public clients flag not a boolean", lambda d: d.update(allow_public_clients="yes"),
     "allow_public_clients: is 'yes', not true or false"),
    ("kms key", lambda d: d.update(kms_key_id="my key"), "'my key' is not a KMS key id"),
]

ADMIN = "opens SSH and ZooKeeper's client port to the whole Internet (SE-11). Fix: list only"
CLIENT = ("opens Kafka's client port to the whole Internet (SE-12). Fix: list only the clients' "
          "networks, or set allow_public_clients: true")

#: Sets of CIDR blocks that together are the whole Internet, however they are written.
INTERNET: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    ("admin 0.0.0.0/0", lambda d: d.update(admin_cidrs=["0.0.0.0/0"]),
     f"admin_cidrs: 0.0.0.0/0 {ADMIN}"),
    ("admin split halves", lambda d: d.update(admin_cidrs=["0.0.0.0/1", "128.0.0.0/1"]),
     f"admin_cidrs: 0.0.0.0/1, 128.0.0.0/1 together cover 0.0.0.0/0, which {ADMIN}"),
    ("admin uneven pieces beside a private block",
     lambda d: d.update(admin_cidrs=["10.0.0.0/8", "0.0.0.0/1", "192.0.0.0/2", "128.0.0.0/2"]),
     "10.0.0.0/8, 0.0.0.0/1, 192.0.0.0/2, 128.0.0.0/2 together cover 0.0.0.0/0"),
    ("admin ::/0", lambda d: d.update(admin_cidrs=["10.0.0.0/24", "::/0"]),
     f"admin_cidrs: ::/0 {ADMIN}"),
    ("admin split IPv6 halves", lambda d: d.update(admin_cidrs=["::/1", "8000::/1"]),
     f"admin_cidrs: ::/1, 8000::/1 together cover ::/0, which {ADMIN}"),
    ("admin public even with public clients allowed",
     lambda d: d.update(admin_cidrs=["0.0.0.0/0"], allow_public_clients=True),
     f"admin_cidrs: 0.0.0.0/0 {ADMIN}"),
    ("clients 0.0.0.0/0", lambda d: d.update(client_cidrs=["0.0.0.0/0"]),
     f"client_cidrs: 0.0.0.0/0 {CLIENT}"),
    ("clients split halves", lambda d: d.update(client_cidrs=["128.0.0.0/1", "0.0.0.0/1"]),
     f"client_cidrs: 128.0.0.0/1, 0.0.0.0/1 together cover 0.0.0.0/0, which {CLIENT}"),
    ("clients split IPv6 halves",
     lambda d: d.update(client_cidrs=["10.0.0.0/16", "::/1", "8000::/1"]),
     f"client_cidrs: ::/1, 8000::/1 together cover ::/0, which {CLIENT}"),
    ("clients public, flag false", lambda d: d.update(client_cidrs=["::/0"],
                                                      allow_public_clients=False),
     f"client_cidrs: ::/0 {CLIENT}"),
]

#: Specs the Internet rules must let through, and what the parsed spec then holds.
ACCEPTED: list[tuple[str, Callable[[dict[str, Any]], None], dict[str, Any]]] = [
    ("private sets", lambda d: d.update(admin_cidrs=["10.0.0.0/24", "192.168.0.0/16"],
                                        client_cidrs=["10.0.0.0/8", "172.16.0.0/12"]),
     {"admin_cidrs": ("10.0.0.0/24", "192.168.0.0/16"), "allow_public_clients": False}),
    ("half the Internet is not all of it",
     lambda d: d.update(client_cidrs=["0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/3"]),
     {"client_cidrs": ("0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/3")}),
    ("IPv6 private, written in capitals",
     lambda d: d.update(admin_cidrs=["FD00:10::/64"], client_cidrs=["fd00::/8", "10.0.0.0/16"]),
     {"admin_cidrs": ("fd00:10::/64",), "client_cidrs": ("fd00::/8", "10.0.0.0/16")}),
    ("public clients allowed", lambda d: d.update(client_cidrs=["0.0.0.0/0"],
                                                  allow_public_clients=True),
     {"client_cidrs": ("0.0.0.0/0",), "allow_public_clients": True}),
    ("public IPv6 clients allowed, split",
     lambda d: d.update(client_cidrs=["::/1", "8000::/1"], allow_public_clients=True),
     {"client_cidrs": ("::/1", "8000::/1"), "allow_public_clients": True}),
    ("kms alias", lambda d: d.update(kms_key_id="alias/kafkaform"),
     {"kms_key_id": "alias/kafkaform"}),
    ("default kms key", lambda d: None, {"kms_key_id": None}),
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


@pytest.mark.parametrize(("change", "message"), [(c, m) for _, c, m in INTERNET],
                         ids=[name for name, _, _ in INTERNET])
def test_blocks_covering_the_internet_are_refused(change: Callable[[dict[str, Any]], None],
                                                  message: str) -> None:
    with pytest.raises(SpecError) as error:
        parse(edit(change))
    assert [p for p in error.value.problems if message in p], error.value.problems
    assert len(error.value.problems) == 1


@pytest.mark.parametrize(("change", "expected"), [(c, e) for _, c, e in ACCEPTED],
                         ids=[name for name, _, _ in ACCEPTED])
def test_spec_is_accepted(change: Callable[[dict[str, Any]], None],
                          expected: dict[str, Any]) -> None:
    spec = parse(edit(change))
    assert {key: getattr(spec, key) for key in expected} == expected


@pytest.mark.parametrize(("cidrs", "covered"), [
    (["0.0.0.0/0"], ["0.0.0.0/0"]),
    (["0.0.0.0/1", "128.0.0.0/1", "::/1", "8000::/1"], ["0.0.0.0/0", "::/0"]),
    (["0.0.0.0/1", "128.0.0.0/2"], []),
    (["::/0", "10.0.0.0/8"], ["::/0"]),
    (["255.255.255.255/32", "0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/3", "224.0.0.0/3"],
     ["0.0.0.0/0"]),
    ([], []),
])
def test_internet_covered_collapses_each_ip_version(cidrs: list[str], covered: list[str]) -> None:
    assert [internet for internet, _ in internet_covered(cidrs)] == covered


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
