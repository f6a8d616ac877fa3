"""A role's inputs are named once, in its argument spec: no hand-kept list passes them on."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kafkaform.catalog import CATALOG
from kafkaform.defaults import assemble, input_names, role_options, setting

ROOT = Path(__file__).resolve().parents[2]

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


@pytest.mark.parametrize(("given", "read"), [({}, []), ({"kafka_users": [{"name": "a"}]},
                                                        [{"name": "a"}])])
def test_a_default_that_names_a_cluster_variable_reads_it_as_ansible_would(
        given: dict[str, Any], read: list[Any]) -> None:
    assert setting(given, "kafka_broker_users") == read


def test_a_default_made_by_the_collections_filters_is_templated_by_ansible() -> None:
    assert setting({}, "zookeeper_version") == CATALOG.zookeeper.version
    assert setting({"zookeeper_version": "3.8.4"}, "zookeeper_archive_url").endswith(
        "/zookeeper/zookeeper-3.8.4/apache-zookeeper-3.8.4-bin.tar.gz")


def test_the_role_settings_lookup_and_the_deploys_assemble_a_roles_inputs_alike(
        tmp_path: Path) -> None:
    """In a play that runs neither role: the roles' defaults templated with the inventory's
    values (spark_node's archive follows the version the inventory gives)."""
    inventory = {"spark_node_version": "4.0.0", "kafka_users": [{"name": "pipeline"}]}
    answer = tmp_path / "settings.json"
    playbook = tmp_path / "lookup.yml"
    playbook.write_text(yaml.safe_dump([{
        "name": "Assemble", "hosts": "localhost", "gather_facts": False, "connection": "local",
        "vars": inventory,
        "tasks": [{"name": "Write what the lookup assembles", "ansible.builtin.copy": {
            "content": "{{ lookup('kafkaform.platform.role_settings', 'spark_pipeline', "
                       "'spark_node', 'kafka_users') | to_json }}",
            "dest": str(answer), "mode": "0600"}}]}]))
    ran = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i",
                          "localhost,", "-e", f"ansible_python_interpreter={sys.executable}",
                          str(playbook)], capture_output=True, text=True, cwd=ROOT,
                         env=dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg")),
                         check=False)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    by_lookup = json.loads(answer.read_text())
    by_deploys = assemble(("spark_pipeline", "spark_node", "kafka_users"), inventory)
    assert by_lookup == json.loads(json.dumps(by_deploys))
    assert by_lookup["spark_node_archive_url"].endswith("spark-4.0.0-bin-hadoop3.tgz")
    assert by_lookup["kafka_users"] == [{"name": "pipeline"}]
