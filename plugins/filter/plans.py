"""Filters every role shares: Java's home (kafkaform.java), a plan's secret files, a rolling
restart's batches, a day-two operation's moves, a broker replacement's catch-up and a
controller's removal from the quorum (kafkaform.plans), imported when first called
(kafkaform.lazy says why)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.lazy import lazy


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"java_home": lazy("java", "java_home_filter"),
                "with_secrets": lazy("plans.files", "with_secrets"),
                "restart_batches": lazy("plans.restart_batches", "roll_batches_vars"),
                "broker_moves": lazy("plans.broker_moves", "broker_moves_vars"),
                "broker_replace": lazy("plans.replace", "broker_replace_vars"),
                "controller_removal": lazy("plans.quorum", "controller_removal_vars")}
