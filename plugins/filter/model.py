"""Filters over kafkaform's cluster model: thin wrappers, the logic lives in the Python package,
imported when first called (kafkaform.lazy says why): the preflight's rules only by the
preflight."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.lazy import module

Groups = Mapping[str, Sequence[str]]


def _view(groups: Groups, hostvars: Mapping[str, Any],
          run_settings: Mapping[str, Any] | None = None) -> Any:
    return module("model").InventoryView(groups=groups, hostvars=hostvars,
                                         run_settings=dict(run_settings or {}))


def preflight(groups: Groups, hostvars: Mapping[str, Any],
              run_settings: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """``groups | kafkaform.platform.preflight(hostvars[, run_settings])``: findings as dicts,
    errors first. ``run_settings`` are cluster settings the playbook runs with where the
    inventory sets none."""
    return [f.to_dict() for f in module("checks").check(_view(groups, hostvars, run_settings))]


def cluster(groups: Groups, hostvars: Mapping[str, Any]) -> dict[str, Any]:
    """``groups | kafkaform.platform.cluster(hostvars)``: the computed cluster model."""
    return module("model").build(_view(groups, hostvars)).to_dict()


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"preflight": preflight, "cluster": cluster}
