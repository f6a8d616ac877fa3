"""What the preflight reads of one input: its type, its line breaks, its JVM options.

Types are checked with Ansible's own argument-spec validator against each role's
``meta/argument_specs.yml``, the check a role runs on a host when it starts: the preflight only
runs it earlier, for every host at once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from .defaults import CLUSTER_DEFAULTS, role_options

#: Every character Python's ``str.splitlines`` (and so a properties or YAML reader) breaks at.
LINE_BREAKS = re.compile("[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")

#: Names whose values are never printed in a finding.
SECRET_NAME = re.compile(r"password|secret|_key$", re.IGNORECASE)

#: JVM options that open a remote debugger or JMX past the role's own, password and TLS protected,
#: JMX setting (SE-05). Each pattern with what it opens.
EXPOSING_JVM_OPTIONS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^-agentlib:jdwp|^-Xrunjdwp|^-Xdebug$|^-agentpath:.*jdwp"),
     "a remote debugger (JDWP): anyone who reaches its port runs code in the JVM"),
    (re.compile(r"^-Dcom\.sun\.management\.(jmxremote\b|config\.file=)"),
     "JMX remote management outside the role's password and TLS protected setting"),
    (re.compile(r"^-Djava\.rmi\.server\.hostname="),
     "the address JMX remote clients are sent to"),
)


@dataclass(frozen=True)
class TypeCheck:
    """One input as its role's argument spec reads it: the converted value, or why not."""

    value: Any
    problems: tuple[str, ...]


def _without_defaults(spec: Mapping[str, Any]) -> dict[str, Any]:
    """An option's spec without its defaults (Jinja strings Ansible templates; the value is given
    here anyway) and with the same for its suboptions."""
    kept = {key: value for key, value in spec.items() if key != "default"}
    if isinstance(spec.get("options"), Mapping):
        kept["options"] = {name: _without_defaults(sub) for name, sub in spec["options"].items()}
    return kept


@cache
def _spec(role: str, name: str) -> dict[str, Any]:
    """Input ``name``'s spec as the checks below read it: without its defaults."""
    return _without_defaults(role_options(role)[name])


@cache
def _validator(role: str, name: str) -> Any:
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

    return ArgumentSpecValidator({name: _spec(role, name)})


def shown(name: str, value: Any) -> str:
    """``value`` as a finding shows it: never a secret's."""
    return "(hidden)" if SECRET_NAME.search(name) else repr(value)


#: Scalar types whose values the validator returns unchanged when they already have the type.
_SCALAR_TYPES: dict[str, type] = {"str": str, "int": int, "bool": bool, "float": float}

#: Spec keys that do not constrain a value of the declared scalar type.
_NEUTRAL_KEYS = frozenset({"type", "description", "required", "no_log", "version_added"})


def _already_valid(spec: Mapping[str, Any], value: Any) -> bool:
    """Whether ``value`` is of ``spec``'s scalar type with nothing else to check: then the
    validator returns it as it is (an inventory of 1,000 brokers has 1,000 distinct ids). The
    inventory's values are Ansible's tagged subclasses of str and int; a bool, itself an int, is
    left to the validator."""
    wanted = _SCALAR_TYPES.get(str(spec.get("type", "str")))
    return (wanted is not None and isinstance(value, wanted)
            and (wanted is bool or not isinstance(value, bool)) and spec.keys() <= _NEUTRAL_KEYS)


def _check_role_input(role: str, name: str, value: Any) -> TypeCheck:
    if _already_valid(_spec(role, name), value):
        return TypeCheck(value, ())
    result = _validator(role, name).validate({name: value})
    problems = tuple(
        f"{name} is {shown(name, value)}: {message}" if not SECRET_NAME.search(name)
        else f"{name} does not have the type roles/{role}/meta/argument_specs.yml declares"
        for message in result.error_messages)
    return TypeCheck(result.validated_parameters.get(name, value), problems)


_checked: dict[tuple[str, str, str], TypeCheck] = {}


def role_input(role: str, name: str, value: Any) -> TypeCheck:
    """``value`` of ``role``'s input ``name``, converted as the role would convert it.

    Hosts share most values (group_vars), so each distinct value is validated once.
    """
    key = (role, name, repr(value))
    if key not in _checked:
        _checked[key] = _check_role_input(role, name, value)
    return _checked[key]


def cluster_setting(name: str, value: Any) -> tuple[str, ...]:
    """Problems of a cluster setting's type: the type of its default in ``CLUSTER_DEFAULTS``."""
    wanted = type(CLUSTER_DEFAULTS[name])
    if wanted is bool:
        ok = isinstance(value, bool) or str(value).lower() in (
            "yes", "no", "on", "off", "true", "false", "1", "0", "y", "n")
    elif wanted is int:
        ok = not isinstance(value, bool) and re.fullmatch(r"-?\d+", str(value).strip()) is not None
    elif wanted is list:  # of names
        ok = isinstance(value, list) and all(isinstance(item, str) for item in value)
    else:
        ok = isinstance(value, str)
    return () if ok else (f"{name} is {shown(name, value)}, not {wanted.__name__}",)


def line_breaks(name: str, value: Any) -> Iterator[str]:
    """Where ``value`` (scalars, lists and mappings, keys included) holds a line break: every
    value ends up on one line of a properties file, a unit or a command line."""
    if isinstance(value, str):
        found = LINE_BREAKS.search(value)
        if found:
            yield (f"{name} holds a line break ({found[0]!r}) in {shown(name, value)}: it would "
                   "split the line it is written to")
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from line_breaks(f"{name} key", key)
            yield from line_breaks(f"{name}.{key}", item)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from line_breaks(f"{name}[{index}]", item)


def exposing_jvm_options(name: str, options: Any) -> Iterator[str]:
    """The options of ``name`` (a list of JVM options, or one string of them) that open a
    debugger or JMX to the network."""
    listed = options.split() if isinstance(options, str) else options or []
    for option in (str(item).strip() for item in listed):
        for pattern, opens in EXPOSING_JVM_OPTIONS:
            if pattern.search(option):
                yield f"{name} holds {option}, which opens {opens}"
                break
