"""Filters of the spark_node role: thin wrappers over ``kafkaform.contexts.spark_node``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.contexts import (
    spark_node as context,
)


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "spark_node_context": context.spark_node_context,
            "spark_node_connector_jars": context.connector_jars,
        }
