"""Secrets on the control node: generated once, read back, or given by the inventory and checked."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from kafkaform.secrets import given_problems, secret


def test_a_secret_is_generated_once_private_and_read_back(tmp_path: Path) -> None:
    variables = {"kafkaform_secrets_dir": str(tmp_path), "kafka_cluster_name": "c1"}
    first = secret("keystore", variables)
    assert len(first) == 32 and first.isalnum()
    assert secret("keystore", variables) == first
    path = tmp_path / "c1" / "keystore"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert secret("keystore", {**variables, "kafka_cluster_name": "c2"}) != first


def test_the_inventory_wins_and_is_checked(tmp_path: Path) -> None:
    variables = {"kafkaform_secrets_dir": str(tmp_path),
                 "kafkaform_secrets": {"keystore": "a-long-enough-value"}}
    assert secret("keystore", variables) == "a-long-enough-value"
    assert not (tmp_path / "kafka" / "keystore").exists()
    with pytest.raises(ValueError, match="double quote"):
        secret("keystore", {**variables, "kafkaform_secrets": {"keystore": 'sixteen-chars-"x'}})
    with pytest.raises(KeyError):
        secret("nope", variables)


def test_given_secrets_problems_name_the_secret_never_the_value() -> None:
    problems = given_problems({"keystore": "short", "zookeeper-kafka": "x" * 16 + "${env:X}",
                               "zookeper-kafka": "y" * 20})
    text = "\n".join(problems)
    assert "keystore must be a string of at least 16" in text
    assert "zookeeper-kafka may not contain" in text
    assert "zookeper-kafka is not a secret kafkaform uses" in text
    assert "short" not in text.replace("keystore", "") and "env:X" not in text
