"""Render the collection's ``templates/`` with plain Jinja2, exactly as the Ansible roles do.

Ansible's template module trims blocks by default and pyinfra's environment does not, so the
templates control whitespace explicitly (``{%- -%}``) and this environment keeps Jinja2's defaults;
``tests/unit/test_templates.py`` renders every template both ways and requires identical bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from .paths import templates_dir
from .template_filters import QUALIFIED_FILTERS


@cache
def environment(root: Path | None = None) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(root or templates_dir())),
        undefined=jinja2.StrictUndefined,  # a missing input is an error, never an empty string
        keep_trailing_newline=True,
        autoescape=False,  # config files, not HTML
    )
    env.filters.update(QUALIFIED_FILTERS)
    return env


def render(template: str, context: Mapping[str, Any]) -> str:
    """Render ``templates/<template>`` (e.g. ``zookeeper/zoo.cfg.j2``) with ``context``."""
    return environment().get_template(template).render(**context)


def all_templates() -> list[str]:
    """Every template, relative to ``templates/``."""
    root = templates_dir()
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.j2"))
