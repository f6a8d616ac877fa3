"""The control node's secrets directory: every secret and private key sealed at rest (SE-16).

    kafkaform verify -i inventory/lab --checks control_node

Runs where ``kafkaform verify`` runs, which is where the playbooks ran (the control node): the
cluster's directory ``<kafkaform_secrets_dir>/<kafka_cluster_name>`` from the inventory. The
public files (certificates, the trust bundle) and the keystores (PKCS#12, locked by a sealed
password) are left out; every other file must be in Ansible Vault's format and readable by its
owner alone, unless the inventory opted into plain text (``kafkaform_secrets_plaintext``).
"""

from __future__ import annotations

import stat

import pytest

from kafkaform import sealed
from kafkaform.secrets import cluster_dir
from kafkaform.verify.conftest import Inventory


def test_secrets_and_keys_on_the_control_node_are_sealed(inventory: Inventory) -> None:
    view = inventory.view
    settings = {name: view.cluster_var(name) for name in
                ("kafkaform_secrets_dir", "kafka_cluster_name", sealed.PLAINTEXT_SETTING)}
    if sealed.plaintext(settings):
        pytest.skip("the inventory keeps the control node's secrets in plain text "
                    f"({sealed.PLAINTEXT_SETTING}: true)")
    root = cluster_dir({k: v for k, v in settings.items() if v is not None}, create=False)
    if not root.is_dir():
        pytest.skip(f"{root} does not exist here: run the checks on the control node")
    held = [path for path in sorted(root.rglob("*"))
            if path.is_file() and not path.name.endswith(sealed.UNSEALED_SUFFIXES)]
    assert held, f"{root} holds no secret: not the directory the playbooks wrote"
    plain = [str(path) for path in held if not sealed.is_sealed(path.read_bytes())]
    assert plain == [], "in plain text on the control node (SE-16)"
    loose = [str(path) for path in held if stat.S_IMODE(path.stat().st_mode) & 0o077]
    assert loose == [], "readable by others than their owner"
    open_dirs = [str(path) for path in [root, *root.rglob("*")]
                 if path.is_dir() and stat.S_IMODE(path.stat().st_mode) & 0o077]
    assert open_dirs == [], "directories open to others than their owner"
