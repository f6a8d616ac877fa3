"""Filters of the spark_node role: thin wrappers over ``kafkaform.contexts.spark_node``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafkaform.contexts.spark_node import node_problems, spark_node_context


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "spark_node_context": spark_node_context,
            "spark_node_problems": node_problems,
        }
