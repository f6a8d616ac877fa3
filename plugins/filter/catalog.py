"""Filters over kafkaform's artifact catalog (kafkaform.catalog), the one place versions live.

``'kafka' | kafkaform.platform.release_version`` is the catalog's tested version;
``'kafka' | kafkaform.platform.upgrade_version`` the 4.x release a KRaft cluster upgrades to;
``'kafka' | kafkaform.platform.release_url(version, root)`` is that release's archive URL under
``root`` (an internal mirror of the Apache distribution site), or under Apache's own when ``root``
is empty. ``'4.0.0' | kafkaform.platform.spark_connector_urls(root)`` lists the URLs of the Kafka
connector jars of that Spark release. The catalog is imported when a filter is first called
(kafkaform.lazy says why).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.lazy import module


def release_version(name: str) -> str:
    return module("catalog").CATALOG.component(name).version


def upgrade_version(name: str) -> str:
    """The release a KRaft cluster upgrades to: the newest Kafka 4.x the catalog knows (KR-10)."""
    if name != "kafka":
        raise KeyError(f"the catalog names an upgrade release for kafka only, not {name!r}")
    return module("catalog").CATALOG.kafka_upgrade.version


def release_url(name: str, version: str, root: str = "") -> str:
    return str(module("catalog").release_url(name, version, root))


def spark_connector_urls(version: str, root: str = "") -> list[str]:
    catalog = module("catalog")
    return [jar.url_on(str(root) or catalog.APACHE_DIST_ROOT)
            for jar in catalog.spark_connector_jars(str(version))]


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "release_version": release_version,
            "release_url": release_url,
            "upgrade_version": upgrade_version,
            "spark_connector_urls": spark_connector_urls,
        }
