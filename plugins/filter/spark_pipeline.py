"""Filters of the spark_pipeline role: thin wrappers over ``kafkaform.plans.spark_pipeline`` and
``kafkaform.contexts.spark_pipeline``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.contexts import (
    spark_pipeline as context,
)
from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.plans import (
    spark_pipeline as plan,
)


def spark_pipeline_plan(cluster: Mapping[str, Any], host: str, settings: Mapping[str, Any],
                        host_read: str) -> dict[str, Any]:
    """The driver host's plan, from the model, the role's settings and the host read's output."""
    return plan.spark_pipeline_plan(cluster, host, settings, plan.parse_host(host_read)).as_vars()


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "spark_pipeline_context": context.spark_pipeline_context,
            "spark_pipeline_client_files": context.client_files,
            "spark_pipeline_host_read": plan.host_read,
            "spark_pipeline_plan": spark_pipeline_plan,
            "spark_pipeline_with_logins": plan.with_logins,
        }
