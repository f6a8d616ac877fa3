"""Where the collection's files are.

The package lives inside the collection ``kafkaform.platform`` (``plugins/plugin_utils/kafkaform``),
so the roles' defaults, argument specs and templates are read from the same installed tree
the roles run from: a checkout, a collection installed by ``ansible-galaxy``, or the wheel, which
installs the collection as ``ansible_collections/kafkaform/platform`` beside this package.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

_HERE = Path(__file__).resolve().parent


def _is_collection(path: Path) -> bool:
    return (path / "roles").is_dir() and (
        (path / "galaxy.yml").is_file() or (path / "MANIFEST.json").is_file()
    )


@cache
def collection_root() -> Path:
    """The directory holding ``roles/`` and ``playbooks/``.

    ``KAFKAFORM_COLLECTION`` wins; then the collection this package sits in; then the collection
    the wheel installs beside it.
    """
    explicit = os.environ.get("KAFKAFORM_COLLECTION")
    candidates = [Path(explicit)] if explicit else []
    candidates.append(_HERE.parents[2])
    candidates.append(_HERE.parent / "ansible_collections" / "kafkaform" / "platform")
    for candidate in candidates:
        if _is_collection(candidate):
            return candidate
    raise RuntimeError(
        "cannot find the collection kafkaform.platform (roles/, playbooks/) next to the kafkaform "
        f"package in {_HERE}: reinstall kafkaform, or set KAFKAFORM_COLLECTION to the collection"
    )


def role_dir(role: str) -> Path:
    return collection_root() / "roles" / role


def collections_path() -> Path | None:
    """The directory Ansible finds this collection in (the one holding ``ansible_collections``):
    where it is installed, or the checkout's ``.collections`` that ``./dev install`` links."""
    root = collection_root()
    if root.parents[1].name == "ansible_collections":
        return root.parents[2]
    linked = root / ".collections"
    return linked if (linked / "ansible_collections" / "kafkaform" / "platform").exists() else None


def load_collections() -> None:
    """Ansible's collection loader, set up once for this process as ansible-playbook sets it up,
    this collection first: inventory plugins, and the filters the roles' defaults use, load
    through it whatever the working directory. Ansible is imported here: the model stays
    importable without it."""
    from ansible.plugins.loader import init_plugin_loader
    from ansible.utils.collection_loader import AnsibleCollectionConfig

    if AnsibleCollectionConfig.collection_finder is None:
        own = collections_path()
        init_plugin_loader([str(own)] if own else None)
