"""The pipeline settings: pipeline.properties, written by the spark_pipeline role."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class PipelineConfig:
    name: str
    topic: str
    bootstrap_servers: str
    data_dir: str
    trigger_interval: str
    max_offsets_per_trigger: int

    @property
    def events_dir(self) -> str:
        """Parquet of the parsed events, partitioned by event_date."""
        return f"{self.data_dir}/events"

    @property
    def quarantine_dir(self) -> str:
        """Parquet of the records that are not valid events, with their topic/partition/offset."""
        return f"{self.data_dir}/quarantine"

    def checkpoint_dir(self, query: str) -> str:
        """Checkpoint of one streaming query (offsets, commits, state)."""
        return f"{self.data_dir}/checkpoints/{query}"

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> PipelineConfig:
        servers = str(data["bootstrap_servers"])
        if len([s for s in servers.split(",") if s]) < 2:
            # CL-08: one bootstrap server is a single point of failure at start.
            raise ValueError(f"bootstrap_servers {servers!r} must name at least two brokers")
        return cls(
            name=str(data["name"]),
            topic=str(data["topic"]),
            bootstrap_servers=servers,
            data_dir=str(data["data_dir"]).rstrip("/"),
            trigger_interval=str(data["trigger_interval"]),
            max_offsets_per_trigger=int(data["max_offsets_per_trigger"]),
        )

    @classmethod
    def load(cls, path: str | Path) -> PipelineConfig:
        return cls.from_mapping(parse_properties(Path(path).read_text(encoding="utf-8")))


def parse_properties(text: str) -> dict[str, Any]:
    """``key=value`` lines (the role writes them sorted, one per line); # starts a comment."""
    settings: dict[str, Any] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise ValueError(f"line {number}: expected key=value, got {line!r}")
        settings[key.strip()] = value.strip()
    return settings


#: The two streaming queries of the job; each has its own checkpoint and its own Parquet sink.
QUERIES = ("events", "quarantine")
