"""The pipeline's progress for monitoring (MO-09): what the job's listener writes, and what the
monitoring role's kafkaform-process-metrics makes of it (the rendered golden script, run here)."""

from __future__ import annotations

import json
import runpy
from pathlib import Path
from typing import Any

from kafkaform.pipeline.progress import ProgressFile, figures

GOLDEN_SCRIPT = (Path(__file__).parents[1] / "golden" / "monitoring" / "usr" / "local" / "sbin"
                 / "kafkaform-process-metrics")

#: A progress event of the events query as Spark 4 writes it (StreamingQueryProgress.json): the
#: Kafka source's metrics are strings.
PROGRESS: dict[str, Any] = {
    "id": "6c1d0d38-3f4e-4b8e-9a57-0e4a2b7c9d11", "runId": "b3f0", "name": "events",
    "timestamp": "2026-11-26T03:00:00.000Z", "batchId": 7, "batchDuration": 1234,
    "numInputRows": 500, "inputRowsPerSecond": 250.0, "processedRowsPerSecond": 405.2,
    "durationMs": {"addBatch": 900, "latestOffset": 5, "triggerExecution": 1234},
    "stateOperators": [],
    "sources": [{
        "description": "KafkaV2[Subscribe[kf.events]]",
        "startOffset": {"kf.events": {"0": 100, "1": 120}},
        "endOffset": {"kf.events": {"0": 350, "1": 370}},
        "latestOffset": {"kf.events": {"0": 400, "1": 370}},
        "numInputRows": 500,
        "metrics": {"avgOffsetsBehindLatest": "25.0", "maxOffsetsBehindLatest": "50",
                    "minOffsetsBehindLatest": "0"},
    }],
    "sink": {"description": "FileSink[/srv/kafkaform/shared/events/events]", "numOutputRows": -1},
}


def test_a_progress_event_gives_rates_duration_and_the_most_behind_partition() -> None:
    assert figures(PROGRESS, 1000.0) == {
        "updated": 1000.0, "batch_id": 7.0, "input_rows_per_second": 250.0,
        "processed_rows_per_second": 405.2, "batch_duration_seconds": 1.234,
        "offsets_behind_latest": 50.0}
    no_metrics = {**PROGRESS, "sources": [{**PROGRESS["sources"][0], "metrics": {}}]}
    assert "offsets_behind_latest" not in figures(no_metrics, 1000.0)


def test_the_file_follows_start_batches_and_idle_triggers(tmp_path: Path) -> None:
    now = [100.0]
    path = tmp_path / "progress.json"
    progress = ProgressFile(str(path), clock=lambda: now[0])
    progress.idle("unknown")  # a query started before the listener: nothing to say yet
    assert not path.exists()
    progress.started(PROGRESS["id"], "events")
    progress.started("q2", "quarantine")
    assert json.loads(path.read_text()) == {"events": {"updated": 100.0},
                                            "quarantine": {"updated": 100.0}}
    now[0] = 160.0
    progress.progress(PROGRESS)
    now[0] = 170.0
    progress.idle("q2")
    written = json.loads(path.read_text())
    assert written["events"]["batch_id"] == 7.0 and written["events"]["updated"] == 160.0
    assert written["quarantine"] == {"updated": 170.0}
    assert oct(path.stat().st_mode & 0o777) == "0o644"
    assert [p.name for p in tmp_path.iterdir()] == ["progress.json"]  # no temporary left


def test_process_metrics_turns_the_file_into_gauges_and_drops_what_is_not_a_figure(
        tmp_path: Path) -> None:
    path = tmp_path / "progress.json"
    path.write_text(json.dumps({
        "events": figures(PROGRESS, 1000.0),
        "quarantine": {"updated": 990.0, "batch_id": True, "note": "x"},
        'evil"} 1\nfake_metric{a="': {"updated": 1.0},
    }))
    script = runpy.run_path(str(GOLDEN_SCRIPT), run_name="kafkaform_process_metrics")
    script["main"].__globals__["PIPELINE_PROGRESS"] = str(path)
    queries = script["pipeline_progress"]()
    assert sorted(queries) == ["events", "quarantine"]
    assert queries["quarantine"] == {"updated": 990.0}  # a boolean is no figure
    text = script["exposition"]({}, 65530, queries)
    assert 'kafkaform_pipeline_offsets_behind_latest{query="events"} 50.0' in text
    assert 'kafkaform_pipeline_updated_timestamp_seconds{query="quarantine"} 990.0' in text
    assert "fake_metric" not in text
    path.unlink()
    assert script["pipeline_progress"]() == {}  # no job on this host
