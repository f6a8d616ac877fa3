"""Filters of the spark_node role: thin wrappers over ``kafkaform.plans.spark_node``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.contexts import (
    spark_node as context,
)
from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.plans import (
    spark_node as plan,
)


def spark_node_plan(cluster: Mapping[str, Any], host: str, settings: Mapping[str, Any],
                    host_read: str) -> dict[str, Any]:
    """The node's plan, from the model, the role's settings and the host read's output."""
    return plan.spark_node_plan(cluster, host, settings, plan.parse_host(host_read)).as_vars()


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "spark_node_context": context.spark_node_context,
            "spark_node_connector_jars": context.connector_jars,
            "spark_node_host_read": plan.host_read,
            "spark_node_plan": spark_node_plan,
            "spark_node_pth_files": plan.pth_files,
        }
