"""Filters of the os_tuning role: thin wrappers over ``kafkaform.plans.os_tuning`` and the
context and verification it composes (``kafkaform.contexts.os_tuning*``), imported when first
called (kafkaform.lazy says why)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.lazy import lazy, module


def os_tuning_plan(host: str, settings: Mapping[str, Any], host_read: str) -> dict[str, Any]:
    """The host's plan, from the role's settings and the host read's output."""
    plan = module("plans.os_tuning")
    return plan.os_tuning_plan(host, settings, plan.parse_host(host_read)).as_vars()


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "os_tuning_context": lazy("contexts.os_tuning", "os_tuning_context"),
            "os_tuning_host_read": lazy("plans.os_tuning", "host_read"),
            "os_tuning_plan": os_tuning_plan,
            "os_tuning_planned_mounts": lazy("plans.os_tuning", "planned_mounts"),
            "os_tuning_mount_problem": lazy("contexts.os_tuning_mounts", "mount_problem"),
        }
