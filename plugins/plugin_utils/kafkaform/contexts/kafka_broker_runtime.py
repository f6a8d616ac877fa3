"""How a Kafka node runs, one function per concern: its files and logging, the JVM's options,
JMX (SE-05), the admin helper's client, the files it restarts for (OP-03) and its health gates
(OP-02, KR-08). :func:`kafkaform.contexts.kafka_broker.kafka_broker_context` joins them; its
server.properties comes from ``kafka_broker_properties``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..catalog import kafka_major
from ..contexts import SYSTEMD_UNIT_DIR
from ..java import UNREAD_HOME
from ..kraft_migration import NodeMode
from ..template_filters import java_properties

#: The class every Kafka node runs as: a ZooKeeper-mode broker when ``process.roles`` is unset,
#: a KRaft broker or controller as it says.
MAIN_CLASS = "kafka.Kafka"
#: Seconds one health check may wait for the cluster to become healthy (the admin helper's
#: ``health --wait``): it checks again itself, within a second, while a restarted broker comes
#: back, instead of one task per check (OP-02). A check that finds the broker's own listener
#: closed returns at once, without starting Kafka's tools.
HEALTH_WAIT_S = 30
#: How long a controller's start waits for its registration (KR-11) before the health gates judge.
REGISTRATION_WAIT_S = 60
#: Seconds between two such waiting health checks.
HEALTH_POLL_S = 2

#: The Java home of a context built without reading the host (kafkaform.java).
DEFAULT_JAVA_HOME = UNREAD_HOME


def log_configuration(release: str, conf_dir: str) -> dict[str, str]:
    """The broker's logging configuration: log4j 1.x properties read by reload4j on Kafka 3,
    log4j2 YAML on Kafka 4 (which dropped reload4j). KB-22"""
    if kafka_major(release) < 4:
        return {"template": "etc/kafka/log4j.properties.j2", "dest": f"{conf_dir}/log4j.properties",
                "option": f"-Dlog4j.configuration=file:{conf_dir}/log4j.properties"}
    return {"template": "etc/kafka/log4j2.yaml.j2", "dest": f"{conf_dir}/log4j2.yaml",
            "option": f"-Dlog4j2.configurationFile={conf_dir}/log4j2.yaml"}


@dataclass(frozen=True)
class Layout:
    """Where a Kafka node's files live, from the role's directories and release."""

    conf_dir: str
    log_dir: str
    install_dir: str
    release: str
    java_home: str
    log_config: dict[str, str]
    tls: dict[str, str]

    @property
    def jaas(self) -> str:
        """The node's JAAS file: its ZooKeeper login (SE-07)."""
        return f"{self.conf_dir}/kafka-jaas.conf"


def layout(get: Callable[[str], Any]) -> Layout:
    """The node's directories, release, logging configuration, Java home and TLS files."""
    conf_dir = str(get("conf_dir")).rstrip("/")
    log_dir = str(get("log_dir")).rstrip("/")
    install_dir = str(get("install_dir")).rstrip("/")
    release = str(get("version"))
    log_config = log_configuration(release, conf_dir)
    java_home = str(get("java_home") or DEFAULT_JAVA_HOME).rstrip("/")
    tls_dir = str(get("tls_dir")).rstrip("/")
    tls = {
        "dir": tls_dir,
        "trust": f"{tls_dir}/trust.pem",
        "keystore": f"{tls_dir}/keystore.p12",
        "secrets": f"{tls_dir}/secrets.properties",
    }
    return Layout(conf_dir, log_dir, install_dir, release, java_home, log_config, tls)


def jmx_section(get: Callable[[str], Any], conf_dir: str) -> dict[str, Any]:
    """SE-05: JMX only with a password file and TLS, configured in files, never on the command
    line (which any local user can read)."""
    return {
        "enabled": bool(get("jmx_enabled")),
        "config": f"{conf_dir}/jmx.properties",
        "password_file": f"{conf_dir}/jmx.password",
        "access_file": f"{conf_dir}/jmx.access",
        "ssl_config": f"{conf_dir}/jmx-ssl.properties",
        "properties": java_properties({
            "com.sun.management.jmxremote.port": int(get("jmx_port")),
            "com.sun.management.jmxremote.rmi.port": int(get("jmx_port")),
            "com.sun.management.jmxremote.host": str(get("jmx_address")),
            "com.sun.management.jmxremote.authenticate": "true",
            "com.sun.management.jmxremote.password.file": f"{conf_dir}/jmx.password",
            "com.sun.management.jmxremote.access.file": f"{conf_dir}/jmx.access",
            "com.sun.management.jmxremote.ssl": "true",
            "com.sun.management.jmxremote.registry.ssl": "true",
            "com.sun.management.jmxremote.ssl.config.file": f"{conf_dir}/jmx-ssl.properties",
        }),
        "user": "monitor",
    }


def admin_client_properties(cluster: Mapping[str, Any], tls: Mapping[str, str],
                            security: Mapping[str, str], migration: str) -> dict[str, str]:
    """The admin helper's client configuration: the broker's own keystore over TLS, or while a
    cluster built open is secured in place (SE-10) the bootstrap servers alone."""
    if migration:
        return {"bootstrap.servers": str(cluster["admin_bootstrap_servers"])}
    return {
        "bootstrap.servers": str(cluster["admin_bootstrap_servers"]),
        "security.protocol": "SSL",
        "config.providers": "file",
        "config.providers.file.class":
            "org.apache.kafka.common.config.provider.FileConfigProvider",
        "ssl.keystore.type": "PKCS12",
        "ssl.keystore.location": tls["keystore"],
        "ssl.keystore.password": security["ssl.keystore.password"],
        "ssl.key.password": security["ssl.key.password"],
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": tls["trust"],
    }


def jvm_options(get: Callable[[str], Any], paths: Layout, heap: int, mode: NodeMode,
                jmx_options: list[str], metrics: Mapping[str, Any]) -> list[str]:
    """The JVM's options: a fixed heap (JV-03), G1 and its log, the logging configuration, the
    ZooKeeper login, JMX and the metrics agent, then the declared extras."""
    log_dir = paths.log_dir
    return [
        f"-Xms{heap}m", f"-Xmx{heap}m",
        "-XX:+UseG1GC",
        f"-XX:MaxGCPauseMillis={int(get('gc_max_pause_ms'))}",
        f"-XX:InitiatingHeapOccupancyPercent={int(get('gc_initiating_heap_occupancy_percent'))}",
        "-XX:+DisableExplicitGC",
        "-XX:+ExitOnOutOfMemoryError",
        f"-Xlog:gc*:file={log_dir}/gc.log:time,uptime,level,tags"
        f":filecount={int(get('gc_log_file_count'))},filesize={int(get('gc_log_file_size_mb'))}M",
        "-Djava.awt.headless=true",
        f"-Dkafka.logs.dir={log_dir}",
        paths.log_config["option"],
        # SE-07: the brokers' ZooKeeper login (the Client section).
        *([f"-Djava.security.auth.login.config={paths.jaas}"] if mode.zookeeper_client else []),
        *jmx_options,
        *([metrics["option"]] if metrics["enabled"] else []),
        *[str(o) for o in get("jvm_extra_opts")],
    ]


def java_section(paths: Layout, options: list[str]) -> dict[str, Any]:
    """How the unit starts the node's JVM."""
    return {
        "binary": f"{paths.java_home}/bin/java",
        # The versioned directory, not the install_dir symlink: a broker still running the
        # old release while the roll reaches the others keeps loading its own jars.
        "classpath": f"{paths.install_dir}-{paths.release}/libs/*",
        "options": options,
        "main_class": MAIN_CLASS,
        "config": f"{paths.conf_dir}/server.properties",
    }


def restart_files(paths: Layout, jmx: Mapping[str, Any], mode: NodeMode) -> list[str]:
    """OP-03: the files the broker reads only at start; it restarts when one changed after it
    started. The TLS stores are not among them for a ZooKeeper-mode broker: the running broker
    reloads them (SE-02). A node that talks to the KRaft quorum restarts for them: its
    connection to the controllers keeps the certificate and trust it started with."""
    conf_dir, tls = paths.conf_dir, paths.tls
    return [f"{conf_dir}/server.properties", paths.log_config["dest"],
            f"{conf_dir}/release", f"{SYSTEMD_UNIT_DIR}/kafka.service",
            tls["secrets"], *([paths.jaas] if mode.zookeeper_client else []), jmx["config"],
            jmx["password_file"], jmx["access_file"], jmx["ssl_config"],
            *([tls["keystore"], tls["trust"]] if mode.knows_quorum else [])]


def health_section(cluster: Mapping[str, Any], timeout_s: int, dedicated: bool,
                   kraft: bool) -> dict[str, Any]:
    """The admin helper's arguments for the health gate of the roll, and for the check that
    ends the converge of this node's play; ``timeout_s`` is the role's restart timeout."""
    # One check never waits longer than the whole gate may.
    health_wait_s = min(HEALTH_WAIT_S, timeout_s)
    broker_ids = [int(b["id"]) for b in cluster["brokers"]]
    controllers = cluster.get("controllers", ())
    controller_ids = [int(c["node_id"]) for c in controllers] if kraft else []
    # The health gate of the roll: in KRaft mode every member of this node's kind caught up with
    # the metadata log (KR-08), and for brokers every partition fully replicated (OP-02). Where
    # brokers are controllers too (combined), the brokers' roll restarts voters: every voter
    # caught up as well.
    any_combined = any(c.get("combined") for c in controllers)
    members = controller_ids if dedicated else list(dict.fromkeys(
        broker_ids + (controller_ids if any_combined else [])))

    health_options = [*(["--max-lag", str(int(cluster["metadata_max_lag"]))] if kraft else []),
                      "--wait", str(health_wait_s)]

    def health_argv(ids: list[int]) -> list[str]:
        return ["health", "--ids", ",".join(map(str, ids)), *health_options]

    # After the converge, the nodes of this node's play: a combined voter starts in the brokers'
    # play, after the dedicated controllers'.
    play_members = [int(c["node_id"]) for c in controllers
                    if not c.get("combined")] if dedicated else members
    return {
        "health_args": health_argv(members),
        "verify_args": health_argv(play_members),
        # A day-two operation's gate names the brokers that stay (plans.broker_moves).
        "health_options": health_options,
        "health_wait_s": health_wait_s,
        "health_poll_s": HEALTH_POLL_S,
    }
