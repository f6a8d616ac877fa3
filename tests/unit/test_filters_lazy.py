"""The filter plugins import the package's modules when a filter is first called (kafkaform.lazy):
Ansible loads every filter file of the collection in every task that uses one of its filters."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FILTERS = sorted((ROOT / "plugins" / "filter").glob("*.py"))
LAZY = re.compile(r'\blazy\(\s*"([\w.]+)",\s*"(\w+)"\)')
MODULE = re.compile(r'\bmodule\(\s*"([\w.]+)"\)')
# Imported when a filter file loads: the helper, and the templates' filters, whose names their
# file hands Ansible; neither imports anything of the package.
AT_LOAD = ["lazy", "template_filters"]

# What Ansible does when a task asks for one filter of this collection by its full name.
LOAD_ONE_FILTER = r"""
import json, sys
from kafkaform.paths import load_collections
load_collections()
from ansible.plugins.loader import filter_loader
assert filter_loader.get("kafkaform.platform.cluster") is not None
package = "ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform."
print(json.dumps(sorted(m[len(package):] for m in sys.modules if m.startswith(package))))
"""


def test_finding_a_filter_imports_no_contexts_plans_or_rules() -> None:
    found = subprocess.run([sys.executable, "-c", LOAD_ONE_FILTER], capture_output=True,
                           text=True, check=True, cwd=ROOT)
    assert json.loads(found.stdout.splitlines()[-1]) == AT_LOAD


@pytest.mark.parametrize("path", FILTERS, ids=lambda p: p.name)
def test_every_function_a_filter_file_names_exists(path: Path) -> None:
    text = path.read_text()
    for module_name, name in LAZY.findall(text):
        assert callable(getattr(importlib.import_module(f"kafkaform.{module_name}"), name))
    for module_name in MODULE.findall(text):
        importlib.import_module(f"kafkaform.{module_name}")
    imported = re.findall(r"plugin_utils\.kafkaform(?:\.(\w+))? import", text)
    assert set(imported) <= set(AT_LOAD), f"{path.name} imports {imported} when it loads"


def test_a_lazy_function_is_the_function_it_names() -> None:
    from kafkaform import catalog, lazy

    wrapped = lazy.lazy("catalog", "spark_connector_jars")
    assert wrapped.__name__ == "spark_connector_jars"
    assert wrapped("4.0.0") == catalog.spark_connector_jars("4.0.0")
