"""Filters of the kafka_broker role: thin wrappers over ``kafkaform.contexts.kafka_broker``,
``kafkaform.plans.kafka_broker``, ``kafkaform.topics`` and ``kafkaform.acls``, imported when
first called (kafkaform.lazy says why)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.lazy import lazy, module


def kafka_topics_plan(declared: Any, describe_output: str) -> dict[str, Any]:
    """``kafka_topics | kafkaform.platform.kafka_topics_plan(describe_stdout)``."""
    topics = module("topics")
    return topics.plan(declared, topics.parse_describe(describe_output))


def kafka_acls_plan(declared: Any, list_output: str) -> list[dict[str, Any]]:
    """``kafka_acls | kafkaform.platform.kafka_acls_plan(acl_list_stdout)``."""
    return module("acls").plan(declared, list_output)


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "kafka_broker_context": lazy("contexts.kafka_broker", "kafka_broker_context"),
            "kafka_broker_host_read": lazy("plans.kafka_broker", "host_read"),
            "kafka_broker_plan": lazy("plans.kafka_broker", "plan_vars"),
            "kafka_running_cluster": lazy("plans.kafka_broker", "running_cluster_vars"),
            "kafka_topics_plan": kafka_topics_plan,
            "kafka_acls_plan": kafka_acls_plan,
        }
