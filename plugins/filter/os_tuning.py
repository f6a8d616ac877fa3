"""Filters of the os_tuning role: thin wrappers over ``kafkaform.contexts.os_tuning*``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.contexts import (
    os_tuning as context,
)
from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.contexts import (
    os_tuning_disks as disks,
)
from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.contexts import (
    os_tuning_mounts as mounts,
)
from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.contexts import (
    os_tuning_probe as probe,
)
from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.contexts import (
    os_tuning_sysctl as sysctl,
)


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "os_tuning_context": context.os_tuning_context,
            "os_tuning_host_report": probe.host_report,
            "os_tuning_sysctl_plan": sysctl.sysctl_plan,
            "os_tuning_device_problems": disks.device_problems,
            "os_tuning_disk_plan": disks.disk_plan,
            "os_tuning_disk_mounts": mounts.disk_mounts,
            "os_tuning_mount_problem": mounts.mount_problem,
        }
