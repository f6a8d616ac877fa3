"""The pipeline's outputs: each batch landed whole and once, and the two-query job's sinks carried
over without a record landed twice (kafkaform.pipeline.sinks, legacy_sinks)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from kafkaform.pipeline import legacy_sinks, sinks
from kafkaform.pipeline.config import QUERY, PipelineConfig
from kafkaform.pipeline.job import fresh_start_problem


def writes(files: list[str]) -> Callable[[str], bool]:
    """A stand-in for Spark's writer: the named files under the path it is given."""
    def write(path: str) -> bool:
        for name in files:
            Path(path, name).parent.mkdir(parents=True, exist_ok=True)
            Path(path, name).write_text(name)
        return bool(files)
    return write


def test_a_batch_lands_whole_once_and_a_failed_attempt_leaves_nothing_seen(
        tmp_path: Path) -> None:
    output = sinks.Output("events", str(tmp_path / "events"), "reason IS NULL", lambda b: b)

    def crash(path: str) -> bool:
        writes(["event_date=2026-12-06/part-0.parquet"])(path)
        raise RuntimeError("executor lost")

    with pytest.raises(RuntimeError):
        sinks.land(output, 7, crash)
    assert sinks.landed_batches(output.path) == []  # readers see nothing of the attempt
    assert sinks.land(output, 7, writes(["event_date=2026-12-06/part-1.parquet"]))
    landed = tmp_path / "events" / "batch=7"
    assert sorted(p.name for p in landed.rglob("*.parquet")) == ["part-1.parquet"]
    # Run again after a crash between the rename and the checkpoint's commit: nothing twice.
    assert not sinks.land(output, 7, writes(["other.parquet"]))
    assert sorted(p.name for p in landed.rglob("*.parquet")) == ["part-1.parquet"]
    # A batch with nothing for this output gets no directory, and leaves no staging behind.
    assert not sinks.land(output, 8, writes([]))
    assert sinks.landed_batches(output.path) == ["7"]
    assert not any((tmp_path / "events" / "_staging").iterdir())


def test_the_floor_condition_names_each_partition_already_landed() -> None:
    output = sinks.Output("q", "/q", "reason IS NOT NULL", lambda b: b, floor={2: 7})
    assert output.condition() == "(reason IS NOT NULL) AND NOT ((partition = 2 AND offset < 7))"
    assert sinks.below_floor({}) == "false"
    assert sinks.below_floor({0: 0}) == "false"  # nothing landed in partition 0
    assert sinks.below_floor({1: 40, 0: 12}) == \
        "(partition = 0 AND offset < 12) OR (partition = 1 AND offset < 40)"


def offsets_entry(checkpoint: Path, batch: int, ends: dict[str, int]) -> None:
    (checkpoint / "offsets").mkdir(parents=True, exist_ok=True)
    (checkpoint / "offsets" / str(batch)).write_text(
        'v1\n{"batchWatermarkMs":0,"batchTimestampMs":1}\n' + json.dumps({"t": ends}) + "\n")


def sink_log(output: Path, batch: int, files: list[str], compact: bool = False) -> None:
    log = output / "_spark_metadata"
    log.mkdir(parents=True, exist_ok=True)
    lines = ["v1"] + [json.dumps({"path": f"file://{output / f}", "size": 1, "isDir": False,
                                  "action": "add"}) for f in files]
    (log / f"{batch}{'.compact' if compact else ''}").write_text("\n".join(lines) + "\n")
    (log / f".{batch}.crc").write_text("checksum")


def data(output: Path, relative: str) -> None:
    (output / relative).parent.mkdir(parents=True, exist_ok=True)
    (output / relative).write_text(relative)


@pytest.fixture
def two_query_job(tmp_path: Path) -> PipelineConfig:
    """The layout the two-query job leaves: events landed through batch 2 (batch 3 planned, a
    file of it written, never logged), quarantine through batch 1. Neither checkpoint holds a
    commit: the sink logs alone say what landed."""
    config = PipelineConfig(name="p", topic="t", bootstrap_servers="a:1,b:1",
                            data_dir=str(tmp_path), trigger_interval="1 second",
                            max_offsets_per_trigger=10)
    events, quarantine = Path(config.events_dir), Path(config.quarantine_dir)
    for batch, ends in enumerate(({"0": 5, "1": 4}, {"0": 9, "1": 8}, {"0": 12, "1": 8},
                                  {"0": 20, "1": 20})):
        offsets_entry(Path(config.checkpoint_dir("events")), batch, ends)
        offsets_entry(Path(config.checkpoint_dir("quarantine")), batch, ends)
    for name in ("a", "b", "c", "orphan"):
        data(events, f"event_date=2026-12-0{len(name)}/part-{name}.parquet")
    data(events, "event_date=2026-12-01/.part-a.parquet.crc")
    sink_log(events, 1, ["event_date=2026-12-01/part-a.parquet",
                         "event_date=2026-12-01/part-b.parquet"], compact=True)
    sink_log(events, 2, ["event_date=2026-12-01/part-c.parquet"])
    for name in ("q1", "q2"):
        data(quarantine, f"part-{name}.parquet")
    sink_log(quarantine, 0, [])
    sink_log(quarantine, 1, ["part-q1.parquet", "part-q2.parquet"])
    return config


def carry_over(config: PipelineConfig) -> dict[str, dict[int, int]]:
    from kafkaform.pipeline.config import checkpoints_dir
    from kafkaform.pipeline.job import legacy_outputs

    return legacy_sinks.carry_over(legacy_outputs(config), config.topic,
                                   Path(checkpoints_dir(config.data_dir)))


def visible(output: str) -> list[str]:
    """What a Parquet reader lists: no name starting with _ or . on the way."""
    root = Path(output)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()
                  and not any(part.startswith(("_", ".")) for part in p.relative_to(root).parts))


def test_the_two_query_job_is_carried_over_by_what_each_sink_log_holds(
        two_query_job: PipelineConfig) -> None:
    config = two_query_job
    floors = carry_over(config)
    # The sink logs decide, not the commits: each output's newest logged batch's end offsets.
    assert floors == {"events": {0: 12, 1: 8}, "quarantine": {0: 9, 1: 8}}
    assert visible(config.events_dir) == [
        "batch=legacy/event_date=2026-12-01/part-a.parquet",
        "batch=legacy/event_date=2026-12-01/part-b.parquet",
        "batch=legacy/event_date=2026-12-01/part-c.parquet"]
    assert (Path(config.events_dir) / "_orphaned/event_date=2026-12-06/part-orphan.parquet"
            ).is_file()
    assert (Path(config.events_dir)
            / "batch=legacy/event_date=2026-12-01/.part-a.parquet.crc").is_file()
    assert not (Path(config.events_dir) / "event_date=2026-12-01").exists()
    assert visible(config.quarantine_dir) == ["batch=legacy/part-q1.parquet",
                                              "batch=legacy/part-q2.parquet"]
    for output in (config.events_dir, config.quarantine_dir):
        assert not (Path(output) / "_spark_metadata").exists()
        assert (Path(output) / "_spark_metadata.carried-over").is_dir()
    # Run again: the written floors answer, nothing moves, and the job may start.
    assert carry_over(config) == floors
    assert fresh_start_problem(config, floors) == ""


def test_a_carry_over_interrupted_after_one_output_ends_on_the_next_start(
        two_query_job: PipelineConfig) -> None:
    config = two_query_job
    from kafkaform.pipeline.config import checkpoints_dir
    from kafkaform.pipeline.job import legacy_outputs

    outputs = legacy_outputs(config)
    floors = legacy_sinks.take_floors(outputs, config.topic, Path(checkpoints_dir(config.data_dir)))
    legacy_sinks.move_files(outputs[0])  # then the job stopped
    assert carry_over(config) == floors
    assert visible(config.quarantine_dir) == ["batch=legacy/part-q1.parquet",
                                              "batch=legacy/part-q2.parquet"]


def test_each_output_skips_what_its_old_sink_holds_and_the_query_starts_at_the_lower() -> None:
    floors = {"events": {0: 12, 1: 8}, "quarantine": {0: 9}}
    # Partition 1 was never landed in quarantine, partition 2 is new: from the earliest.
    assert legacy_sinks.starting_offsets(floors, [0, 1, 2]) == {0: 9, 1: -2, 2: -2}
    assert legacy_sinks.starting_offsets({}, [0]) == {0: -2}


def test_a_new_checkpoint_beside_landed_batches_is_refused(tmp_path: Path) -> None:
    config = PipelineConfig(name="p", topic="t", bootstrap_servers="a:1,b:1",
                            data_dir=str(tmp_path), trigger_interval="1 second",
                            max_offsets_per_trigger=10)
    assert fresh_start_problem(config, {}) == ""
    (Path(config.events_dir) / "batch=0").mkdir(parents=True)
    (Path(config.events_dir) / "batch=1").mkdir(parents=True)
    problem = fresh_start_problem(config, {})
    assert f"the checkpoint {config.checkpoint_dir(QUERY)} is new" in problem
    assert f"{config.events_dir} (2 batches)" in problem and "SP-12" in problem
    offsets_entry(Path(config.checkpoint_dir(QUERY)), 0, {"0": 1})
    assert fresh_start_problem(config, {}) == ""  # the query resumes its own checkpoint
