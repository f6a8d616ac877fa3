"""Filters of the zookeeper role: thin wrappers over ``kafkaform.contexts.zookeeper`` and
``kafkaform.plans.zookeeper``, imported when first called (kafkaform.lazy says why)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.lazy import lazy, module


def zookeeper_plan(cluster: Mapping[str, Any], host: str, settings: Mapping[str, Any],
                   host_read: str) -> dict[str, Any]:
    """The member's plan, from the model, the role's settings and the host read's output."""
    plan = module("plans.zookeeper")
    return plan.zookeeper_plan(cluster, host, settings,
                               plan.parse_host(host_read)).as_vars()


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "zookeeper_context": lazy("contexts.zookeeper", "zookeeper_context"),
            "zookeeper_host_read": lazy("plans.zookeeper", "host_read"),
            "zookeeper_plan": zookeeper_plan,
        }
