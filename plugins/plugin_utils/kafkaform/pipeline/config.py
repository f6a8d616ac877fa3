"""The pipeline settings: pipeline.properties, written by the spark_pipeline role."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..template_filters import parse_java_properties

#: The file beside the queries' checkpoints naming the Spark release that last wrote them: the
#: run reads it before a Spark node changes release (SP-12).
RELEASE_FILE = "spark-release"

#: The pipeline's Kafka identities, each its own SCRAM user with only the ACLs it needs (SE-03):
#: the streaming job reads, the generator writes, the audit reads and compares.
IDENTITIES = ("job", "generator", "audit")


@dataclass(frozen=True)
class PipelineConfig:
    name: str
    topic: str
    bootstrap_servers: str
    data_dir: str
    trigger_interval: str
    max_offsets_per_trigger: int
    #: identity -> Kafka client properties file (SASL_SSL, its SCRAM login, the cluster CA)
    client_configs: dict[str, str] = field(default_factory=dict)
    #: Where the job writes its queries' progress for monitoring (kafkaform.pipeline.progress);
    #: empty: nowhere.
    progress_file: str = ""

    def kafka_client(self, identity: str) -> dict[str, str]:
        """The Kafka client settings of one identity, as its properties file holds them."""
        path = self.client_configs.get(identity)
        if not path:
            raise ValueError(f"pipeline.properties names no client config for {identity} "
                             f"(expected client.{identity}.config)")
        client = {str(k): str(v) for k, v in
                  parse_java_properties(Path(path).read_text(encoding="utf-8")).items()}
        # Executors run on the workers, which hold no CA file: hand them its certificates.
        trust = client.pop("ssl.truststore.location", "")
        if trust and client.get("ssl.truststore.type") == "PEM":
            client["ssl.truststore.certificates"] = Path(trust).read_text(encoding="ascii")
        return client

    def kafka_options(self, identity: str) -> dict[str, str]:
        """The same settings as options of Spark's Kafka source and sink (``kafka.`` prefix),
        with the consumer group prefix the identity's ACLs allow."""
        options = {f"kafka.{k}": v for k, v in self.kafka_client(identity).items()}
        options["groupIdPrefix"] = f"kafkaform-{self.name}-{identity}"
        return options

    @property
    def events_dir(self) -> str:
        """Parquet of the parsed events, partitioned by event_date."""
        return f"{self.data_dir}/events"

    @property
    def quarantine_dir(self) -> str:
        """Parquet of the records that are not valid events, with their topic/partition/offset."""
        return f"{self.data_dir}/quarantine"

    def checkpoint_dir(self, query: str) -> str:
        """Checkpoint of one streaming query (offsets, commits, state): QUERY's, or one of the
        two-query job's that kafkaform.pipeline.legacy_sinks carries over."""
        return f"{checkpoints_dir(self.data_dir)}/{query}"

    @property
    def release_file(self) -> str:
        """Names the Spark release that last wrote the checkpoints (RELEASE_FILE)."""
        return f"{checkpoints_dir(self.data_dir)}/{RELEASE_FILE}"

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
            client_configs={i: str(data[f"client.{i}.config"]) for i in IDENTITIES
                            if data.get(f"client.{i}.config")},
            progress_file=str(data.get("progress_file") or ""),
        )

    @classmethod
    def load(cls, path: str | Path) -> PipelineConfig:
        return cls.from_mapping(parse_java_properties(Path(path).read_text(encoding="utf-8")))


def checkpoints_dir(data_dir: str) -> str:
    """Where the queries' checkpoints live, under the pipeline's data directory."""
    return f"{data_dir.rstrip('/')}/checkpoints"


#: The job's streaming query: it reads the topic once and writes both Parquet outputs. Its name
#: names its checkpoint and its progress metrics.
QUERY = "records"
