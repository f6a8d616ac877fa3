"""Filters every template may use, registered in each engine that renders ``templates/``.

Plain functions over plain data: :mod:`kafkaform.render` adds them to its Jinja2 environment
(pyinfra, unit tests) and ``plugins/filter/templates.py`` hands the same functions to Ansible.
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


FILTERS: dict[str, Callable[..., Any]] = {
    "java_properties": java_properties,
}
