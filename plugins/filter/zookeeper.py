"""Filters of the zookeeper role: thin wrappers over ``kafkaform.contexts.zookeeper``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.contexts import (
    zookeeper as context,
)


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "zookeeper_context": context.zookeeper_context,
        }
