"""The brokers' admin helper (roles/kafka_broker/files/kafkaform-kafka) without a cluster: the
paths that must not touch one."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

HELPER = Path(__file__).resolve().parents[2] / "roles/kafka_broker/files/kafkaform-kafka"


@pytest.fixture(scope="module")
def helper() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("kafkaform_kafka_helper", str(HELPER))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_reload_tls_dry_run_names_the_listeners_and_runs_nothing(
        helper: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "server.properties").write_text(
        "broker.id=7\n"
        "listeners=BROKER://10.0.0.7:9091,CLIENT://10.0.0.7:9093,LOCAL://127.0.0.1:9094\n"
        "listener.security.protocol.map=BROKER:SSL,CLIENT:SASL_SSL,LOCAL:PLAINTEXT\n"
        "ssl.keystore.location=/etc/kafka/tls/keystore.p12\n"
        "ssl.truststore.location=/etc/kafka/tls/trust.pem\n"
        "ssl.keystore.password=${file:/etc/kafka/secrets.properties:keystore}\n")

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a dry run started {args}")

    monkeypatch.setattr(subprocess, "run", refuse)
    monkeypatch.setattr(subprocess, "Popen", refuse)
    assert helper.main(["kafkaform-kafka", "--conf", str(tmp_path), "--dry-run",
                        "reload-tls"]) == 0
    assert capsys.readouterr().out == "(dry run) would reload BROKER, CLIENT on broker 7\n"
