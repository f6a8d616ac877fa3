"""The filters templates share: same output in plain Jinja2 and in Ansible."""

from __future__ import annotations

import pytest

from kafkaform.render import environment
from kafkaform.template_filters import java_properties, parse_java_properties


def test_java_properties_sorts_keys_and_writes_java_booleans() -> None:
    text = java_properties({"b.key": True, "a.key": 3, "c.key": "x,y"})
    assert text == "a.key=3\nb.key=true\nc.key=x,y"


def test_java_properties_refuses_a_value_spanning_lines() -> None:
    with pytest.raises(ValueError, match="may not span lines"):
        java_properties({"k": "one\ntwo"})


def test_parse_java_properties_reads_back_what_java_properties_writes() -> None:
    settings = {"a.key": "3", "b.key": "x=y", "listeners": "BROKER://h:9091,CLIENT://h:9092"}
    text = "# written by a role\n! also a comment\n\n" + java_properties(settings)
    assert parse_java_properties(text) == settings


def test_parse_java_properties_names_a_line_without_a_value() -> None:
    with pytest.raises(ValueError, match="line 2: expected key=value"):
        parse_java_properties("a=1\nbroken line\n")


def test_templates_call_filters_by_their_collection_name() -> None:
    template = environment().from_string("{{ {'x': 1} | kafkaform.platform.java_properties }}")
    assert template.render() == "x=1"
