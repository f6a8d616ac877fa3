"""Filters of the spark_pipeline role: thin wrappers over ``kafkaform.plans.spark_pipeline`` and
``kafkaform.contexts.spark_pipeline``, imported when first called (kafkaform.lazy says why)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.lazy import lazy, module


def spark_pipeline_plan(cluster: Mapping[str, Any], host: str, settings: Mapping[str, Any],
                        host_read: str) -> dict[str, Any]:
    """The driver host's plan, from the model, the role's settings and the host read's output."""
    plan = module("plans.spark_pipeline")
    return plan.spark_pipeline_plan(cluster, host, settings,
                                    plan.parse_host(host_read)).as_vars()


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "spark_pipeline_context": lazy("contexts.spark_pipeline", "spark_pipeline_context"),
            "spark_pipeline_client_files": lazy("contexts.spark_pipeline", "client_files"),
            "spark_pipeline_host_read": lazy("plans.spark_pipeline", "host_read"),
            "spark_pipeline_plan": spark_pipeline_plan,
            "spark_pipeline_with_logins": lazy("plans.spark_pipeline", "with_logins"),
        }
