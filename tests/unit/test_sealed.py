"""Secrets at rest (SE-16): sealed with the run's vault secret, plain text only by opt-in."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kafkaform import sealed
from kafkaform.pki import ensure_host, read_material
from kafkaform.secrets import secret

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
NOW = datetime(2031, 3, 1, 12, 0, tzinfo=UTC)
PLAIN_KEY = b"-----BEGIN PRIVATE KEY-----"


def settings(tmp_path: Path, **extra: Any) -> dict[str, Any]:
    return {"kafkaform_secrets_dir": str(tmp_path / "secrets"), "kafka_cluster_name": "demo",
            **extra}


def stored(tmp_path: Path) -> dict[str, bytes]:
    """Every file of the cluster's secrets directory that holds a secret or a private key."""
    root = tmp_path / "secrets" / "demo"
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.name.endswith(sealed.UNSEALED_SUFFIXES)}


def test_generated_secrets_and_keys_are_sealed_and_read_back(tmp_path: Path) -> None:
    variables = settings(tmp_path)
    value = secret("keystore", variables)
    issued = ensure_host(variables, "broker-1", ["broker-1"], "kafka-broker", now=NOW)
    files = stored(tmp_path)
    assert set(files) == {"keystore", "pki/ca.key", "pki/hosts/broker-1/key.pem"}
    assert all(data.startswith(b"$ANSIBLE_VAULT;1.1;AES256") for data in files.values()), files
    assert value.encode() not in b"".join(files.values())
    assert secret("keystore", variables) == value
    assert read_material(issued.key).startswith(PLAIN_KEY)
    again = ensure_host(variables, "broker-1", ["broker-1"], "kafka-broker", now=NOW)
    assert not again.changed  # the sealed CA and key were read back, nothing reissued
    assert stored(tmp_path) == files


def test_plain_files_from_an_earlier_release_are_sealed_in_place(tmp_path: Path) -> None:
    plain = settings(tmp_path, kafkaform_secrets_plaintext=True)
    value = secret("zookeeper-kafka", plain)
    ensure_host(plain, "broker-1", ["broker-1"], "kafka-broker", now=NOW)
    assert (tmp_path / "secrets" / "demo" / "zookeeper-kafka").read_text().strip() == value
    assert all(not sealed.is_sealed(data) for data in stored(tmp_path).values())

    variables = settings(tmp_path)
    assert secret("zookeeper-kafka", variables) == value
    issued = ensure_host(variables, "broker-1", ["broker-1"], "kafka-broker", now=NOW)
    assert not issued.changed
    files = stored(tmp_path)
    assert all(sealed.is_sealed(data) for data in files.values()), sorted(files)
    path = tmp_path / "secrets" / "demo" / "zookeeper-kafka"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_check_mode_reads_the_keys_but_never_rewrites_them(tmp_path: Path) -> None:
    """(The keystore password, a secret, is sealed when first read, in check mode too: the
    control node's file changes form, not value, and no host sees it.)"""
    plain = settings(tmp_path, kafkaform_secrets_plaintext=True)
    ensure_host(plain, "broker-1", ["broker-1"], "kafka-broker", now=NOW)
    keys = {name: data for name, data in stored(tmp_path).items() if name.startswith("pki/")}
    dry = ensure_host(settings(tmp_path), "broker-1", ["broker-1"], "kafka-broker", now=NOW,
                      dry_run=True)
    assert not dry.changed
    assert {n: d for n, d in stored(tmp_path).items() if n.startswith("pki/")} == keys


def test_a_wrong_vault_secret_is_an_error_never_a_new_key(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from ansible.parsing.vault import VaultSecret

    variables = settings(tmp_path)
    ensure_host(variables, "broker-1", ["broker-1"], "kafka-broker", now=NOW)
    before = stored(tmp_path)
    monkeypatch.setattr(sealed, "vault_secrets",
                        lambda: [("default", VaultSecret(b"not-the-operator-s"))])
    with pytest.raises(sealed.SealError, match=r"ca.key: no vault secret given opens it"):
        ensure_host(variables, "broker-1", ["broker-1"], "kafka-broker", now=NOW)
    assert stored(tmp_path) == before


def test_without_a_vault_secret_nothing_is_written_in_plain_text(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sealed, "vault_secrets", lambda: [])
    assert "SE-16" not in sealed.problem({})  # the rule id is the caller's
    assert "--vault-password-file" in sealed.problem({})
    assert sealed.problem({"kafkaform_secrets_plaintext": True}) == ""
    with pytest.raises(sealed.SealError, match="kafkaform_secrets_plaintext: true"):
        secret("keystore", settings(tmp_path))
    assert stored(tmp_path) == {}


SMALL_CLUSTER = ROOT / "tests" / "unit" / "fixtures" / "small-cluster.yml"


def test_the_preflight_stops_a_run_without_a_vault_secret_before_any_host(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_VAULT")}
    env.update(ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"))
    argv = [str(BIN / "ansible-playbook"), "-i", str(SMALL_CLUSTER),
            str(ROOT / "playbooks" / "preflight.yml")]
    refused = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT,
                             check=False, timeout=300)
    assert refused.returncode == 2, refused.stdout[-2000:]
    assert "encrypted with your Ansible Vault secret, and this run has none" in refused.stdout
    assert "UNREACHABLE" not in refused.stdout and "unreachable=0" in refused.stdout
    passed = subprocess.run([*argv, "-e", "kafkaform_secrets_plaintext=true"],
                            capture_output=True, text=True, env=env, cwd=ROOT, check=False,
                            timeout=300)
    assert passed.returncode == 0, passed.stdout[-2000:]
    (tmp_path / "pw").write_text("operator\n")
    given = subprocess.run([*argv, "--vault-password-file", str(tmp_path / "pw")],
                           capture_output=True, text=True, env=env, cwd=ROOT, check=False,
                           timeout=300)
    assert given.returncode == 0, given.stdout[-2000:]
