"""Every TLS port the platform serves, scanned from a host of the cluster (SE-17).

    kafkaform verify -i inventory/lab --checks tls

The ports come from the model and the roles' contexts: each broker's and controller's TLS
listeners, each ZooKeeper member's secure client and election ports, the Spark web UIs (master,
workers, history server) and, with a monitoring group, node exporter on every host and Prometheus
and Alertmanager. One visited host scans them all at
their cluster addresses, as any client on the network would, with Python's ssl module (OpenSSL)
and a throwaway self-signed client certificate, so a port that requires one shows how far the
handshake got: a port refusing the offered suites or version ends it with handshake_failure or
protocol_version before any certificate is sent, one that agreed on them rejects the unknown
certificate (bad_certificate, certificate_unknown) afterwards. For each port:
- TLS 1.2 offering only AEAD suites with forward secrecy: agreed;
- TLS 1.2 offering only CBC suites or static RSA key exchange: refused;
- TLS 1.1 and older: refused;
- TLS 1.3: agreed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from kafkaform import tls_policy
from kafkaform.contexts.monitoring import monitoring_context, node_targets
from kafkaform.contexts.spark_node import spark_node_context
from kafkaform.model import MONITORING
from kafkaform.verify.conftest import Inventory, Node, Nodes

#: Run on the scanning host: one line of JSON per port and offer. Alerts that come after the
#: suite and the version were agreed on (the client certificate's), and those that refuse them.
SCAN = r"""
import json, os, socket, ssl, subprocess, sys, tempfile, warnings
warnings.simplefilter("ignore", DeprecationWarning)  # ssl.TLSVersion.TLSv1_1: on purpose
targets, accepted, refused = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
work = tempfile.mkdtemp()
cert, key = os.path.join(work, "cert.pem"), os.path.join(work, "key.pem")
subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=kafkaform-tls-scan",
                "-days", "1", "-keyout", key, "-out", cert], check=True, capture_output=True)
OFFERS = {"aead": (accepted, ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_2),
          "weak": (refused, ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_2),
          "old": ("ALL", ssl.TLSVersion.MINIMUM_SUPPORTED, ssl.TLSVersion.TLSv1_1),
          "tls13": ("ALL", ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_3)}
def attempt(address, port, ciphers, low, high):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.minimum_version, context.maximum_version = low, high
    context.set_ciphers(ciphers + ":@SECLEVEL=0")
    context.load_cert_chain(cert, key)
    try:
        with socket.create_connection((address, port), timeout=10) as raw:
            with context.wrap_socket(raw, server_hostname=address) as tls:
                return {"outcome": "agreed", "version": tls.version(), "suite": tls.cipher()[0]}
    except ssl.SSLError as error:
        return {"outcome": "alert", "reason": error.reason or str(error)}
    except OSError as error:
        return {"outcome": "unreachable", "reason": str(error)}
for name, address, port in targets:
    for offer, (ciphers, low, high) in OFFERS.items():
        print(json.dumps({"name": name, "address": address, "port": port, "offer": offer,
                          **attempt(address, port, ciphers, low, high)}))
"""

#: Alerts sent once the suite and the version are agreed on: the self-signed certificate is
#: refused (Java: certificate_unknown; Go: bad_certificate; TLS 1.3: certificate_required).
AFTER_AGREEMENT = ("CERTIFICATE_UNKNOWN", "BAD_CERTIFICATE", "UNKNOWN_CA",
                   "CERTIFICATE_REQUIRED")
#: Alerts that refuse the offer itself.
REFUSALS = ("HANDSHAKE_FAILURE", "PROTOCOL_VERSION", "NO_SHARED_CIPHER", "INSUFFICIENT_SECURITY",
            "UNSUPPORTED_PROTOCOL", "NO_PROTOCOLS_AVAILABLE", "NO_CIPHERS_AVAILABLE")


def agreed(result: Mapping[str, Any]) -> bool:
    return result["outcome"] == "agreed" or (
        result["outcome"] == "alert" and any(a in result["reason"] for a in AFTER_AGREEMENT))


def refused(result: Mapping[str, Any]) -> bool:
    return result["outcome"] == "alert" and any(a in result["reason"] for a in REFUSALS)


def tls_ports(inventory: Inventory) -> list[tuple[str, str, int]]:
    """(what, address, port) of every TLS port the platform serves, from the model."""
    cluster = inventory.cluster
    found: list[tuple[str, str, int]] = []
    for broker in cluster["brokers"]:
        found += [(f"{broker['host']} Kafka {lst['name']}", lst["address"], int(lst["port"]))
                  for lst in broker["listeners"] if lst["protocol"] in ("SSL", "SASL_SSL")]
    # A cluster whose move to KRaft is finalized uses no ensemble (it may be decommissioned).
    # A member's quorum port listens on the leader only: its election port is scanned.
    ensemble = [] if cluster.get("kraft_migration") == "finalized" else cluster["ensemble"]
    for member in ensemble:
        found += [(f"{member['host']} ZooKeeper secure client", member["address"],
                   int(member["secure_client_port"])),
                  (f"{member['host']} ZooKeeper election", member["address"],
                   int(member["election_port"]))]
    for controller in cluster["controllers"]:
        if not controller["combined"]:  # a combined node's CONTROLLER port is a broker's too
            found.append((f"{controller['host']} Kafka CONTROLLER", controller["address"],
                          int(controller["port"])))
    for entry in cluster["spark_masters"] + cluster["spark_workers"]:
        resources = {"cores": 1, "memory_mb": 1024}  # the UIs' ports do not depend on them
        name = str(entry["host"])
        context = spark_node_context(cluster, name, inventory.hostvars.get(name, {}), resources)
        for url in context["ui_urls"]:
            address, port = url.removeprefix("https://").rsplit(":", 1)
            found.append((f"{name} Spark UI", address, int(port)))
    if inventory.view.members(MONITORING):
        groups = inventory.view.groups
        for target in node_targets(cluster):
            context = monitoring_context(cluster, target["host"],
                                         inventory.hostvars.get(target["host"], {}), groups)
            found.append((f"{target['host']} node exporter", context["address"],
                          int(context["node_exporter_port"])))
        for host in inventory.view.members(MONITORING):
            context = monitoring_context(cluster, host, inventory.hostvars.get(host, {}), groups)
            found += [(f"{host} Prometheus", context["address"], int(context["prometheus_port"])),
                      (f"{host} Alertmanager", context["address"],
                       int(context["alertmanager_port"]))]
    return sorted(set(found))


@pytest.fixture(scope="module")
def scanner(nodes: Nodes) -> Node:
    for key in ("brokers", "ensemble", "spark_masters", "spark_workers", "controllers"):
        reached = nodes.reach(key)
        if reached:
            return reached[0]
    pytest.skip("no host of the cluster visited to scan from")


def test_every_tls_port_offers_tls12_and_up_with_aead_suites_only(
        scanner: Node, inventory: Inventory) -> None:
    targets = tls_ports(inventory)
    assert targets, "the model names no TLS port"
    argv = [json.dumps(targets), ":".join(tls_policy.ACCEPTED_OPENSSL_SUITES),
            ":".join(tls_policy.REFUSED_OPENSSL_SUITES)]
    out = scanner.host.check_output("python3 -c %s %s %s %s", SCAN, *argv)  # quoted by testinfra
    results = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert len(results) == 4 * len(targets), out
    problems = []
    for result in results:
        where = f"{result['name']} ({result['address']}:{result['port']})"
        seen = result.get("suite") or result.get("reason")
        if result["outcome"] == "unreachable":
            problems.append(f"{where}: not reachable from {scanner.name}: {result['reason']}")
        elif result["offer"] in ("aead", "tls13") and not agreed(result):
            problems.append(f"{where}: refuses {result['offer']} ({seen})")
        elif result["offer"] in ("weak", "old") and not refused(result):
            problems.append(f"{where}: accepts {result['offer']} ({seen})")
    assert not problems, (f"SE-17, scanned from {scanner.name}:\n"
                          + "\n".join(problems))
