"""Filters of the spark_pipeline role: thin wrappers over ``kafkaform.contexts.spark_pipeline``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafkaform.contexts.spark_pipeline import pipeline_problems, spark_pipeline_context


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "spark_pipeline_context": spark_pipeline_context,
            "spark_pipeline_problems": pipeline_problems,
        }
