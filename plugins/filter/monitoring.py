"""Filters of the monitoring role: thin wrappers over ``kafkaform.contexts.monitoring`` and
``kafkaform.plans.monitoring``, imported when first called (kafkaform.lazy says why)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.lazy import lazy, module


def monitoring_plan(cluster: Mapping[str, Any], host: str, settings: Mapping[str, Any],
                    groups: Mapping[str, Sequence[str]], host_read: str) -> dict[str, Any]:
    """The host's plan, from the model, the role's settings, the inventory's groups and the host
    read's output."""
    plan = module("plans.monitoring")
    return plan.monitoring_plan(cluster, host, settings, groups,
                                plan.parse_host(host_read)).as_vars()


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "monitoring_context": lazy("contexts.monitoring", "monitoring_context"),
            "monitoring_host_read": lazy("plans.monitoring", "host_read"),
            "monitoring_plan": monitoring_plan,
        }
