"""The one check of a role's extra settings: a mapping of config-file keys to one-line values.

zookeeper_extra_settings (zoo.cfg), kafka_broker_extra_properties (server.properties) and
spark_node_defaults_extra (spark-defaults.conf) all end up as ``key=value`` lines; each role then
applies its own rules (keys it sets itself, known keys) to the entries this accepts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any


def one_line_settings(variable: str, extra: Any, key: re.Pattern[str],
                      what: str) -> tuple[dict[str, Any], list[str]]:
    """The entries of ``extra`` a config file can hold (a valid key, a one-line scalar value),
    and a problem for each other entry, naming ``variable``, the key and what is wrong."""
    if not isinstance(extra, Mapping):
        return {}, [f"{variable} must be a mapping, each key a {what}"]
    accepted: dict[str, Any] = {}
    problems = []
    for raw_key, value in extra.items():
        name = str(raw_key)
        if not key.match(name):
            problems.append(f"{variable}: {name!r} is not a {what}")
        elif isinstance(value, Mapping | list | tuple) or value is None:
            problems.append(f"{variable}: {name} must be a string, number or boolean")
        elif "\n" in str(value):
            problems.append(f"{variable}: {name} may not span lines")
        else:
            accepted[name] = value
    return accepted, problems
