"""Filters of the zookeeper role: thin wrappers over ``kafkaform.plans.zookeeper``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.contexts import (
    zookeeper as context,
)
from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.plans import (
    zookeeper as plan,
)


def zookeeper_plan(cluster: Mapping[str, Any], host: str, settings: Mapping[str, Any],
                   host_read: str) -> dict[str, Any]:
    """The member's plan, from the model, the role's settings and the host read's output."""
    return plan.zookeeper_plan(cluster, host, settings, plan.parse_host(host_read)).as_vars()


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "zookeeper_context": context.zookeeper_context,
            "zookeeper_host_read": plan.host_read,
            "zookeeper_plan": zookeeper_plan,
        }
