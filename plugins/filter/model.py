"""Filters over kafkaform's cluster model: thin wrappers, the logic lives in the Python package."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform import checks, model

Groups = Mapping[str, Sequence[str]]


def _view(groups: Groups, hostvars: Mapping[str, Any],
          run_settings: Mapping[str, Any] | None = None) -> model.InventoryView:
    return model.InventoryView(groups=groups, hostvars=hostvars,
                               run_settings=dict(run_settings or {}))


def preflight(groups: Groups, hostvars: Mapping[str, Any],
              run_settings: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """``groups | kafkaform.platform.preflight(hostvars[, run_settings])``: findings as dicts,
    errors first. ``run_settings`` are cluster settings the playbook runs with where the
    inventory sets none."""
    return [f.to_dict() for f in checks.check(_view(groups, hostvars, run_settings))]


def cluster(groups: Groups, hostvars: Mapping[str, Any]) -> dict[str, Any]:
    """``groups | kafkaform.platform.cluster(hostvars)``: the computed cluster model."""
    return model.build(_view(groups, hostvars)).to_dict()


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"preflight": preflight, "cluster": cluster}
