"""Role inputs: every default is documented in meta/argument_specs.yml with the same value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

ROLES = Path(__file__).resolve().parents[2] / "roles"


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text()) if path.is_file() else None
    return data or {}


def roles_with_tasks() -> list[str]:
    return sorted(p.parent.parent.name for p in ROLES.glob("*/tasks/main.yml"))


@pytest.mark.parametrize("role", roles_with_tasks())
def test_every_default_has_a_spec_with_the_same_default(role: str) -> None:
    defaults = load(ROLES / role / "defaults" / "main.yml")
    specs = load(ROLES / role / "meta" / "argument_specs.yml")
    assert "main" in specs.get("argument_specs", {}), f"{role} has no argument spec for main"
    options = specs["argument_specs"]["main"].get("options", {})
    assert sorted(set(defaults) - set(options)) == [], "defaults without a spec"
    for name, value in defaults.items():
        spec = options[name]
        assert spec.get("description"), f"{name} has no description"
        assert "default" in spec, f"{name}: the spec lacks the default"
        assert spec["default"] == value, f"{name}: spec default differs from defaults/main.yml"


@pytest.mark.parametrize("role", roles_with_tasks())
def test_every_spec_without_default_is_required(role: str) -> None:
    defaults = load(ROLES / role / "defaults" / "main.yml")
    specs = load(ROLES / role / "meta" / "argument_specs.yml")
    options = specs["argument_specs"]["main"].get("options", {})
    loose = [n for n, s in options.items()
             if n not in defaults and not s.get("required") and "default" not in s]
    assert loose == [], "optional inputs with no default anywhere"
