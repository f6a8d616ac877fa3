"""Filters of the os_tuning role: thin wrappers over ``kafkaform.contexts.os_tuning``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.contexts import (
    os_tuning as context,
)


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "os_tuning_context": context.os_tuning_context,
            "os_tuning_host_report": context.host_report,
            "os_tuning_sysctl_plan": context.sysctl_plan,
            "os_tuning_device_problems": context.device_problems,
            "os_tuning_disk_plan": context.disk_plan,
            "os_tuning_disk_mounts": context.disk_mounts,
            "os_tuning_mount_problem": context.mount_problem,
        }
