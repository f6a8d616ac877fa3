"""Functions of this package that import their module when first called.

The collection's filter plugins (plugins/filter/) hand Ansible these instead of the functions
themselves. Asked for any filter of a collection, Ansible's filter loader loads every filter file
of that collection (ansible.plugins.loader.Jinja2Loader.get_with_context), each task runs in a
new worker process, and Ansible's collection loader compiles a collection's Python modules from
their source at every import (it keeps no bytecode). A filter file that imported its contexts,
plans or rules at its top thus made every task that used one kafkaform filter compile most of
this package: about 0.3 s of the control node's CPU per task and host on the lab, measured with
cProfile on a no-change site.yml (BENCHMARKS.md). With these, a task compiles only the modules of
the filters it calls.

This module imports nothing of the package itself.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

#: This package's name as it was imported: ``kafkaform`` beside the collection,
#: ``ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform`` inside it.
PACKAGE = __name__.rpartition(".")[0]


def module(name: str) -> ModuleType:
    """This package's module ``name`` (``"plans.zookeeper"``), imported if it is not yet."""
    return importlib.import_module(f"{PACKAGE}.{name}")


def lazy(module_name: str, name: str) -> Callable[..., Any]:
    """The function ``name`` of this package's module ``module_name``, imported at the first
    call."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(module(module_name), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"{PACKAGE}.{module_name}.{name}, imported when first called."
    return call
