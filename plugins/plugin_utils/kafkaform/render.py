"""Render the roles' templates with plain Jinja2, exactly as the Ansible roles do.

Each role keeps its templates in ``roles/<role>/templates/``, laid out like the files they write;
``kafkaform.plans.files.template`` names one. Ansible's template module trims blocks by default
and pyinfra's environment does not, so the templates control whitespace explicitly (``{%- -%}``)
and this environment keeps Jinja2's defaults; ``tests/unit/test_templates.py`` renders every
template both ways and requires identical bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from .paths import collection_root
from .template_filters import QUALIFIED_FILTERS


@cache
def environment(root: Path | None = None) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(root or collection_root())),
        undefined=jinja2.StrictUndefined,  # a missing input is an error, never an empty string
        keep_trailing_newline=True,
        autoescape=False,  # config files, not HTML
    )
    env.filters.update(QUALIFIED_FILTERS)
    return env


def render(template: str, context: Mapping[str, Any]) -> str:
    """Render ``template`` (``kafkaform.plans.files.template``'s path) with ``context``."""
    name = Path(template).relative_to(collection_root()).as_posix()
    return environment().get_template(name).render(**context)


def all_templates() -> list[tuple[str, str]]:
    """Every role's template, as ``(role, name)`` with ``name`` under ``roles/<role>/templates``."""
    return sorted((directory.parent.name, path.relative_to(directory).as_posix())
                  for directory in (collection_root() / "roles").glob("*/templates")
                  for path in directory.rglob("*.j2"))
