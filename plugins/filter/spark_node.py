"""Filters of the spark_node role: thin wrappers over ``kafkaform.contexts.spark_node`` and
``kafkaform.plans.spark_node``, imported when first called (kafkaform.lazy says why)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.lazy import lazy, module


def spark_node_plan(cluster: Mapping[str, Any], host: str, settings: Mapping[str, Any],
                    host_read: str) -> dict[str, Any]:
    """The node's plan, from the model, the role's settings and the host read's output."""
    plan = module("plans.spark_node")
    return plan.spark_node_plan(cluster, host, settings,
                                plan.parse_host(host_read)).as_vars()


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "spark_node_context": lazy("contexts.spark_node", "spark_node_context"),
            "spark_node_connector_jars": lazy("contexts.spark_node", "connector_jars"),
            "spark_node_host_read": lazy("plans.spark_node", "host_read"),
            "spark_node_plan": spark_node_plan,
            "spark_node_pth_files": lazy("plans.spark_node", "pth_files"),
        }
