"""The ports a host binds: a broker's listeners, and every service's on a shared host."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from .. import model
from ..contexts import spark_node
from ..defaults import setting
from ..model import InventoryView, as_int
from ..rules import cite
from .finding import Finding
from .variables import host_inputs


def listener_ports(view: InventoryView) -> Iterator[Finding]:
    """Each listener of a broker binds a port of its own: the broker, client, extra and (while
    securing in place) plaintext listeners, from the model that renders them, and on a broker
    that is also a controller (combined mode) the controller's listener."""
    combined = {c.host: c for c in model.controllers(view) if c.combined}
    for broker in model.brokers(view):
        clashes = broker.port_clashes(*([(model.CONTROLLER_LISTENER, combined[broker.host].port)]
                                        if broker.host in combined else []))
        if clashes:
            yield Finding(cite("KF-02"), "listeners share a port: " + "; ".join(clashes),
                          "give each its own port (kafka_broker_port, kafka_broker_internal_port, "
                          "kafka_broker_extra_listeners, kafka_broker_metrics_port, "
                          "kafka_controller_port, kafka_plaintext_port: while securing in "
                          "place, move kafka_broker_port, e.g. to 9093)", (broker.host,))


def _bound_ports(view: InventoryView, host: str,
                 broker: model.Broker | None) -> Iterator[tuple[str, str, Any]]:
    """``(service, setting, port)`` for each port the roles make ``host``'s services bind."""
    def get(role: str, name: str) -> Any:
        return setting(host_inputs(view, role, host), name)

    if host in view.members(model.ZOOKEEPER):
        for name in ("zookeeper_client_port", "zookeeper_secure_client_port",
                     "zookeeper_quorum_port", "zookeeper_election_port"):
            yield "ZooKeeper", name, get("zookeeper", name)
        if get("zookeeper", "zookeeper_admin_server_enabled"):
            yield "ZooKeeper", "zookeeper_admin_server_port", get(
                "zookeeper", "zookeeper_admin_server_port")
    if broker is not None:
        for listener in broker.listeners:
            yield "Kafka", f"the {listener.name} listener", listener.port
        if get("kafka_broker", "kafka_broker_jmx_enabled"):
            yield "Kafka", "kafka_broker_jmx_port", get("kafka_broker", "kafka_broker_jmx_port")
    daemons = []
    if host in view.members(model.SPARK_MASTER):
        daemons += [("Spark master", "spark_node_master_port", False),
                    ("Spark master", "spark_node_master_webui_port", True)]
        if get("spark_node", "spark_node_history_server_enabled"):
            daemons.append(("Spark history server", "spark_node_history_server_port", True))
    if host in view.members(model.SPARK_WORKER):
        daemons += [("Spark worker", "spark_node_worker_port", False),
                    ("Spark worker", "spark_node_worker_webui_port", True)]
    for service, name, web in daemons:
        port = get("spark_node", name)
        if name == "spark_node_worker_port" and as_int(port) == 0:
            continue  # 0: the worker takes a free port when it starts
        yield service, name, port
        if web and as_int(port) is not None:  # the UI's TLS port beside its plain redirect
            yield service, f"{name} + {spark_node.TLS_UI_PORT_OFFSET} (TLS)", (
                int(port) + spark_node.TLS_UI_PORT_OFFSET)


def host_ports(view: InventoryView) -> Iterator[Finding]:
    """Every port a host's services bind is a port, and no two services bind the same one.
    Clashes among one broker's own listeners are listener_ports'."""
    brokers = {broker.host: broker for broker in model.brokers(view)}
    for host in view.cluster_hosts():
        holders: dict[int, list[tuple[str, str]]] = defaultdict(list)
        for service, name, raw in _bound_ports(view, host, brokers.get(host)):
            port = as_int(raw)
            if port is None or not 0 < port < 65536:
                yield Finding(cite("KF-04"), f"{service}'s {name} is {raw!r}, not a port",
                              f"set {name} to a number from 1 to 65535", (host,))
            else:
                holders[port].append((service, name))
        for port, named in sorted(holders.items()):
            if len(named) > 1 and {service for service, _setting in named} != {"Kafka"}:
                users = ", ".join(f"{service} ({name})" for service, name in named)
                yield Finding(cite("KF-04"), f"port {port} is bound by {users}",
                              "give each its own port", (host,))
