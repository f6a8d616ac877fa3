"""Filters of the spark_pipeline role: thin wrappers over ``kafkaform.contexts.spark_pipeline``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.contexts import (
    spark_pipeline as context,
)


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "spark_pipeline_context": context.spark_pipeline_context,
            "spark_pipeline_client_files": context.client_files,
        }
