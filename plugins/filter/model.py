"""Filters over kafkaform's cluster model: thin wrappers, the logic lives in the Python package."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform import checks, model

Groups = Mapping[str, Sequence[str]]


def _view(groups: Groups, hostvars: Mapping[str, Any]) -> model.InventoryView:
    return model.InventoryView(groups=groups, hostvars=hostvars)


def preflight(groups: Groups, hostvars: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``groups | kafkaform.platform.preflight(hostvars)``: findings as dicts, errors first."""
    return [f.to_dict() for f in checks.check(_view(groups, hostvars))]


def cluster(groups: Groups, hostvars: Mapping[str, Any]) -> dict[str, Any]:
    """``groups | kafkaform.platform.cluster(hostvars)``: the computed cluster model."""
    return model.build(_view(groups, hostvars)).to_dict()


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"preflight": preflight, "cluster": cluster}
