"""Filters on a release's archive: `kafkaform.platform.release_marker`, the lines of its unpack
marker, and `kafkaform.platform.archive_name`, the archive's file name from its URL.

Usage: `{{ artifact_name | kafkaform.platform.release_marker(artifact_version, artifact_url) }}`,
`{{ artifact_url | kafkaform.platform.archive_name }}`.
See kafkaform.release_marker, which pyinfra's deploys use too; it is imported when a filter is
first called (kafkaform.lazy says why).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.lazy import lazy


class FilterModule:
    """Ansible entry point."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"archive_name": lazy("release_marker", "archive_name"),
                "release_marker": lazy("release_marker", "release_marker")}
