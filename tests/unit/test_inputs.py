"""The preflight's type check of one input agrees with Ansible's argument-spec validator, the
check each role runs when it starts, including where it skips the validator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kafkaform import inputs
from kafkaform.defaults import role_options

ROOT = Path(__file__).resolve().parents[2]
ROLES = sorted(p.parent.parent.name for p in ROOT.glob("roles/*/meta/argument_specs.yml"))

#: Values of each scalar type, and of other types, given to every input of that scalar type.
SAMPLES: tuple[Any, ...] = (0, 7, -3, 2.5, True, False, "", "9092", "yes", "a,b", [1], {"a": 1},
                            None)


def scalar_inputs() -> list[tuple[str, str]]:
    return [(role, name) for role in ROLES for name, spec in role_options(role).items()
            if spec.get("type", "str") in ("str", "int", "bool", "float")]


def test_the_roles_have_scalar_inputs() -> None:
    assert len(scalar_inputs()) > 20


@pytest.mark.parametrize(("role", "name"), scalar_inputs())
def test_the_check_matches_the_validator(role: str, name: str) -> None:
    validator = inputs._validator(role, name)
    for value in SAMPLES:
        result = validator.validate({name: value})
        checked = inputs._check_role_input(role, name, value)
        assert bool(checked.problems) == bool(result.error_messages), (role, name, value)
        if not result.error_messages:
            expected = result.validated_parameters.get(name, value)
            assert checked.value == expected and type(checked.value) is type(expected), (
                role, name, value)


def test_a_value_of_the_declared_type_skips_the_validator() -> None:
    assert inputs._already_valid({"type": "int", "description": "an id"}, 7)
    assert not inputs._already_valid({"type": "int"}, True)  # a bool is not an id
    assert not inputs._already_valid({"type": "int"}, "7")  # converted by the validator
    assert not inputs._already_valid({"type": "str", "choices": ["a"]}, "b")
