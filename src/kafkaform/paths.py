"""Where the collection's files are: the repository root is the collection kafkaform.platform."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path


@cache
def collection_root() -> Path:
    """The directory holding ``galaxy.yml``, ``roles/`` and ``templates/``.

    ``KAFKAFORM_COLLECTION`` wins; otherwise the package's own checkout (``src/kafkaform`` sits two
    levels below the root in an editable install, which is how the project is installed).
    """
    explicit = os.environ.get("KAFKAFORM_COLLECTION")
    candidates = [Path(explicit)] if explicit else []
    candidates.append(Path(__file__).resolve().parents[2])
    for candidate in candidates:
        if (candidate / "galaxy.yml").is_file() and (candidate / "roles").is_dir():
            return candidate
    raise RuntimeError(
        "cannot find the kafkaform collection (galaxy.yml, roles/): install kafkaform from its "
        "checkout with `pip install -e .` or set KAFKAFORM_COLLECTION to the checkout"
    )


def templates_dir() -> Path:
    return collection_root() / "templates"


def role_dir(role: str) -> Path:
    return collection_root() / "roles" / role
