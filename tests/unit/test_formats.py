"""kafkaform.formats: each syntax accepts what its reader takes, and every role default."""

from __future__ import annotations

import pytest

from kafkaform import formats
from kafkaform.defaults import INVENTORY_ROLES, role_options


@pytest.mark.parametrize(("name", "good", "bad"), [
    ("monitoring_retention_time", ["15d", "1y2w", "90m", "1h30m", "500ms"],
     ["15 days", "0s", "1m1h", "", "15D", "-1d"]),
    ("monitoring_retention_size", ["10GB", "512MB", "1TB"], ["10G", "10 GB", "1.5GB", ""]),
    ("kafka_broker_install_dir", ["/opt/kafka", "/srv/a-b_c"],
     ["opt/kafka", "/", "/opt/../etc", " /opt", "/opt//kafka"]),
    ("spark_node_user", ["spark", "_svc", "svc-1"], ["Spark", "1svc", "a" * 33, "svc user"]),
    ("kafka_broker_jmx_address", ["127.0.0.1", "::1", "10.0.0.5"], ["localhost", "10.0.0"]),
    ("os_tuning_data_dir_mode", ["0750", "750", "2775"], ["rwxr-x---", "0980", "75"]),
])
def test_each_syntax_accepts_and_refuses(name: str, good: list[str], bad: list[str]) -> None:
    assert [v for v in good if formats.problem(name, v)] == []
    assert [v for v in bad if not formats.problem(name, v)] == []


def test_an_empty_java_home_lets_the_role_find_java() -> None:
    assert formats.problem("kafka_broker_java_home", "") == ""
    assert "absolute path" in formats.problem("kafka_broker_java_home", "usr/lib/jvm")


def test_every_role_default_is_in_its_syntax() -> None:
    checked = 0
    for role in INVENTORY_ROLES:
        for name, spec in role_options(role).items():
            default = spec.get("default")
            if (isinstance(default, str) and "{{" not in default
                    and spec.get("type", "str") in ("str", "path") and formats.format_of(name)):
                assert formats.problem(name, default) == "", (role, name)
                checked += 1
    assert checked > 30


def test_a_finding_names_the_value_the_syntax_and_an_example() -> None:
    text = formats.problem("monitoring_retention_size", "10G")
    assert "'10G'" in text and "Prometheus size" in text and "e.g. 10GB" in text
