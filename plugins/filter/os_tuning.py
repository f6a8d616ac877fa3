"""Filters of the os_tuning role: thin wrappers over ``kafkaform.plans.os_tuning`` and the
context and verification it composes (``kafkaform.contexts.os_tuning*``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.contexts import (
    os_tuning as context,
)
from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.contexts import (
    os_tuning_mounts as mounts,
)
from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.plans import (
    os_tuning as plan,
)


def os_tuning_plan(host: str, settings: Mapping[str, Any], host_read: str) -> dict[str, Any]:
    """The host's plan, from the role's settings and the host read's output."""
    return plan.os_tuning_plan(host, settings, plan.parse_host(host_read)).as_vars()


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "os_tuning_context": context.os_tuning_context,
            "os_tuning_host_read": plan.host_read,
            "os_tuning_plan": os_tuning_plan,
            "os_tuning_planned_mounts": plan.planned_mounts,
            "os_tuning_mount_problem": mounts.mount_problem,
        }
