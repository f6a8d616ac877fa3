"""The zookeeper template context: the golden sample is what it computes; SASL on by default, the
in-place migration's middle step, and no secret in the context."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kafkaform import model, render
from kafkaform.contexts.zookeeper import SASL_KEYS, settings_problems, zookeeper_context
from kafkaform.plans.files import template
from tests.unit.test_checks import view_of

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "zookeeper"
TXN_LOG = [{"device": None, "mount": "/var/lib/zookeeper/txnlog", "purpose": "zookeeper_txn_log"}]


def cluster() -> dict[str, Any]:
    """kf-zk1..3 as inventory/lab declares them, each with a transaction-log directory."""
    spec = {"zookeeper": {f"kf-zk{i}": {"zookeeper_id": i, "os_tuning_data_disks": TXN_LOG}
                          for i in (1, 2, 3)}}
    return model.build(view_of(spec)).to_dict()


def context(**settings: Any) -> dict[str, Any]:
    return zookeeper_context(cluster(), "kf-zk2", settings)


def zoo_cfg(ctx: dict[str, Any]) -> dict[str, str]:
    """zoo.cfg as rendered from ``ctx``, key to value; a key set twice fails."""
    rendered = render.render(template("zookeeper", "etc/zookeeper/zoo.cfg.j2"), {"zookeeper": ctx})
    lines = [line for line in rendered.splitlines() if line and not line.startswith("#")]
    keys = [line.split("=", 1)[0] for line in lines]
    assert len(keys) == len(set(keys)), keys
    return dict(line.split("=", 1) for line in lines)


def test_the_golden_sample_is_the_context_of_kf_zk2() -> None:
    golden = yaml.safe_load((GOLDEN / "context.yml").read_text())
    assert context(zookeeper_heap_mb=256, zookeeper_extra_settings={"maxClientCnxns": 120}) == \
        golden["zookeeper"]


def test_a_member_reloads_its_tls_material_and_is_not_restarted_for_it() -> None:
    """SE-18: zoo.cfg has the member reload its keystore and trust bundle for the quorum and for
    clients, so neither file makes a running member stale; zoo.cfg itself still does."""
    ctx = context()
    cfg = zoo_cfg(ctx)
    assert (cfg["sslQuorumReloadCertFiles"], cfg["client.certReload"]) == ("true", "true")
    tls = ctx["tls"]
    assert not {tls["keystore"], tls["trust"]} & set(ctx["restart_files"])
    assert {f"{ctx['conf_dir']}/zoo.cfg", tls["password_file"]} <= set(ctx["restart_files"])


def test_sasl_is_required_of_clients_and_between_members_by_default() -> None:
    ctx = context(zookeeper_conf_dir="/srv/zk/conf/")
    cfg = zoo_cfg(ctx)
    assert cfg["authProvider.sasl"] == \
        "org.apache.zookeeper.server.auth.SASLAuthenticationProvider"
    assert (cfg["enforce.auth.enabled"], cfg["enforce.auth.schemes"]) == ("true", "sasl")
    assert (cfg["quorum.auth.enableSasl"], cfg["quorum.auth.learnerRequireSasl"],
            cfg["quorum.auth.serverRequireSasl"]) == ("true", "true", "true")
    assert (cfg["quorum.auth.learner.saslLoginContext"],
            cfg["quorum.auth.server.saslLoginContext"]) == ("QuorumLearner", "QuorumServer")
    assert "-Djava.security.auth.login.config=/srv/zk/conf/jaas.conf" in ctx["java"]["options"]
    assert (ctx["sasl"]["jaas_file"], ctx["sasl"]["client_jaas_file"]) == (
        "/srv/zk/conf/jaas.conf", "/srv/zk/conf/client-jaas.conf")


def test_not_enforced_offers_every_login_and_requires_none() -> None:
    cfg = zoo_cfg(context(zookeeper_sasl_enforced="false"))  # as an inventory may write it
    assert cfg["authProvider.sasl"].endswith("SASLAuthenticationProvider")
    assert cfg["quorum.auth.enableSasl"] == "true"
    assert (cfg["enforce.auth.enabled"], cfg["quorum.auth.learnerRequireSasl"],
            cfg["quorum.auth.serverRequireSasl"]) == ("false", "false", "false")


def test_the_middle_step_requires_logins_of_learners_only() -> None:
    ctx = context(zookeeper_sasl_enforced=False, zookeeper_extra_settings={
        "quorum.auth.learnerRequireSasl": True, "maxClientCnxns": 120})
    cfg = zoo_cfg(ctx)
    assert (cfg["enforce.auth.enabled"], cfg["quorum.auth.learnerRequireSasl"],
            cfg["quorum.auth.serverRequireSasl"]) == ("false", "true", "false")
    assert ctx["extra_settings"] == "maxClientCnxns=120"


@pytest.mark.parametrize("key", sorted(SASL_KEYS - {"quorum.auth.learnerRequireSasl"}))
def test_extra_settings_cannot_set_the_sasl_keys(key: str) -> None:
    for enforced in (True, False):
        problems = settings_problems({"zookeeper_sasl_enforced": enforced,
                                      "zookeeper_extra_settings": {key: "false"}})
        assert problems == [f"zookeeper_extra_settings: {key} is set by the role through its "
                            "own variable (see roles/zookeeper/defaults/main.yml)"]


@pytest.mark.parametrize(("enforced", "value"), [(True, True), (True, False), (False, "maybe")])
def test_learner_login_is_an_extra_setting_only_of_the_middle_step(enforced: bool,
                                                                    value: Any) -> None:
    settings = {"zookeeper_sasl_enforced": enforced,
                "zookeeper_extra_settings": {"quorum.auth.learnerRequireSasl": value}}
    [problem] = settings_problems(settings)
    assert "while zookeeper_sasl_enforced is false" in problem and "SE-08" in problem
    with pytest.raises(ValueError, match=r"quorum\.auth\.learnerRequireSasl"):
        context(**settings)


def test_no_secret_reaches_the_context() -> None:
    secrets = {"zookeeper-kafka": "kafka-Secret-1", "zookeeper-quorum": "quorum-Secret-2"}
    text = repr(context(kafkaform_secrets=secrets))
    assert not any(value in text for value in secrets.values())


def test_snap_count_is_written_only_when_set() -> None:
    assert "snapCount" not in zoo_cfg(context())
    assert zoo_cfg(context(zookeeper_snap_count=50000))["snapCount"] == "50000"


@pytest.mark.parametrize(("settings", "words"), [
    ({"zookeeper_snap_count": -1}, "may not be negative"),
    ({"zookeeper_snap_count": 50000, "zookeeper_extra_settings": {"snapCount": 10}},
     "set by zookeeper_snap_count too"),
])
def test_a_bad_snap_count_is_named(settings: dict[str, Any], words: str) -> None:
    [problem] = settings_problems(settings)
    assert words in problem
