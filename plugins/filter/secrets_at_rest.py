"""Filter secrets_at_rest_problem: a thin wrapper over ``kafkaform.sealed``, imported when first
called (kafkaform.lazy says why)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.lazy import module


def secrets_at_rest_problem(plaintext: Any) -> str:
    """``kafkaform_secrets_plaintext | kafkaform.platform.secrets_at_rest_problem``."""
    sealed = module("sealed")
    return sealed.problem({sealed.PLAINTEXT_SETTING: plaintext})


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"secrets_at_rest_problem": secrets_at_rest_problem}
