"""SE-17: one list of protocol versions and AEAD suites, in every runtime's spelling, everywhere."""

from __future__ import annotations

import ssl
from typing import Any

from kafkaform import model, tls_policy
from kafkaform.contexts.kafka_broker import kafka_broker_context
from kafkaform.contexts.monitoring import monitoring_context
from kafkaform.contexts.spark_node import spark_node_context
from tests.unit.test_checks import lab_like, view_of

AEAD = ("_GCM_", "_CHACHA20_POLY1305_")


def test_every_suite_kafkaform_enables_is_aead_with_forward_secrecy() -> None:
    assert tls_policy.PROTOCOLS == ("TLSv1.3", "TLSv1.2")
    for suite in tls_policy.JAVA_SUITES:
        assert any(mark in suite for mark in AEAD), suite
        assert suite in tls_policy.TLS13_SUITES or "_ECDHE_" in suite or "_DHE_" in suite
    assert set(tls_policy.GO_SUITES) < set(tls_policy.TLS12_SUITES)


def test_the_scan_offers_names_openssl_knows_and_refuses_none_of_the_accepted() -> None:
    """The scan's TLS 1.2 offers: OpenSSL must know every name (an unknown one would silently
    make the offer smaller), the refused ones must all be CBC or static RSA, the accepted ones
    AEAD with ECDHE."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.set_ciphers("ALL:@SECLEVEL=0")
    known = {c["name"]: c for c in context.get_ciphers()}
    for name in tls_policy.REFUSED_OPENSSL_SUITES + tls_policy.ACCEPTED_OPENSSL_SUITES:
        assert name in known, name
    for name in tls_policy.REFUSED_OPENSSL_SUITES:
        assert not known[name]["aead"] or known[name]["kea"] == "kx-rsa", name
    for name in tls_policy.ACCEPTED_OPENSSL_SUITES:
        assert known[name]["aead"] and known[name]["kea"] == "kx-ecdhe", name


def platform() -> tuple[dict[str, Any], dict[str, list[str]]]:
    view = view_of(lab_like())
    return model.build(view).to_dict(), {**view.groups, model.MONITORING: ["mon"]}


def test_kafka_spark_and_the_monitoring_services_get_the_same_list() -> None:
    cluster, groups = platform()
    broker = kafka_broker_context(cluster, "k1", {})
    props = dict(line.split("=", 1) for line in broker["server_properties"].splitlines())
    assert props["ssl.enabled.protocols"] == "TLSv1.3,TLSv1.2"
    assert props["ssl.cipher.suites"].split(",") == list(tls_policy.JAVA_SUITES)
    spark = spark_node_context(cluster, "sm", {}, {"cores": 2, "memory_mb": 4096})
    defaults = dict(line.split("=", 1) for line in spark["defaults"].splitlines()
                    if "=" in line and not line.startswith("#"))
    assert defaults["spark.ssl.enabledAlgorithms"].split(",") == list(tls_policy.JAVA_SUITES)
    monitor = monitoring_context(cluster, "mon", {}, groups)
    assert monitor["tls_cipher_suites"] == list(tls_policy.GO_SUITES)


def test_an_extra_property_cannot_weaken_the_suites() -> None:
    from kafkaform.contexts.kafka_broker import extra_properties_problems

    problems = extra_properties_problems({"ssl.cipher.suites": "TLS_RSA_WITH_AES_128_CBC_SHA"})
    assert problems and "ssl.cipher.suites" in problems[0]
