"""Filters on a release's archive: `kafkaform.platform.release_marker`, the lines of its unpack
marker, and `kafkaform.platform.archive_name`, the archive's file name from its URL.

Usage: `{{ artifact_name | kafkaform.platform.release_marker(artifact_version, artifact_url) }}`,
`{{ artifact_url | kafkaform.platform.archive_name }}`.
See kafkaform.release_marker, which pyinfra's deploys use too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.release_marker import (
    archive_name,
    release_marker,
)


class FilterModule:
    """Ansible entry point."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"archive_name": archive_name, "release_marker": release_marker}
