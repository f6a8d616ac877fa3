"""pyinfra's rolling restart in batches (kafkaform.deploys.base), without hosts: what it runs on
which member, in which order, and where it stops (OP-02, OP-04, KR-11)."""

from __future__ import annotations

import json

import pytest
from pyinfra.api.exceptions import DeployError

from kafkaform.deploys import base
from kafkaform.deploys.base import Ran, Roll

#: Replication 3, one replica on each of k1, k3 and k5: k1 and k2 (rack a) may go together.
PLACEMENT = {"partitions": [{"topic": "orders", "partition": 0, "replicas": [1, 3, 5],
                             "isr": [1, 3, 5], "min_insync": 2}]}


def roll(parallelism: int) -> Roll:
    members = ("k1", "k2", "k3", "k4")
    return Roll(service="kafka", rule="OP-02", members=members,
                restart_files={m: ["/etc/kafka/server.properties"] for m in members},
                gate_argv=["health"], health_argv=["health"], timeout_s=1, delay_s=0,
                last_key="controller", member_ids={"k1": "1", "k2": "2", "k3": "3", "k4": "4"},
                parallelism=parallelism, batch_argv=["placement"] if parallelism > 1 else [],
                racks={"k1": "a", "k2": "a", "k3": "b", "k4": "b"})


def run_roll(monkeypatch: pytest.MonkeyPatch, parallelism: int,
             failing: dict[str, int] | None = None) -> list[tuple[str, str]]:
    """The roll of every member with k4 the active controller; ``failing``: how many restarts
    fail on a member before one succeeds. Returns (member, command) in the order run."""
    ran: list[tuple[str, str]] = []
    fails = dict(failing or {})

    def run_on(name: str, argv: list[str], stdin: str | None = None) -> Ran:
        command = " ".join(argv)
        ran.append((name, command))
        if "service_stale" in command or argv[0].endswith("kafkaform-service-stale"):
            return Ran(True, json.dumps({"stale": True}), "")
        if argv == ["health"]:
            return Ran(True, json.dumps({"controller": 4}), "")
        if argv == ["placement"]:
            return Ran(True, json.dumps(PLACEMENT), "")
        if argv[:2] == ["systemctl", "restart"] and fails.get(name, 0) > 0:
            fails[name] -= 1
            return Ran(False, "", "start failed")
        return Ran(True, "", "")

    monkeypatch.setattr(base, "run_on", run_on)
    monkeypatch.setattr(base, "service_stale_argv",
                        lambda service, files: ["service_stale", service])
    base._roll(roll(parallelism))
    return [(m, c) for m, c in ran if c.startswith(("systemctl restart", "health", "placement"))]


def test_batches_restart_together_then_wait_for_health_the_controller_alone_last(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ran = run_roll(monkeypatch, 2)
    restarts = [m for m, c in ran if c.startswith("systemctl restart")]
    assert restarts[:2] in (["k1", "k2"], ["k2", "k1"])  # rack a together
    assert restarts[2:] == ["k3", "k4"]  # k3 shares orders-0 with k1; k4 the controller, last
    # The gate, the placement, both restarts, then the cluster's health asked once (it checks
    # every broker) before the next batch.
    order = [(m, c.split()[0]) for m, c in ran]
    assert order[:2] == [("k1", "health"), ("k1", "placement")]
    assert {c for _, c in order[2:4]} == {"systemctl"}
    assert order[4:6] == [(restarts[0], "health"), ("k3", "systemctl")]


def test_serial_rolls_read_no_placement_and_retry_a_failed_start_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ran = run_roll(monkeypatch, 1, failing={"k2": 1})
    assert not [c for _, c in ran if c == "placement"]
    assert [m for m, c in ran if c.startswith("systemctl restart")] == [
        "k1", "k2", "k2", "k3", "k4"]


def test_a_failed_restart_in_a_batch_stops_the_roll_naming_the_member(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(DeployError, match="k2: restarting kafka failed: start failed"):
        run_roll(monkeypatch, 2, failing={"k2": 1})
