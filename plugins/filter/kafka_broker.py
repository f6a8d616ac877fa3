"""Filters of the kafka_broker role: thin wrappers over ``kafkaform.contexts.kafka_broker``,
``kafkaform.plans.kafka_broker``, ``kafkaform.topics`` and ``kafkaform.acls``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform import acls
from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.contexts import (
    kafka_broker as context,
)
from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.plans import (
    kafka_broker as host_plan,
)
from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.topics import (
    parse_describe,
    plan,
)


def kafka_topics_plan(declared: Any, describe_output: str) -> dict[str, Any]:
    """``kafka_topics | kafkaform.platform.kafka_topics_plan(describe_stdout)``."""
    return plan(declared, parse_describe(describe_output))


def kafka_acls_plan(declared: Any, list_output: str) -> list[dict[str, Any]]:
    """``kafka_acls | kafkaform.platform.kafka_acls_plan(acl_list_stdout)``."""
    return acls.plan(declared, list_output)


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "kafka_broker_context": context.kafka_broker_context,
            "kafka_broker_host_read": host_plan.host_read,
            "kafka_broker_plan": host_plan.plan_vars,
            "kafka_topics_plan": kafka_topics_plan,
            "kafka_acls_plan": kafka_acls_plan,
        }
