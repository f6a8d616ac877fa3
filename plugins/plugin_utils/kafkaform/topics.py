"""Declared topics: the plan that brings a cluster's topics to what the inventory declares.

:func:`plan` is pure: the declared topics (``kafka_topics``) and the current state (the admin
helper's ``describe`` answer) in, actions and refusals out. Topics that are not declared are
never in the plan. Partitions only grow (TR-05) and the replication factor is never changed in
place: both are refused with a message, never skipped silently.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .rules import cite

#: Kafka's own limit (org.apache.kafka.common.internals.Topic.MAX_NAME_LENGTH).
MAX_TOPIC_NAME = 249


def parse_describe(output: str) -> dict[str, dict[str, Any]]:
    """Topics of the admin helper's ``describe`` answer (JSON): name → partitions, replication
    factor and configs (the topic's own and the brokers' non-default values, as Kafka's
    TopicCommand --describe shows them)."""
    topics = json.loads(output)["topics"]
    return {str(name): {"partitions": int(topic["partitions"]),
                        "replication_factor": int(topic["replication_factor"]),
                        "configs": {str(k): str(v) for k, v in topic["configs"].items()}}
            for name, topic in topics.items()}


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def declared_problems(declared: Any) -> list[str]:
    """Problems of ``kafka_topics`` itself: names, numbers, duplicates (TR-06)."""
    if not isinstance(declared, Sequence) or isinstance(declared, str):
        return ["kafka_topics must be a list of topics"]
    problems = []
    seen: set[str] = set()
    for index, topic in enumerate(declared):
        if not isinstance(topic, Mapping) or not topic.get("name"):
            problems.append(f"kafka_topics[{index}] needs a name")
            continue
        name = str(topic["name"])
        if name in seen:
            problems.append(f"topic {name} is declared twice")
        seen.add(name)
        if len(name) > MAX_TOPIC_NAME:
            problems.append(f"topic {name[:40]}...: {len(name)} characters, Kafka takes at most "
                            f"{MAX_TOPIC_NAME} ({cite('TR-06')})")
        elif not re.fullmatch(r"[A-Za-z0-9._-]+", name) or name.startswith("__"):
            problems.append(f"topic {name}: use letters, digits, '.', '_', '-', no leading "
                            f"'__' ({cite('TR-06')})")
        elif "." in name and "_" in name:
            problems.append(f"topic {name} mixes periods and underscores ({cite('TR-06')})")
        for key in ("partitions", "replication_factor"):
            value = topic.get(key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                problems.append(f"topic {name}: {key} must be a positive integer")
        configs = topic.get("configs", {}) or {}
        if not isinstance(configs, Mapping):
            problems.append(f"topic {name}: configs must be a mapping")
        else:
            problems += [f"topic {name}: {problem} ({cite('TR-07')})"
                         for problem in config_problems(configs)]
    return problems


def replication_problems(declared: Sequence[Mapping[str, Any]], brokers: int,
                         min_insync: int | None) -> list[tuple[str, str, str]]:
    """Each declared topic's replication against the cluster: ``(rule, problem, fix)``.

    ``min_insync`` is the cluster's min.insync.replicas, which a topic's own config overrides;
    None leaves the topics that do not set their own unchecked.
    """
    found = []
    for topic in declared:
        name, rf = topic["name"], topic["replication_factor"]
        configs = topic.get("configs") or {}
        if rf > brokers:
            found.append((cite("TR-01"), f"topic {name} has replication_factor {rf}, above the "
                          f"{brokers} brokers", f"set its replication_factor to at most {brokers}"))
        isr_raw = configs.get("min.insync.replicas", min_insync)
        isr = int(isr_raw) if isr_raw is not None and str(isr_raw).isdigit() else None
        if isr is not None and rf > 1 and isr >= rf:
            found.append((cite("TR-02"), f"topic {name} has min.insync.replicas {isr} with "
                          f"replication_factor {rf}: one replica down stops its acks=all writes",
                          f"set its min.insync.replicas to {rf - 1} or raise its replication "
                          "factor"))
        elif isr is not None and rf == 1 and isr > 1:
            found.append((cite("TR-02"), f"topic {name} has replication_factor 1 and "
                          f"min.insync.replicas {isr}: no acks=all write can ever succeed",
                          "set its replication_factor to 3, or its min.insync.replicas to 1"))
        if _text(configs.get("unclean.leader.election.enable", "false")) == "true":
            found.append((cite("TR-03"), f"topic {name} enables unclean leader election: a "
                          "replica out of sync may become leader and drop acknowledged records",
                          "remove unclean.leader.election.enable from its configs"))
    return found


def _number(low: float, high: float = float("inf"), *, integer: bool = True) -> Any:
    def valid(value: str) -> str | None:
        try:
            number = int(value) if integer else float(value)
        except ValueError:
            return f"not {'an integer' if integer else 'a number'}"
        if not low <= number <= high:
            bounds = f"at least {low:g}" if high == float("inf") else f"from {low:g} to {high:g}"
            return f"out of range ({bounds})"
        return None
    return valid


def _one_of(*choices: str, listed: bool = False) -> Any:
    def valid(value: str) -> str | None:
        items = [item.strip() for item in value.split(",")] if listed else [value]
        wrong = [item for item in items if item not in choices]
        return f"not one of {', '.join(choices)}" if wrong or not items else None
    return valid


def _replica_list(value: str) -> str | None:
    if value in ("", "*") or re.fullmatch(r"\d+:\d+(,\d+:\d+)*", value):
        return None
    return "not '*' or a list of partition:broker pairs"


_BOOL = _one_of("true", "false")
_LONG = 2**63 - 1
_INT = 2**31 - 1

#: Kafka 3.9's topic-level configs and what each accepts (TopicConfig and LogConfig of the
#: release: https://kafka.apache.org/39/documentation.html#topicconfigs).
TOPIC_CONFIGS: dict[str, Any] = {
    "cleanup.policy": _one_of("delete", "compact", listed=True),
    "compression.gzip.level": _number(-1, 9),
    "compression.lz4.level": _number(1, 17),
    "compression.type": _one_of("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
    "compression.zstd.level": _number(-131072, 22),
    "delete.retention.ms": _number(0, _LONG),
    "file.delete.delay.ms": _number(0, _LONG),
    "flush.messages": _number(1, _LONG),
    "flush.ms": _number(0, _LONG),
    "follower.replication.throttled.replicas": _replica_list,
    "index.interval.bytes": _number(0, _INT),
    "leader.replication.throttled.replicas": _replica_list,
    "local.retention.bytes": _number(-2, _LONG),
    "local.retention.ms": _number(-2, _LONG),
    "max.compaction.lag.ms": _number(1, _LONG),
    "max.message.bytes": _number(0, _INT),
    "message.downconversion.enable": _BOOL,
    "message.timestamp.after.max.ms": _number(0, _LONG),
    "message.timestamp.before.max.ms": _number(0, _LONG),
    "message.timestamp.difference.max.ms": _number(0, _LONG),
    "message.timestamp.type": _one_of("CreateTime", "LogAppendTime"),
    "min.cleanable.dirty.ratio": _number(0, 1, integer=False),
    "min.compaction.lag.ms": _number(0, _LONG),
    "min.insync.replicas": _number(1, _INT),
    "preallocate": _BOOL,
    "remote.log.copy.disable": _BOOL,
    "remote.log.delete.on.disable": _BOOL,
    "remote.storage.enable": _BOOL,
    "retention.bytes": _number(-1, _LONG),
    "retention.ms": _number(-1, _LONG),
    "segment.bytes": _number(14, _INT),
    "segment.index.bytes": _number(4, _INT),
    "segment.jitter.ms": _number(0, _LONG),
    "segment.ms": _number(1, _LONG),
    "unclean.leader.election.enable": _BOOL,
}


def config_problems(configs: Mapping[Any, Any]) -> list[str]:
    """Configs Kafka does not know as topic configs, or values it would refuse."""
    problems = []
    for key, value in configs.items():
        check = TOPIC_CONFIGS.get(str(key))
        if check is None:
            close = difflib.get_close_matches(str(key), TOPIC_CONFIGS, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            problems.append(f"{key} is not a topic config of Kafka{hint}")
            continue
        wrong = check(_text(value).strip())
        if wrong:
            problems.append(f"{key}={_text(value)!r} is {wrong}")
    return problems


def plan(declared: Sequence[Mapping[str, Any]],
         current: Mapping[str, Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Actions that make ``current`` match ``declared``, and refusals.

    Declared configs are set when they differ; a key dropped from the declaration is left as it
    is (set it explicitly to change it): describe cannot tell a topic override from a broker value.

    + declared: ``[{name, partitions, replication_factor, configs}]``
    + current: :func:`parse_describe` output (topics missing from it do not exist)

    Each action is ``{"topic", "action": create|partitions|configs, ..., "message"}``; each refusal
    ``{"topic", "message"}``. A topic with a refusal gets no action at all. Raises ``ValueError``
    on declarations :func:`declared_problems` rejects (the preflight reports them first).
    """
    problems = declared_problems(declared)
    if problems:
        raise ValueError("; ".join(problems))
    actions: list[dict[str, Any]] = []
    refusals: list[dict[str, Any]] = []
    for topic in declared:
        name = str(topic["name"])
        partitions = int(topic["partitions"])
        rf = int(topic["replication_factor"])
        configs = {str(k): _text(v) for k, v in (topic.get("configs") or {}).items()}
        now = current.get(name)
        if now is None:
            actions.append({"topic": name, "action": "create", "partitions": partitions,
                            "replication_factor": rf, "configs": configs,
                            "message": f"create topic {name}: {partitions} partitions, "
                                       f"replication factor {rf}, rack-aware"})
            continue
        refused = []
        if partitions < int(now["partitions"]):
            refused.append(f"topic {name}: refusing to decrease partitions from "
                           f"{now['partitions']} to {partitions}; Kafka cannot remove partitions "
                           f"({cite('TR-05')}): declare partitions >= the current count, or "
                           "create a new topic and migrate")
        if rf != int(now["replication_factor"]):
            refused.append(f"topic {name}: refusing to change the replication factor from "
                           f"{now['replication_factor']} to {rf} in place; this needs a planned "
                           "partition reassignment (kafka-reassign-partitions), not a converge")
        if refused:
            refusals += [{"topic": name, "message": m} for m in refused]
            continue
        if partitions > int(now["partitions"]):
            actions.append({"topic": name, "action": "partitions", "partitions": partitions,
                            "message": f"raise partitions of {name} from {now['partitions']} to "
                                       f"{partitions}"})
        # Describe shows every non-default value, broker-level ones included (min.insync.replicas,
        # segment.bytes...), so only declared keys are compared and set; none is removed.
        have = {str(k): str(v) for k, v in (now.get("configs") or {}).items()}
        add = {k: v for k, v in configs.items() if have.get(k) != v}
        if add:
            parts = [f"set {k}={v} (was {have.get(k, 'the default')})"
                     for k, v in sorted(add.items())]
            actions.append({"topic": name, "action": "configs", "add": add, "delete": [],
                            "message": f"configs of {name}: {', '.join(parts)}"})
    return {"actions": actions, "refusals": refusals}
