"""Filters every role shares: Java's home (kafkaform.java) and a plan's secret files
(kafkaform.plans)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.java import (
    java_home_filter,
)
from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.plans.files import (
    with_secrets,
)


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"java_home": java_home_filter, "with_secrets": with_secrets}
