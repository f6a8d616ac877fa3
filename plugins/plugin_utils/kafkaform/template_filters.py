"""Filters every template may use, registered in each engine that renders the roles' templates.

Plain functions over plain data: :mod:`kafkaform.render` adds them to its Jinja2 environment
(pyinfra, unit tests) and ``plugins/filter/templates.py`` hands the same functions to Ansible.
Templates call them by their full name, ``kafkaform.platform.<name>``: ansible-core 2.19 resolves
a collection's filters only by that name, and plain Jinja2 accepts dotted filter names too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def java_properties(settings: Mapping[str, Any]) -> str:
    """``key=value`` lines sorted by key, booleans in Java's lower case, no trailing newline.

    Used for server.properties and zoo.cfg extras, where a stable order keeps files (and so
    restarts) unchanged across runs.
    """
    lines = []
    for key in sorted(settings):
        value = settings[key]
        if isinstance(value, bool):
            value = "true" if value else "false"
        text = str(value)
        if "\n" in text or "\n" in key:
            raise ValueError(f"property {key!r}: values may not span lines")
        lines.append(f"{key}={text}")
    return "\n".join(lines)


def parse_java_properties(text: str) -> dict[str, str]:
    """The inverse of :func:`java_properties`: ``key=value`` lines of a file the roles wrote
    (server.properties, zoo.cfg, pipeline.properties); blank lines and comments (``#``, ``!``)
    skipped. A line without ``=`` is an error: the roles never write one."""
    settings: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith(("#", "!")):
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise ValueError(f"line {number}: expected key=value, got {line!r}")
        settings[key.strip()] = value.strip()
    return settings


#: Short name → function; Ansible registers the short name inside the collection's namespace.
FILTERS: dict[str, Callable[..., Any]] = {
    "java_properties": java_properties,
}

#: The names templates use: ``kafkaform.platform.<short name>``.
QUALIFIED_FILTERS: dict[str, Callable[..., Any]] = {
    f"kafkaform.platform.{name}": function for name, function in FILTERS.items()
}
