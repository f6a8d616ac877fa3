"""Filter `kafkaform.platform.release_marker`: the lines of a release's unpack marker.

Usage: `{{ artifact_name | kafkaform.platform.release_marker(artifact_version, artifact_url) }}`.
See kafkaform.release_marker, which pyinfra's deploys use too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.release_marker import (
    release_marker,
)


class FilterModule:
    """Ansible entry point."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"release_marker": release_marker}
