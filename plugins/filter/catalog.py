"""Filters over kafkaform's artifact catalog (kafkaform.catalog), the one place versions live.

``'kafka' | kafkaform.platform.release_version`` is the catalog's tested version;
``'kafka' | kafkaform.platform.release_url(version, root)`` is that release's archive URL under
``root`` (an internal mirror of the Apache distribution site), or under Apache's own when ``root``
is empty.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafkaform.catalog import APACHE_DIST_ROOT, CATALOG, RELEASES


def release_version(name: str) -> str:
    return CATALOG.component(name).version


def release_url(name: str, version: str, root: str = "") -> str:
    return RELEASES[name](str(version)).url_on(str(root) or APACHE_DIST_ROOT)


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"release_version": release_version, "release_url": release_url}
