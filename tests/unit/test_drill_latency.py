"""The drills' produce latency, counted from VerifiableProducer's own sending schedule."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import kafka_drills  # found through the path above


def acked(at_ms: int, seq: int) -> dict[str, Any]:
    return {"name": "producer_send_success", "timestamp": at_ms, "value": f"0.{seq}"}


def test_a_stall_counts_for_every_write_it_held_back() -> None:
    # 10 writes/s from t=1000 s; writes 0 to 4 acknowledged 20 ms after their slot, writes 5 to 9
    # held by a 2 s stall and acknowledged together at 3.5 s.
    events = [{"name": "startup_complete", "timestamp": 1_000_000},
              *(acked(1_000_000 + i * 100 + 20, i) for i in range(5)),
              *(acked(1_003_500, i) for i in range(5, 10))]
    latencies = [late for _, late in kafka_drills.scheduled_latencies(events, 10)]
    assert [round(late, 3) for late in latencies] == [0.02] * 5 + [3.0, 2.9, 2.8, 2.7, 2.6]
    assert round(kafka_drills.percentile(latencies, 0.5), 3) == 0.02
    assert round(kafka_drills.percentile(latencies, 0.99), 3) == 3.0
    report = kafka_drills.phase_report("stall", events, 1000.0, 1004.0, 10)
    assert "latency p50 20 ms p99 3000 ms" in report, report
    assert "longest wait for an ack 3.08 s" in report, report


def test_without_the_startup_event_no_latency_is_claimed() -> None:
    events = [acked(1_000_020, 0)]
    assert kafka_drills.scheduled_latencies(events, 10) == []
    assert "latency" not in kafka_drills.phase_report("none", events, 1000.0, 1001.0, 10)
