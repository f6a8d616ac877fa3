"""The events the pipeline carries: their JSON schema and the generator's vocabulary.

An event is a JSON object keyed in Kafka by its entity (CL-07), for example::

    {"event_id": "run1-42", "entity_id": "entity-7", "event_type": "order",
     "amount": 12.5, "event_time": "2026-11-21T10:15:00.123Z"}

Times are ISO 8601 in UTC (SP-04); the Parquet sink is partitioned by the UTC date of event_time.
"""

from __future__ import annotations

#: Column that receives the raw text of a record the schema cannot parse (from_json PERMISSIVE).
CORRUPT_COLUMN = "_corrupt_record"

#: The explicit schema (Spark DDL); no inference, so a bad record cannot change the table's shape.
SCHEMA_DDL = (
    "event_id STRING, entity_id STRING, event_type STRING, amount DOUBLE, "
    f"event_time TIMESTAMP, {CORRUPT_COLUMN} STRING"
)

#: Fields an event must carry to be landed; anything else goes to quarantine.
REQUIRED_FIELDS = ("event_id", "entity_id", "event_type", "event_time")

EVENT_TYPES = ("view", "cart", "order", "refund")

#: What the generator sends when asked for malformed records, one per kind of fault.
MALFORMED_VALUES = (
    '{"event_id": "broken-1", "entity_id": ',               # truncated JSON
    '{"event_id": "broken-2", "entity_id": "entity-0", "event_type": "view", '
    '"amount": "twelve", "event_time": "2026-11-21T10:00:00Z"}',  # amount is not a number
    '{"entity_id": "entity-0", "event_type": "view", "event_time": "2026-11-21T10:00:00Z"}',
    "not json at all",
)


def entity_key(number: int, entities: int) -> str:
    """The Kafka key (and entity_id) of the generator's ``number``-th event."""
    return f"entity-{number % entities}"
