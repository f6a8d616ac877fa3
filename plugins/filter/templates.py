"""The filters kafkaform's templates use, shared with pyinfra and the unit tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.template_filters import (
    FILTERS,
)


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return dict(FILTERS)
