"""The three roles' extra settings share one check: each refuses the same kinds of entries."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kafkaform.contexts import kafka_broker, spark_node, zookeeper

ROLES: list[tuple[str, Callable[[dict[str, Any]], list[str]], str]] = [
    ("zookeeper_extra_settings", zookeeper.settings_problems, "maxClientCnxns"),
    ("kafka_broker_extra_properties", kafka_broker.settings_problems, "num.replica.fetchers"),
    ("spark_node_defaults_extra", spark_node.settings_problems, "spark.network.timeout"),
]


@pytest.mark.parametrize(("variable", "problems", "good_key"), ROLES)
@pytest.mark.parametrize(("entry", "words"), [
    ({"bad key!": 1}, "'bad key!' is not a"),
    ({"GOOD": ["a", "list"]}, "GOOD must be a string, number or boolean"),
    ({"GOOD": None}, "GOOD must be a string, number or boolean"),
    ({"GOOD": "two\nlines"}, "GOOD may not span lines"),
])
def test_each_role_refuses_the_same_entries(variable: str,
                                            problems: Callable[[dict[str, Any]], list[str]],
                                            good_key: str, entry: dict[str, Any],
                                            words: str) -> None:
    entry = {good_key if k == "GOOD" else k: v for k, v in entry.items()}
    found = problems({variable: entry})
    assert len(found) == 1, found
    assert found[0].startswith(f"{variable}: ")
    assert words.replace("GOOD", good_key) in found[0]


@pytest.mark.parametrize(("variable", "problems", "good_key"), ROLES)
def test_a_good_entry_passes_and_a_non_mapping_is_refused(
        variable: str, problems: Callable[[dict[str, Any]], list[str]], good_key: str) -> None:
    assert problems({variable: {good_key: 30}}) == []
    found = problems({variable: ["not", "a", "mapping"]})
    assert len(found) == 1 and found[0].startswith(f"{variable} must be a mapping, each key a ")
