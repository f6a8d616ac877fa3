"""Filters of the monitoring role: thin wrappers over ``kafkaform.contexts.monitoring``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.contexts import (
    monitoring as context,
)


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"monitoring_context": context.monitoring_context}
