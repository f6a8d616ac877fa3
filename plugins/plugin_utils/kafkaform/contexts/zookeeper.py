"""The per-host input of the ZooKeeper templates, computed from the model and the role's settings.

The Ansible role (through ``plugins/filter/zookeeper.py``), pyinfra and the unit tests hand
:func:`zookeeper_context` the cluster model (``Cluster.to_dict()``), a host and the role's variables
(``zookeeper_*`` names, role defaults filling the gaps) and give its result to every template under
the name ``zookeeper``. Templates hold no logic: paths, JVM options and zoo.cfg lines are all here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..contexts import SYSTEMD_UNIT_DIR, service_directories
from ..contexts.extras import one_line_settings
from ..contexts.metrics import jmx_agent
from ..contexts.sandbox import sandbox
from ..defaults import setting
from ..java import UNREAD_HOME
from ..model import ZOOKEEPER_TXN_LOG
from ..rules import cite
from ..security_steps import clients_use_tls
from ..template_filters import java_properties
from ..tls_policy import JAVA_SUITES, PROTOCOLS

#: Four-letter words monitoring needs; nothing else may be whitelisted. ZK-13
FOUR_LETTER_WORDS = ("srvr", "mntr", "ruok", "conf", "isro")

#: Seconds between two quorum checks while a restarted member comes back (ZK-15).
HEALTH_POLL_S = 2

#: How snapshots and transaction logs are purged. ZK-08
PURGE_METHODS = ("timer", "autopurge")

#: PurgeTxnLog and autopurge refuse to keep fewer snapshots. ZK-08
MIN_SNAP_RETAIN_COUNT = 3

#: zoo.cfg keys of SASL authentication, which the role sets from zookeeper_sasl_enforced.
#: SE-07, SE-08
SASL_KEYS = frozenset({
    "authProvider.sasl", "enforce.auth.enabled", "enforce.auth.schemes",
    "quorum.auth.enableSasl", "quorum.auth.learnerRequireSasl", "quorum.auth.serverRequireSasl",
    "quorum.auth.learner.saslLoginContext", "quorum.auth.server.saslLoginContext",
})

#: The one SASL key zookeeper_extra_settings may set, and only while zookeeper_sasl_enforced is
#: false: the middle step of securing an open ensemble in place (see the role defaults). Members
#: only log in as learners when they require it, so a member requiring learners to log in refuses
#: the others until every member does. SE-08
LEARNER_REQUIRE_SASL = "quorum.auth.learnerRequireSasl"

#: zoo.cfg keys of TLS, which the role sets from the ensemble's TLS step (SE-18); the ``ssl.``
#: prefix covers the client port's and the quorum's stores, protocols and suites.
TLS_KEYS = frozenset({
    "secureClientPort", "secureClientPortAddress", "clientPortAddress", "serverCnxnFactory",
    "sslQuorum", "portUnification", "sslQuorumReloadCertFiles", "client.portUnification",
})

#: zoo.cfg keys the role renders itself: the extra settings may not override them.
MANAGED_KEYS = frozenset({
    "tickTime", "initLimit", "syncLimit", "clientPort", "dataDir", "dataLogDir",
    "4lw.commands.whitelist", "admin.enableServer", "admin.serverAddress", "admin.serverPort",
    "autopurge.snapRetainCount", "autopurge.purgeInterval", "standaloneEnabled",
    "dynamicConfigFile",
}) | SASL_KEYS | TLS_KEYS
_MANAGED_PREFIXES = ("server.", "group.", "weight.", "ssl.")

#: The netty connection factory: the only one that serves the secure client port. SE-18
NETTY_SERVER_FACTORY = "org.apache.zookeeper.server.NettyServerCnxnFactory"
_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9._-]*$")

#: The class ZooKeeper runs as and the class that purges its files.
MAIN_CLASS = "org.apache.zookeeper.server.quorum.QuorumPeerMain"

#: ZooKeeper 3.9 runs in FIPS mode unless told otherwise (the system property zookeeper.fips-mode,
#: zookeeperAdmin.html), and in that mode it refuses DIGEST-MD5, the SASL mechanism members and
#: clients log in with here (ZOOKEEPER-5043), so a 3.9 member could join no quorum. The logins
#: travel inside mutual TLS. 3.8 has the property and its default is already false. SE-07, SE-08
SASL_DIGEST_OPTIONS = ("-Dzookeeper.fips-mode=false",)
PURGE_CLASS = "org.apache.zookeeper.server.PurgeTxnLog"

#: The JAAS login sections: the server's (clients log in to it), the members' as quorum servers
#: and as learners, and a client's. SE-07, SE-08
SERVER_LOGIN_CONTEXT = "Server"
QUORUM_SERVER_LOGIN_CONTEXT = "QuorumServer"
QUORUM_LEARNER_LOGIN_CONTEXT = "QuorumLearner"
CLIENT_LOGIN_CONTEXT = "Client"

#: The SASL DIGEST-MD5 users: the one Kafka's brokers (and the operators' client configuration)
#: log in as, and the one members log in to each other as. Their passwords are the secrets
#: zookeeper-kafka and zookeeper-quorum (kafkaform.secrets), never part of the context. SE-06
KAFKA_USER = "kafka"
QUORUM_USER = "quorum"

#: The Java home of a context built without reading the host (kafkaform.java).
DEFAULT_JAVA_HOME = UNREAD_HOME


def settings_problems(settings: Mapping[str, Any]) -> list[str]:
    """Every problem of the role's settings, as sentences (empty when they are valid)."""
    extra, problems = one_line_settings("zookeeper_extra_settings",
                                        setting(settings, "zookeeper_extra_settings"), _KEY,
                                        "zoo.cfg key")
    for key in extra:
        if key == LEARNER_REQUIRE_SASL:
            continue  # checked below, against zookeeper_sasl_enforced
        if key in MANAGED_KEYS or key.startswith(_MANAGED_PREFIXES):
            problems.append(f"zookeeper_extra_settings: {key} is set by the role through its own "
                            "variable (see roles/zookeeper/defaults/main.yml)")
    words = setting(settings, "zookeeper_four_letter_words")
    unknown = [w for w in words if w not in FOUR_LETTER_WORDS]
    if unknown or not words:
        problems.append(f"zookeeper_four_letter_words: {', '.join(unknown) or 'empty'}; allowed: "
                        f"{', '.join(FOUR_LETTER_WORDS)} (monitoring needs nothing else, "
                        f"{cite('ZK-13')})")
    enforced = bool(setting(settings, "zookeeper_sasl_enforced"))
    learner = extra.get(LEARNER_REQUIRE_SASL)
    if learner is not None and (enforced or str(learner).lower() not in ("true", "false")):
        problems.append(f"zookeeper_extra_settings: {LEARNER_REQUIRE_SASL} may only be set, to "
                        "true or false, while zookeeper_sasl_enforced is false: the middle step "
                        f"of securing an open ensemble ({cite('SE-08')})")
    if "srvr" not in words:
        problems.append("zookeeper_four_letter_words must keep srvr: health checks use it "
                        f"({cite('ZK-13')})")
    if "snapCount" in extra and int(setting(settings, "zookeeper_snap_count")):
        problems.append("zookeeper_extra_settings: snapCount is set by zookeeper_snap_count too; "
                        "keep one")
    if int(setting(settings, "zookeeper_snap_count")) < 0:
        problems.append("zookeeper_snap_count may not be negative (0 keeps ZooKeeper's own)")
    retain = int(setting(settings, "zookeeper_purge_snap_retain_count"))
    if retain < MIN_SNAP_RETAIN_COUNT:
        problems.append(f"zookeeper_purge_snap_retain_count is {retain}; ZooKeeper keeps at least "
                        f"{MIN_SNAP_RETAIN_COUNT} snapshots ({cite('ZK-08')})")
    method = setting(settings, "zookeeper_purge_method")
    if method not in PURGE_METHODS:
        problems.append(f"zookeeper_purge_method is {method!r}; "
                        f"choose {' or '.join(PURGE_METHODS)}")
    if int(setting(settings, "zookeeper_heap_mb")) < 64:
        problems.append("zookeeper_heap_mb below 64 MB cannot run ZooKeeper "
                        f"(production: 3-5 GB, {cite('ZK-10')})")
    return problems


def tls_files(conf_dir: str) -> dict[str, str]:
    """Where a member keeps its TLS material (SE-18): the cluster CA, its keystore and the
    keystore's password (for ZooKeeper), its certificate and key in PEM (for the probe)."""
    tls_dir = f"{conf_dir}/tls"
    return {"dir": tls_dir, "trust": f"{tls_dir}/trust.pem", "keystore": f"{tls_dir}/keystore.p12",
            "password_file": f"{tls_dir}/keystore.password", "cert": f"{tls_dir}/cert.pem",
            "key": f"{tls_dir}/key.pem"}


def tls_settings(tls: Mapping[str, str], step: str, address: str,
                 secure_port: int) -> dict[str, str]:
    """zoo.cfg lines of SE-18 at the ensemble's TLS ``step`` (kafkaform.security_steps): the
    secure client port on the member's cluster address, mutual TLS on it and on the quorum,
    TLS 1.2+ with AEAD suites (SE-17); the quorum accepts plaintext too until ``required``."""
    stores = {
        "keyStore.location": tls["keystore"], "keyStore.type": "PKCS12",
        "keyStore.passwordPath": tls["password_file"],
        "trustStore.location": tls["trust"], "trustStore.type": "PEM",
        "clientAuth": "need", "protocol": PROTOCOLS[0],
        "enabledProtocols": ",".join(PROTOCOLS), "ciphersuites": ",".join(JAVA_SUITES),
    }
    return {
        "serverCnxnFactory": NETTY_SERVER_FACTORY,
        "secureClientPort": str(secure_port),
        "secureClientPortAddress": address,
        **{f"ssl.{key}": value for key, value in stores.items()},
        **{f"ssl.quorum.{key}": value for key, value in stores.items()},
        # Members verify each other's names and addresses against their certificates.
        "ssl.quorum.hostnameVerification": "true",
        # Each member reloads its keystore and trust bundle when either file changes, for the
        # quorum and for clients (ZooKeeper 3.8.1 and later): a renewal or a CA rotation
        # restarts no member (SE-18).
        "sslQuorumReloadCertFiles": "true",
        "client.certReload": "true",
        "sslQuorum": "true" if clients_use_tls(step) else "false",
        "portUnification": "false" if step == "required" else "true",
    }


def data_log_dir(cluster: Mapping[str, Any], host: str) -> str:
    """The mount of the host's ``zookeeper_txn_log`` disk (ZK-09), or "" when none is declared."""
    for disk in cluster.get("data_disks", {}).get(host, ()):
        if disk["purpose"] == ZOOKEEPER_TXN_LOG:
            return str(disk["mount"]).rstrip("/") or "/"
    return ""


def _section(comment: str, lines: list[str]) -> str:
    """One commented section of zoo.cfg: its comment (each line prefixed), then its lines."""
    return "\n".join([*(f"# {line}" for line in comment.split("\n")), *lines])


def _optional(key: str, value: Any) -> list[str]:
    """``key=value`` when the role sets it, nothing when ZooKeeper's own default stands (0)."""
    return [f"{key}={value}"] if value else []


def _ensemble_section(zk: Mapping[str, Any], get: Callable[[str], Any]) -> str:
    """Ports, timing, directories and the server lines: the same on every member. ZK-02, ZK-04,
    ZK-09, ZK-13"""
    admin = zk["admin_server"]
    lines = [
        f"tickTime={zk['tick_time_ms']}",
        f"initLimit={zk['init_limit_ticks']}",
        f"syncLimit={zk['sync_limit_ticks']}",
        f"clientPort={zk['client_port']}",
        *_optional("clientPortAddress", zk["client_port_address"]),
        f"dataDir={zk['data_dir']}",
        *_optional("dataLogDir", zk["data_log_dir"]),
        *_optional("snapCount", int(get("snap_count"))),
        *zk["servers"],
        "standaloneEnabled=false",
        f"4lw.commands.whitelist={zk['four_letter_words']}",
        f"admin.enableServer={'true' if admin['enabled'] else 'false'}",
        f"admin.serverAddress={admin['address']}",
        f"admin.serverPort={admin['port']}",
    ]
    return _section(f"Member {zk['id']} of the ensemble below; every member has the same server "
                    "lines. ZK-02, ZK-04", lines)


def _sasl_sections(sasl: Mapping[str, Any]) -> list[str]:
    """Clients' and members' SASL logins. SE-07, SE-08"""

    def flag(on: bool) -> str:
        return "true" if on else "false"

    return [
        _section("Clients log in with SASL DIGEST-MD5 (section Server of jaas.conf). When "
                 "enforced, a session that\nhas not logged in is closed at its first request; "
                 "four-letter words still answer. SE-07", [
                     "authProvider.sasl="
                     "org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
                     f"enforce.auth.enabled={flag(sasl['enforced'])}",
                     "enforce.auth.schemes=sasl"]),
        _section("Members log in to each other with SASL DIGEST-MD5 (sections QuorumServer and "
                 "QuorumLearner). SE-08", [
                     "quorum.auth.enableSasl=true",
                     f"quorum.auth.learnerRequireSasl={flag(sasl['quorum_learner_requires'])}",
                     f"quorum.auth.serverRequireSasl={flag(sasl['quorum_server_requires'])}",
                     "quorum.auth.learner.saslLoginContext="
                     f"{sasl['quorum_learner_login_context']}",
                     "quorum.auth.server.saslLoginContext="
                     f"{sasl['quorum_server_login_context']}"]),
    ]


def _tls_section(zk: Mapping[str, Any]) -> str:
    """Mutual TLS on the secure client port and between members. SE-17, SE-18"""
    return _section(f"TLS (step {zk['tls_step']}): mutual TLS with the cluster CA on the secure "
                    "client port and\nbetween members, TLS 1.2+ with AEAD suites; the keystore's "
                    "password is read from its file. SE-17, SE-18",
                    zk["tls"]["settings"].split("\n"))


def _purge_section(zk: Mapping[str, Any]) -> str:
    """ZooKeeper's own purge of old snapshots and transaction logs. ZK-08"""
    purge = zk["autopurge"]
    return _section("Built-in purge: an interval of 0 hours means off (the kafkaform purge timer "
                    "runs instead). ZK-08", [
                        f"autopurge.snapRetainCount={purge['snap_retain_count']}",
                        f"autopurge.purgeInterval={purge['purge_interval_hours']}"])


def zoo_cfg(zk: Mapping[str, Any], get: Callable[[str], Any]) -> str:
    """zoo.cfg after its first line, section by section, from a member's context and the role's
    settings (``get`` reads ``zookeeper_<name>``); no trailing newline."""
    sections = [_ensemble_section(zk, get), *_sasl_sections(zk["sasl"]), _tls_section(zk),
                _purge_section(zk)]
    if zk["extra_settings"]:
        sections.append(_section("zookeeper_extra_settings", zk["extra_settings"].split("\n")))
    return "\n".join(sections)


@dataclass(frozen=True)
class _Member:
    """One member's settings resolved once: what the section builders below share, so each
    reads only its concern's part."""

    host: str
    get: Callable[[str], Any]
    model: Mapping[str, Any]  # the member's entry in the model
    data_dir: str
    log_dir: str
    conf_dir: str
    install_dir: str
    txn_dir: str
    address: str
    jaas_file: str
    classpath: str
    java: str  # the java binary


def _member(cluster: Mapping[str, Any], host: str, settings: Mapping[str, Any],
            model: Mapping[str, Any]) -> _Member:
    """The member's settings, a missing one taking the role default, its paths without a
    trailing slash."""

    def get(name: str) -> Any:
        return setting(settings, f"zookeeper_{name}")

    def path(name: str) -> str:
        return str(get(name)).rstrip("/")

    conf_dir = path("conf_dir")
    install_dir = path("install_dir")
    java_home = str(get("java_home") or DEFAULT_JAVA_HOME).rstrip("/")
    return _Member(host=host, get=get, model=model, data_dir=path("data_dir"),
                   log_dir=path("log_dir"), conf_dir=conf_dir, install_dir=install_dir,
                   txn_dir=data_log_dir(cluster, host), address=str(model["address"]),
                   jaas_file=f"{conf_dir}/jaas.conf",
                   # The versioned directory, not the install_dir symlink: a member still
                   # running the old release while the roll reaches the others keeps loading
                   # its own jars (the artifact role names the directory so, ZK-01).
                   classpath=f"{install_dir}-{get('version')}/lib/*:{conf_dir}",
                   java=f"{java_home}/bin/java")


def _sasl_requirements(cluster: Mapping[str, Any], get: Callable[[str], Any],
                       extra: dict[str, Any]) -> tuple[bool, bool]:
    """Whether SASL is enforced, and whether members require learners to log in; takes
    :data:`LEARNER_REQUIRE_SASL` out of ``extra``, the role renders it itself. While a cluster
    built open is secured in place (SE-10), its step decides: nothing required at
    plaintext_replication, members' logins at tls_replication, everything once it is unset."""
    migration = str(cluster.get("security_migration") or "")
    enforced = bool(get("sasl_enforced")) and not migration
    learner_requires = enforced or migration == "tls_replication" \
        or str(extra.pop(LEARNER_REQUIRE_SASL, "false")).lower() == "true"
    return enforced, learner_requires


def _security_step(enforced: bool, learner_requires: bool) -> str:
    """SE-10: the step of securing in place this run builds (the security gate reads it)."""
    if enforced:
        return "secured"
    return "tls_replication" if learner_requires else "plaintext_replication"


def _restart_files(member: _Member, tls: Mapping[str, str]) -> list[str]:
    """OP-03: the files the member reads only at start; it restarts when one changed after it
    started. Not the keystore and the trust bundle: zoo.cfg has the member reload them when they
    change (tls_settings), and a member started before zoo.cfg said so restarts for zoo.cfg."""
    conf_dir = member.conf_dir
    return [f"{member.data_dir}/myid", f"{conf_dir}/zoo.cfg", member.jaas_file,
            f"{conf_dir}/logback.xml", f"{conf_dir}/release", tls["password_file"],
            f"{SYSTEMD_UNIT_DIR}/zookeeper.service"]


def _client_ports(cluster: Mapping[str, Any], member: _Member, tls: Mapping[str, str],
                  tls_step: str) -> dict[str, Any]:
    """Where clients and the probes reach the member, and the ensemble's server lines."""
    # Where the probes ask each member: where brokers reach it (the model decides).
    endpoints = {str(h): str(e) for h, e in cluster["zookeeper_endpoints"].items()}
    return {
        "client_port": int(member.model["client_port"]),
        "servers": list(cluster["zookeeper_servers"]),
        "address": member.address,
        "secure_client_port": int(member.model["secure_client_port"]),
        # The plain client port stays for the member's own probe and tools; once the ensemble
        # requires TLS it listens on loopback only. SE-18, ZK-13
        "client_port_address": "127.0.0.1" if tls_step == "required" else "",
        # Where the probes (files/zookeeper-4lw) ask each member, and their options.
        "client_addresses": list(endpoints.values()),
        "client_address_by_host": endpoints,
        "probe_options": ["--tls", tls["dir"]] if cluster["zookeeper_over_tls"] else [],
    }


def _ensemble(member: _Member) -> dict[str, Any]:
    """Timing, directories, the four-letter words and the admin server. ZK-02, ZK-09, ZK-13"""
    get = member.get
    return {
        "tick_time_ms": int(get("tick_time_ms")),
        "init_limit_ticks": int(get("init_limit_ticks")),
        "sync_limit_ticks": int(get("sync_limit_ticks")),
        "data_dir": member.data_dir,
        "data_log_dir": member.txn_dir,
        "conf_dir": member.conf_dir,
        "log_dir": member.log_dir,
        "install_dir": member.install_dir,
        "four_letter_words": ",".join(get("four_letter_words")),
        "admin_server": {
            "enabled": bool(get("admin_server_enabled")),
            "address": "127.0.0.1",
            "port": int(get("admin_server_port")),
        },
    }


def _purge(member: _Member) -> dict[str, Any]:
    """Old snapshots and transaction logs purged by ZooKeeper itself or by the kafkaform timer,
    one of the two. ZK-08"""
    get = member.get
    retain = int(get("purge_snap_retain_count"))
    autopurge = get("purge_method") == "autopurge"
    return {
        "autopurge": {
            "snap_retain_count": retain,
            "purge_interval_hours": int(get("purge_interval_hours")) if autopurge else 0,
        },
        "purge_timer": {
            "enabled": not autopurge,
            "on_calendar": str(get("purge_on_calendar")),
            "command": [member.java, "-Xmx64m", "-cp", member.classpath, PURGE_CLASS,
                        member.txn_dir or member.data_dir, member.data_dir, "-n", str(retain)],
        },
    }


def _tls(member: _Member, tls: Mapping[str, str], tls_step: str) -> dict[str, Any]:
    """The member's TLS material, the names its certificate holds and its zoo.cfg lines. SE-18"""
    return {
        **tls,
        "ou": "zookeeper",
        "names": sorted({member.host, member.address}),
        "settings": java_properties(tls_settings(tls, tls_step, member.address,
                                                 int(member.model["secure_client_port"]))),
    }


def _sasl(member: _Member, enforced: bool, learner_requires: bool) -> dict[str, Any]:
    """Enforced: anonymous sessions are closed (SE-07), members require each other's login both
    ways (SE-08). Not enforced: the provider and the members' SASL are on, nothing is required
    yet (the first step of securing an open ensemble in place)."""
    return {
        "enforced": enforced,
        "quorum_learner_requires": learner_requires,
        "quorum_server_requires": enforced,
        "jaas_file": member.jaas_file,
        "client_jaas_file": f"{member.conf_dir}/client-jaas.conf",
        "server_login_context": SERVER_LOGIN_CONTEXT,
        "quorum_server_login_context": QUORUM_SERVER_LOGIN_CONTEXT,
        "quorum_learner_login_context": QUORUM_LEARNER_LOGIN_CONTEXT,
        "client_login_context": CLIENT_LOGIN_CONTEXT,
        # What a JVM of this release (the member, ZooKeeperMain) needs to log in. SE-07
        "jvm_options": list(SASL_DIGEST_OPTIONS),
        "kafka_user": KAFKA_USER,
        "quorum_user": QUORUM_USER,
    }


def _java(member: _Member, metrics: Mapping[str, Any]) -> dict[str, Any]:
    """How the member's JVM starts: heap, G1 and its log, logback, JAAS, the metrics agent.
    ZK-10"""
    get = member.get
    heap = int(get("heap_mb"))
    return {
        "binary": member.java,
        "classpath": member.classpath,
        "options": [
            f"-Xms{heap}m", f"-Xmx{heap}m",
            "-XX:+UseG1GC", f"-XX:MaxGCPauseMillis={int(get('gc_max_pause_ms'))}",
            "-XX:+ExitOnOutOfMemoryError",
            f"-Xlog:gc*:file={member.log_dir}/gc.log:time,uptime,level,tags"
            f":filecount={int(get('gc_log_file_count'))}"
            f",filesize={int(get('gc_log_file_size_mb'))}M",
            "-Djava.awt.headless=true",
            f"-Dlogback.configurationFile={member.conf_dir}/logback.xml",
            f"-Djava.security.auth.login.config={member.jaas_file}",
            *SASL_DIGEST_OPTIONS,
            *([metrics["option"]] if metrics["enabled"] else []),
            *[str(o) for o in get("jvm_extra_opts")],
        ],
        "main_class": MAIN_CLASS,
        "config": f"{member.conf_dir}/zoo.cfg",
    }


def zookeeper_context(cluster: Mapping[str, Any], host: str,
                      settings: Mapping[str, Any]) -> dict[str, Any]:
    """The ``zookeeper`` dict the templates of ``roles/zookeeper/templates/`` read, for one member.

    + cluster: ``kafkaform.model.build(view).to_dict()``
    + host: the member's inventory name
    + settings: the role's variables by full name; a missing one takes the role default

    Raises ``ValueError`` on settings :func:`settings_problems` rejects or a host outside the
    ensemble: the role asserts both before it renders anything.
    """
    problems = settings_problems(settings)
    if problems:
        raise ValueError("; ".join(problems))
    model = cluster["ensemble_by_host"].get(host)
    if model is None:
        raise ValueError(f"{host} is not a member of the ZooKeeper ensemble (no zookeeper_id?)")
    member = _member(cluster, host, settings, model)
    get = member.get
    extra = {str(k): v for k, v in get("extra_settings").items()}
    enforced, learner_requires = _sasl_requirements(cluster, get, extra)
    metrics = jmx_agent(get, settings, member.address, member.conf_dir)
    read_write = [member.data_dir] + ([member.txn_dir] if member.txn_dir else []) \
        + [member.log_dir]
    tls = tls_files(member.conf_dir)
    tls_step = str(cluster.get("zookeeper_tls_step") or "required")
    zk = {
        "host": host,
        "health_poll_s": HEALTH_POLL_S,
        "restart_files": _restart_files(member, tls),
        "id": int(model["id"]),
        "user": str(get("user")),
        "group": str(get("group")),
        **_client_ports(cluster, member, tls, tls_step),
        **_ensemble(member),
        **_purge(member),
        "security_step": _security_step(enforced, learner_requires),
        "tls_step": tls_step,
        "tls": _tls(member, tls, tls_step),
        "sasl": _sasl(member, enforced, learner_requires),
        "extra_settings": java_properties(extra),
        "metrics": metrics,
        "java": _java(member, metrics),
        "nofile_limit": int(setting(settings, "os_tuning_nofile_limit")),
        "read_write_paths": read_write,
        "directories": service_directories(member.conf_dir, read_write, str(get("user")),
                                           str(get("group")), metrics),
        "sandbox": sandbox(),
    }
    zk["zoo_cfg"] = zoo_cfg(zk, get)
    return zk
