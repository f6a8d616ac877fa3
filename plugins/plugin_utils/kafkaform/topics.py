"""Declared topics: the plan that brings a cluster's topics to what the inventory declares.

:func:`plan` is pure: the declared topics (``kafka_topics``) and the current state (parsed from
``TopicCommand --describe``) in, actions and refusals out. Topics that are not declared are never
in the plan. Partitions only grow (TR-05) and the replication factor is never changed in place:
both are refused with a message, never skipped silently.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .rules import cite

_HEADER = re.compile(r"^Topic:\s*(?P<name>\S+)\s+TopicId:.*?PartitionCount:\s*(?P<partitions>\d+)"
                     r"\s+ReplicationFactor:\s*(?P<rf>\d+)\s+Configs:\s*(?P<configs>.*)$")


def parse_configs(text: str) -> dict[str, str]:
    """``k=v,k2=v2`` of a describe header (values never hold commas in topic configs we set)."""
    configs = {}
    for item in text.strip().split(","):
        if "=" in item:
            key, _equals, value = item.partition("=")
            configs[key.strip()] = value.strip()
    return configs


def parse_describe(output: str) -> dict[str, dict[str, Any]]:
    """Topics of ``TopicCommand --describe`` output: name → partitions, RF and configs."""
    topics = {}
    for line in output.splitlines():
        match = _HEADER.match(line.strip())
        if match:
            topics[match["name"]] = {
                "partitions": int(match["partitions"]),
                "replication_factor": int(match["rf"]),
                "configs": parse_configs(match["configs"]),
            }
    return topics


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
        if not re.fullmatch(r"[A-Za-z0-9._-]{1,249}", name) or name.startswith("__"):
            problems.append(f"topic {name}: use letters, digits, '.', '_', '-', no leading "
                            f"'__' ({cite('TR-06')})")
        elif "." in name and "_" in name:
            problems.append(f"topic {name} mixes periods and underscores ({cite('TR-06')})")
        for key in ("partitions", "replication_factor"):
            value = topic.get(key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                problems.append(f"topic {name}: {key} must be a positive integer")
        if not isinstance(topic.get("configs", {}) or {}, Mapping):
            problems.append(f"topic {name}: configs must be a mapping")
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
