"""What every TLS port kafkaform configures offers: TLS 1.2 and 1.3, AEAD cipher suites only.

Mozilla's "intermediate" server configuration (https://wiki.mozilla.org/Security/Server_Side_TLS,
version 5.7): no CBC suite, no static RSA key exchange, forward secrecy everywhere. One list,
spelled for each runtime that reads it: Java's (Kafka, Spark; IANA names), Go's (node exporter,
Prometheus, Alertmanager; Go has no DHE suites and picks its TLS 1.3 suites itself, all AEAD)
and OpenSSL's (the scan that checks them, ``verify/test_tls.py``). SE-17
"""

from __future__ import annotations

#: Protocol versions, newest first, as Java names them.
PROTOCOLS = ("TLSv1.3", "TLSv1.2")

#: TLS 1.3's suites: all AEAD.
TLS13_SUITES = ("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
                "TLS_CHACHA20_POLY1305_SHA256")

#: TLS 1.2's AEAD suites with forward secrecy, in Mozilla's order (IANA names).
TLS12_SUITES = (
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
)

#: Java's list (ssl.cipher.suites, spark.ssl.enabledAlgorithms): it holds TLS 1.3's suites
#: too, as Java enables only the suites listed, whatever the protocol.
JAVA_SUITES = TLS13_SUITES + TLS12_SUITES

#: Go's crypto/tls (exporter-toolkit's cipher_suites): the ECDHE suites above.
GO_SUITES = tuple(suite for suite in TLS12_SUITES if suite.startswith("TLS_ECDHE_"))

#: OpenSSL's names of TLS 1.2 suites that a scan offers alone and every port must refuse: CBC
#: with and without SHA-2, and static RSA key exchange.
REFUSED_OPENSSL_SUITES = (
    "ECDHE-ECDSA-AES128-SHA256", "ECDHE-RSA-AES128-SHA256", "ECDHE-ECDSA-AES256-SHA384",
    "ECDHE-RSA-AES256-SHA384", "ECDHE-ECDSA-AES128-SHA", "ECDHE-RSA-AES128-SHA",
    "ECDHE-ECDSA-AES256-SHA", "ECDHE-RSA-AES256-SHA", "DHE-RSA-AES128-SHA256",
    "AES128-GCM-SHA256", "AES256-GCM-SHA384", "AES128-SHA256", "AES128-SHA",
)

#: OpenSSL's names of the TLS 1.2 suites every port must accept (one is enough).
ACCEPTED_OPENSSL_SUITES = (
    "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256",
    "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384",
    "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
)
