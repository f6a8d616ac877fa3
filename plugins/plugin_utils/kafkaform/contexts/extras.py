"""The shape checks of free-form role inputs, each written once.

+ one_line_settings: a role's extra settings, a mapping of config-file keys to one-line values.
  zookeeper_extra_settings (zoo.cfg), kafka_broker_extra_properties (server.properties) and
  spark_node_defaults_extra (spark-defaults.conf) all end up as ``key=value`` lines; each role then
  applies its own rules (keys it sets itself, known keys) to the entries this accepts.
+ declared_entries: a list of mappings with known keys (kafka_users, kafka_acls,
  kafka_broker_extra_listeners); the caller then checks the values of the entries it returns.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
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


def declared_entries(variable: str, value: Any, known: Sequence[str]
                     ) -> tuple[list[tuple[str, Mapping[str, Any]]], list[str]]:
    """The mappings of the list ``value``, each with the label its problems start with
    (``variable[index]``), and a problem for a value that is not a list, an entry that is not a
    mapping, or keys not in ``known``."""
    shape = "{" + ", ".join(known) + "}"
    if not isinstance(value, list):
        return [], [f"{variable} must be a list of {shape}"]
    entries: list[tuple[str, Mapping[str, Any]]] = []
    problems = []
    for index, entry in enumerate(value):
        where = f"{variable}[{index}]"
        if not isinstance(entry, Mapping):
            problems.append(f"{where} must be a mapping {shape}")
            continue
        unknown = sorted(set(map(str, entry)) - set(known))
        if unknown:
            problems.append(f"{where}: unknown keys {', '.join(unknown)}; known: "
                            f"{', '.join(known)}")
        entries.append((where, entry))
    return entries, problems
