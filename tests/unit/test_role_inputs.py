"""A role's inputs are named once, in its argument spec: no hand-kept list passes them on."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kafkaform.defaults import role_options, setting

ROOT = Path(__file__).resolve().parents[2]
# The lookup imports the package as the collection's plugin_utils: `./dev install` links the
# checkout as kafkaform.platform under .collections.
sys.path.insert(0, str(ROOT / ".collections"))
from ansible_collections.kafkaform.platform.plugins.lookup.role_settings import (  # noqa: E402
    input_names,
)

ROLES = sorted(p.parent.parent.name for p in ROOT.glob("roles/*/meta/argument_specs.yml"))
PASS_THROUGH = re.compile(r"^\{\{\s*(\w+)\b[^}]*\}\}$")


def leaves(data: Any) -> list[str]:
    if isinstance(data, dict):
        return [leaf for value in data.values() for leaf in leaves(value)]
    return [data] if isinstance(data, str) else []


@pytest.mark.parametrize("role", ROLES)
def test_no_vars_file_repeats_the_role_inputs(role: str) -> None:
    path = ROOT / "roles" / role / "vars" / "main.yml"
    data = yaml.safe_load(path.read_text()) if path.is_file() else {}
    inputs = set(role_options(role))
    repeated = [leaf for leaf in leaves(data)
                if (m := PASS_THROUGH.match(leaf.strip())) and m[1] in inputs]
    assert repeated == [], f"{path}: pass the inputs with kafkaform.platform.role_settings"


def test_a_role_stands_for_its_declared_inputs_and_other_terms_for_themselves() -> None:
    names = input_names(["zookeeper", "os_tuning_nofile_limit"])
    assert names[:-1] == list(role_options("zookeeper"))
    assert "zookeeper_heap_mb" in names and names[-1] == "os_tuning_nofile_limit"


@pytest.mark.parametrize(("written", "read"), [
    ("false", False), ("no", False), ("0", False), (False, False),
    ("true", True), ("yes", True), ("on", True), (True, True),
])
def test_a_bool_input_reads_as_ansible_reads_it(written: object, read: bool) -> None:
    assert setting({"zookeeper_admin_server_enabled": written},
                   "zookeeper_admin_server_enabled") is read


def test_an_unset_input_falls_back_to_the_role_default() -> None:
    assert setting({}, "zookeeper_heap_mb") == yaml.safe_load(
        (ROOT / "roles/zookeeper/defaults/main.yml").read_text())["zookeeper_heap_mb"]


@pytest.mark.parametrize("given, read", [
    ({}, []),
    ({"kafka_users": [{"name": "app"}]}, [{"name": "app"}]),
    ({"kafka_users": [{"name": "app"}], "kafka_broker_users": [{"name": "own"}]},
     [{"name": "own"}]),
])
def test_a_default_that_names_a_cluster_variable_follows_it(given: dict[str, Any],
                                                             read: object) -> None:
    """kafka_broker_users defaults to "{{ kafka_users | default([]) }}": an engine that hands the
    inventory's variables untemplated reads what Ansible would."""
    assert setting(given, "kafka_broker_users") == read
