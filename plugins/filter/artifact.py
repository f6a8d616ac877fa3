"""Filters of the artifact role: thin wrappers over ``kafkaform.plans.artifact``, imported when
first called (kafkaform.lazy says why)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.lazy import lazy, module


def artifact_plan(settings: Mapping[str, Any], host_read: str) -> dict[str, Any]:
    """The release's plan, from the role's settings and the host read's output."""
    plan = module("plans.artifact")
    return plan.artifact_plan(settings, plan.parse_host(host_read)).as_vars()


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"artifact_host_read": lazy("plans.artifact", "host_read"),
                "artifact_plan": artifact_plan}
