"""Filters of the zookeeper role: thin wrappers over ``kafkaform.contexts.zookeeper``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafkaform.contexts.zookeeper import settings_problems, zookeeper_context


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "zookeeper_context": zookeeper_context,
            "zookeeper_settings_problems": settings_problems,
        }
