"""Kafka broker checks: a working, rack-aware cluster, not just running processes.

    kafkaform verify -i inventory/lab --checks kafka_broker [--limit kafka_broker]

The brokers (ids, racks, chroot, paths, JVM options) come from the kafkaform model over the
inventory (``--ansible-inventory``, else ``$KAFKAFORM_INVENTORY``, else Ansible's configured one),
never from constants here. Brokers are reached with ``--hosts`` when given (matched by inventory
name or address), else through the inventory's own connection (``podman://`` for podman hosts,
``ansible://`` otherwise). The produce/consume and rack tests create one
``kafkaform-verify-*`` topic (replication factor 2, 12 partitions) and delete it afterwards.
Kafka's tools run on the brokers with the role's admin client configuration (the brokers' own
principal over the BROKER listener); the security tests try the client listener without TLS, with
a wrong password and as a user without ACLs (a ``kafkaform-verify-*`` user, deleted afterwards).
"""

from __future__ import annotations

import json
import re
import secrets
import shlex
import time
import uuid
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
import testinfra  # type: ignore[import-untyped]
import testinfra.host  # type: ignore[import-untyped]

from kafkaform import acls
from kafkaform.jvm import KAFKA_TOOL
from kafkaform.mirror.kafka import client_config_option, kafka_main_class
from kafkaform.model import CONTROLLER_LISTENER, KAFKA_BROKER, KAFKA_CONTROLLER
from kafkaform.plans.kafka_broker import (
    KafkaBrokerPlan,
    host_read,
    kafka_broker_plan,
    parse_host,
)
from kafkaform.plans.running_cluster import running_cluster
from kafkaform.template_filters import parse_java_properties
from kafkaform.verify.conftest import (
    Inventory,
    Node,
    Nodes,
    assert_live_jvm,
    assert_planned_files,
    stat_paths,
    unreadable_by,
)

TOPICS = "org.apache.kafka.tools.TopicCommand"
QUORUM = "org.apache.kafka.tools.MetadataQuorumCommand"


@dataclass(frozen=True)
class Broker:
    name: str
    host: testinfra.host.Host
    plan: KafkaBrokerPlan  # the role's plan for this node, from its host read
    expected_inputs: Mapping[str, Any]  # the broker's inventory variables

    @property
    def expected(self) -> Mapping[str, Any]:
        """The role's template context for this node."""
        return self.plan.context

    def admin(self, *args: str) -> Any:
        return self.host.run(shlex.join([*self.plan.admin_argv, *args]))

    def tool(self, main_class: str, *args: str, jvm: Sequence[str] = (),
             errors_in_stdout: bool = False) -> Any:
        """One of Kafka's (or ZooKeeper's) tools on this broker's host; its stderr is dropped,
        or with ``errors_in_stdout`` merged into stdout, where the checks read the refusals."""
        exp = self.expected
        argv = [exp["java"]["binary"], *KAFKA_TOOL, *jvm, "-cp", exp["java"]["classpath"],
                main_class, *args]
        return self.host.run(shlex.join(argv) + (" 2>&1" if errors_in_stdout else " 2>/dev/null"))

    @property
    def configs_class(self) -> str:
        """ConfigCommand's class in the release this node runs (Kafka 4.4 moved it)."""
        return kafka_main_class(str(self.expected["release"]), "kafka-configs.sh")

    def config_option(self, old: str) -> str:
        """The client tools' configuration option in this node's release (``old`` before 4.2)."""
        return client_config_option(str(self.expected["release"]), old)

    def admin_tool(self, main_class: str, config_flag: str, *args: str) -> Any:
        """One of Kafka's tools as the brokers' principal, over the BROKER listener."""
        exp = self.expected
        return self.tool(main_class, "--bootstrap-server", exp["admin_bootstrap_servers"],
                         config_flag, exp["admin_client_config"], *args)

    def client_config(self, name: str, lines: Mapping[str, str]) -> str:
        """A client configuration file in a private temporary directory; its path."""
        directory = str(self.host.check_output("mktemp -d"))
        path = f"{directory}/{name}.properties"
        body = "\n".join(f"{k}={v}" for k, v in lines.items())
        self.host.run(f"umask 077 && printf '%s\\n' {shlex.quote(body)} > {shlex.quote(path)}")
        return path

    def zookeeper_tls_options(self) -> list[str]:
        """The ZooKeeper shell's option for the broker's TLS settings to the ensemble (SE-18),
        the keystore password read from its file as the broker reads it; none in plaintext."""
        props = parse_java_properties(str(self.expected["server_properties"]))
        if props.get("zookeeper.ssl.client.enable") != "true":
            return []
        secrets_file = self.host.file(self.expected["tls"]["secrets"]).content_string
        lines = {k: v for k, v in props.items()
                 if k.startswith("zookeeper.ssl.") or k == "zookeeper.clientCnxnSocket"}
        lines["zookeeper.ssl.keystore.password"] = \
            parse_java_properties(secrets_file)["keystore.password"]
        return ["-zk-tls-config-file", self.client_config("zookeeper-tls", lines)]

    def scram_config(self, user: str, password: str) -> dict[str, str]:
        return {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
                                f'required username="{user}" password="{password}";',
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": self.expected["tls"]["trust"],
            "request.timeout.ms": "10000",
            "default.api.timeout.ms": "20000",
        }

    def pid(self) -> str:
        return str(self.host.check_output("systemctl show --property=MainPID --value kafka"))


def planned(found: list[Node], inventory: Inventory) -> list[Broker]:
    """The nodes as the role plans them: their host reads, the cluster id their storage holds
    and the release line they run where the inventory names none (KR-07, KF-05), then the
    role's plan of each."""
    reads = {}
    for n in found:
        read = n.host.run(shlex.join(host_read(inventory.cluster, n.name, n.variables)))
        assert read.rc == 0, f"{n.name}: the host read failed: {read.stderr}"
        reads[n.name] = parse_host(read.stdout)
    view = inventory.view
    every_node = [*view.members(KAFKA_CONTROLLER), *view.members(KAFKA_BROKER)]
    running = running_cluster(inventory.cluster, reads,
                              {h: str(view.var(h, "kafka_broker_version") or "")
                               for h in every_node})
    assert not running.problem, running.problem
    model = running.model(inventory.cluster)
    return [Broker(n.name, n.host, kafka_broker_plan(model, n.name, n.variables, reads[n.name]),
                   n.variables) for n in found]


@pytest.fixture(scope="module")
def brokers(nodes: Nodes, inventory: Inventory) -> list[Broker]:
    return planned(nodes("brokers", "Kafka brokers"), inventory)


@pytest.fixture(scope="module")
def controllers(nodes: Nodes, inventory: Inventory) -> list[Broker]:
    """The KRaft controllers (a cluster in KRaft mode), as the role plans them."""
    return planned(nodes("controllers", "KRaft controllers"), inventory)


def kraft(broker: Broker) -> bool:
    return bool(broker.expected["metadata_mode"] == "kraft")


@pytest.fixture(scope="module")
def verify_topic(brokers: list[Broker]) -> Iterator[str]:
    """A fresh topic with replication factor 2 and 12 partitions, deleted afterwards."""
    topic = f"kafkaform-verify-{uuid.uuid4().hex[:12]}"
    first = brokers[0]
    created = first.admin_tool(TOPICS, "--command-config", "--create", "--topic", topic,
                               "--partitions", "12", "--replication-factor", "2")
    assert f"Created topic {topic}." in created.stdout, created.stdout + created.stderr
    yield topic
    first.admin_tool(TOPICS, "--command-config", "--delete", "--topic", topic)


def test_nothing_left_to_do_and_nothing_refused(brokers: list[Broker]) -> None:
    """Read as the role reads it, a converged broker needs nothing installed, no znode ACLs, and
    the run would not stop on it."""
    for broker in brokers:
        p = broker.plan
        assert not p.refusal, f"{broker.name}: {p.refusal}"
        left = {"packages": p.install.install_packages, "account": p.install.create_account,
                "agent jar": p.install.fetch_agent,
                "admin client": p.install.fetch_admin_client, "znode ACLs": p.secure_znodes}
        assert not any(left.values()), f"{broker.name}: still to do: {left}"


def test_planned_files_have_their_owner_group_and_mode(brokers: list[Broker]) -> None:
    for broker in brokers:
        p = broker.plan
        assert_planned_files(broker.name, broker.host,
                             (*p.files, *p.secret_files, *p.install.admin_files))


def test_services_run_as_the_kafka_user(brokers: list[Broker]) -> None:
    for broker in brokers:
        service = broker.host.service("kafka")
        assert service.is_running, f"{broker.name}: kafka is not running"
        assert service.is_enabled, f"{broker.name}: kafka is not enabled"
        user = broker.host.check_output("ps -o user= -p %s", broker.pid())
        assert user == broker.expected["user"], f"{broker.name}: runs as {user}"


def test_every_broker_registered_under_the_chroot_with_its_rack_and_one_controller(
        brokers: list[Broker]) -> None:
    exp = brokers[0].expected
    if kraft(brokers[0]):
        # KR-08: every broker fetches the metadata log from the quorum's leader (and, beside
        # combined nodes, every voter: their gate names them too).
        result = brokers[0].admin(*exp["health_args"])
        answer = json.loads(result.stdout)
        assert result.rc == 0, answer["problems"]
        assert set(map(str, exp["broker_ids"])) <= set(answer["registered"]), answer
        assert int(answer["controller"]) in exp["ids_by_host"].values(), answer
        return
    result = brokers[0].admin("zk-state", "--ids", ",".join(map(str, exp["broker_ids"])))
    assert result.rc == 0, result.stderr
    state = json.loads(result.stdout)
    for broker in brokers:
        registration = state["brokers"][str(broker.expected["id"])]
        assert registration is not None, f"{broker.name}: not registered under " \
            f"{exp['zookeeper_connect']}"
        assert (registration["rack"] or "") == broker.expected["rack"], (broker.name, registration)
        for listener in broker.expected["listeners"]:
            endpoint = f"{listener['name']}://{listener['advertised_host']}:{listener['port']}"
            assert endpoint in registration["endpoints"], (broker.name, registration)
    assert state["controller"] in exp["broker_ids"], f"controller: {state['controller']}"


def test_no_under_replicated_or_offline_partitions(brokers: list[Broker]) -> None:
    exp = brokers[0].expected
    result = brokers[0].admin("health", "--ids", ",".join(map(str, exp["broker_ids"])))
    assert result.rc == 0, result.stdout + result.stderr
    health = json.loads(result.stdout)
    assert (health["under_replicated"], health["offline"]) == (0, 0), health


def test_rf2_topic_spans_two_racks_in_every_partition(brokers: list[Broker],
                                                      verify_topic: str) -> None:
    exp = brokers[0].expected
    racks = exp["racks_by_id"]
    if len(set(racks.values()) - {""}) < 2:
        pytest.skip("the brokers span fewer than 2 racks")
    out = brokers[0].admin_tool(TOPICS, "--command-config", "--describe",
                                "--topic", verify_topic).stdout
    lines = [line for line in out.splitlines() if "Partition:" in line]
    assert len(lines) == 12, out
    for line in lines:
        fields = dict(f.split(": ", 1) for f in line.strip().split("\t") if ": " in f)
        replicas = fields["Replicas"].split(",")
        assert len({racks[r] for r in replicas}) == 2, f"{line}: replicas in one rack"


def test_produce_and_consume_with_acks_all(brokers: list[Broker], verify_topic: str) -> None:
    broker = brokers[-1]
    produced = broker.admin_tool("org.apache.kafka.tools.VerifiableProducer",
                                 broker.config_option("--producer.config"), "--topic",
                                 verify_topic, "--max-messages", "200", "--acks", "-1")
    events = [json.loads(line) for line in produced.stdout.splitlines() if line.startswith("{")]
    acked = {e["value"] for e in events if e.get("name") == "producer_send_success"}
    assert len(acked) == 200, produced.stdout[-2000:]
    consumed = broker.admin_tool("org.apache.kafka.tools.consumer.ConsoleConsumer",
                                 broker.config_option("--consumer.config"), "--topic",
                                 verify_topic, "--from-beginning", "--max-messages", "200",
                                 "--timeout-ms", "60000")
    assert set(consumed.stdout.split()) == acked, consumed.stdout[-2000:]


def test_live_jvm_has_the_configured_heap_gc_and_limits(brokers: list[Broker]) -> None:
    for broker in brokers:
        exp = broker.expected
        pid = broker.pid()
        assert_live_jvm(broker.name, broker.host, pid, exp)
        cmdline = broker.host.file(f"/proc/{pid}/cmdline").content_string.split("\0")
        assert f"-Xms{exp['heap_mb']}m" in cmdline and f"-Xmx{exp['heap_mb']}m" in cmdline


def test_kafka_owns_its_files_and_configs_are_not_world_readable(brokers: list[Broker]) -> None:
    for broker in brokers:
        exp = broker.expected
        directories = [*exp["log_dirs"], exp["log_dir"]]
        configs = [exp["java"]["config"], exp["log_config"]["dest"],
                   *([] if kraft(broker) else [exp["jaas_file"]]),
                   exp["admin_client_config"], exp["tls"]["keystore"],
                   exp["tls"]["secrets"], exp["tls"]["trust"]]
        found = stat_paths(broker.host, [*directories, *configs])
        for path in directories:
            item = found.get(path)
            assert item is not None and item.is_directory and item.user == exp["user"], (
                f"{broker.name}: {path} is {item}")
            assert not path.startswith("/tmp"), f"{broker.name}: log dir {path} under /tmp"
        for path in configs:
            item = found.get(path)
            assert item is not None and item.is_file, f"{broker.name}: {path} missing"
            assert item.mode & 0o007 == 0, f"{broker.name}: {path} is {oct(item.mode)}"
            assert item.group == exp["group"], f"{broker.name}: {path} group {item.group}"
        unread = unreadable_by(broker.host, exp["user"], configs)
        assert not unread, f"{broker.name}: {exp['user']} cannot read {', '.join(unread)}"


def test_plaintext_client_is_refused_on_every_listener(brokers: list[Broker]) -> None:
    """SE-01: no listener answers a client that does not speak TLS; while a cluster built open
    is being secured (SE-10) its plaintext listener is the one declared exception."""
    broker = brokers[0]
    config = broker.client_config("plaintext", {"request.timeout.ms": "5000",
                                                "default.api.timeout.ms": "10000"})
    for listener in broker.expected["listeners"]:
        if listener["protocol"] == "PLAINTEXT":
            warnings.warn(f"{broker.name}: the plaintext listener {listener['port']} stays open "
                          "until kafka_security_migration is finished (SE-10)", stacklevel=1)
            continue
        endpoint = f"{listener['advertised_host']}:{listener['port']}"
        result = broker.tool(TOPICS, "--bootstrap-server", endpoint, "--command-config", config,
                             "--list")
        assert result.rc != 0, f"{endpoint}: a plaintext client listed topics: {result.stdout}"


def test_wrong_scram_password_is_refused(brokers: list[Broker]) -> None:
    """SE-01: the client listener authenticates every connection."""
    broker = brokers[0]
    config = broker.client_config("wrong", broker.scram_config("kafkaform-verify-nobody",
                                                               secrets.token_hex(12)))
    result = broker.tool(TOPICS, "--bootstrap-server", broker.expected["bootstrap_servers"],
                         "--command-config", config, "--list", errors_in_stdout=True)
    assert result.rc != 0, result.stdout
    assert "Authentication failed" in result.stdout, result.stdout[-2000:]


def test_user_without_acls_is_denied(brokers: list[Broker], verify_topic: str) -> None:
    """SE-03: authenticated is not authorized; no ACL means no access."""
    broker = brokers[0]
    user, password = f"kafkaform-verify-{uuid.uuid4().hex[:8]}", secrets.token_hex(16)
    scram = broker.client_config("scram", {
        "SCRAM-SHA-512": f"iterations=8192,password={password}"})
    added = broker.admin_tool(broker.configs_class, "--command-config", "--alter",
                              "--entity-type", "users", "--entity-name", user,
                              "--add-config-file", scram)
    assert added.rc == 0, added.stdout + added.stderr
    try:
        config = broker.client_config("denied", broker.scram_config(user, password))
        result = broker.tool(TOPICS, "--bootstrap-server", broker.expected["bootstrap_servers"],
                             "--command-config", config, "--describe", "--topic", verify_topic,
                             errors_in_stdout=True)
        assert result.rc != 0, result.stdout
        assert "Authentication failed" not in result.stdout, result.stdout[-2000:]
        assert "Authorization failed" in result.stdout or "not authorized" in \
            result.stdout.lower() or "does not exist" in result.stdout, result.stdout[-2000:]
    finally:
        broker.admin_tool(broker.configs_class, "--command-config", "--alter",
                          "--entity-type", "users", "--entity-name", user,
                          "--delete-config", "SCRAM-SHA-512")


def test_certificates_verify_against_the_cluster_ca_for_every_name(
        brokers: list[Broker], inventory: Inventory) -> None:
    """SE-02: each broker presents a certificate of the cluster CA valid for each of its names;
    a name it does not carry fails."""
    probe = ("import socket, ssl, sys\n"
             "ctx = ssl.create_default_context(cafile=sys.argv[1])\n"
             "with socket.create_connection((sys.argv[2], int(sys.argv[3])), timeout=10) as s:\n"
             "    with ctx.wrap_socket(s, server_hostname=sys.argv[4]) as t:\n"
             "        left = ssl.cert_time_to_seconds(t.getpeercert()['notAfter'])\n"
             "        print(t.version(), int(left))\n")
    client = brokers[0]
    trust = client.expected["tls"]["trust"]
    renew_days = int(inventory.view.cluster_var("kafkaform_tls_renew_before_days"))
    for broker in brokers:
        port = str(broker.expected["port"])
        for name in broker.expected["tls_names"]:
            result = client.host.run(shlex.join(["python3", "-c", probe, trust,
                                                 broker.expected["address"], port, name]))
            assert result.rc == 0, f"{broker.name} as {name}: {result.stderr[-1000:]}"
            version, not_after = result.stdout.split()
            assert version in ("TLSv1.3", "TLSv1.2"), result.stdout
            days = (int(not_after) - time.time()) / 86400
            if days < renew_days:
                warnings.warn(f"{broker.name}: its certificate expires in {days:.0f} days; run "
                              "the site playbook to renew it (SE-02)", stacklevel=1)
        wrong = client.host.run(shlex.join(["python3", "-c", probe, trust,
                                            broker.expected["address"], port,
                                            "not-this-broker.invalid"]))
        assert wrong.rc != 0 and "CERTIFICATE_VERIFY_FAILED" in wrong.stderr, wrong.stderr


def test_declared_users_log_in_and_declared_acls_are_in_place(brokers: list[Broker]) -> None:
    """SE-03: every user of kafka_users authenticates with its declared password, and the
    cluster holds every binding of kafka_acls (nothing left to add, nothing to remove)."""
    broker = brokers[0]
    variables = broker.expected_inputs
    for user in variables.get("kafka_users") or []:
        if user.get("state", "present") != "present":
            continue
        config = broker.client_config("user", broker.scram_config(user["name"], user["password"]))
        result = broker.tool(TOPICS, "--bootstrap-server", broker.expected["bootstrap_servers"],
                             "--command-config", config, "--list", errors_in_stdout=True)
        assert result.rc == 0, f"{user['name']} cannot log in: {result.stdout[-1000:]}"
    declared = variables.get("kafka_acls") or []
    if declared:
        listed = broker.admin("acl-list")
        assert listed.rc == 0, listed.stderr
        assert acls.plan(declared, listed.stdout) == [], listed.stdout


def test_kafka_znodes_carry_acls(brokers: list[Broker]) -> None:
    """SE-07: the brokers wrote their znodes with ACLs: only their ZooKeeper user may change
    them; anyone else may at most read."""
    broker = brokers[0]
    exp = broker.expected
    if kraft(broker):
        pytest.skip("KRaft mode: the cluster keeps its metadata in its own log, not in znodes")
    connect = exp["zookeeper_connect"]
    servers, _slash, chroot = connect.partition("/")
    result = broker.tool("org.apache.zookeeper.ZooKeeperMainWithTlsSupportForKafka",
                         *broker.zookeeper_tls_options(), "-server",
                         servers, "getAcl", f"/{chroot}/brokers/topics",
                         jvm=[f"-Djava.security.auth.login.config={exp['jaas_file']}"],
                         errors_in_stdout=True)
    assert "'sasl,'kafka" in result.stdout, result.stdout[-2000:]
    world = result.stdout.split("'world,'anyone", 1)
    assert len(world) == 1 or world[1].split("\n", 2)[1].strip(": ") in ("r", ""), \
        result.stdout[-2000:]


def test_brokers_hold_their_zookeeper_sessions_over_tls(brokers: list[Broker]) -> None:
    """SE-18: each ZooKeeper-mode broker's open connection to the ensemble goes to a member's
    secure client port (the kernel's socket table on the broker)."""
    exp = brokers[0].expected
    if kraft(brokers[0]) or "zookeeper.ssl.client.enable=true" not in exp["server_properties"]:
        pytest.skip("the brokers do not reach ZooKeeper over TLS in this cluster's mode or step")
    secure = {int(a.rsplit(":", 1)[1]) for a in exp["zookeeper_connect"].split("/")[0].split(",")}
    for broker in brokers:
        table = broker.host.check_output("cat /proc/net/tcp /proc/net/tcp6")
        # Established connections (state 01) by remote port (hex after the remote address's colon).
        ports = {int(fields[2].rsplit(":", 1)[1], 16) for line in table.splitlines()[1:]
                 if len(fields := line.split()) > 3 and fields[3] == "01"}
        assert ports & secure, f"{broker.name}: no connection to a secure client port {secure}"


def test_store_locations_come_only_from_server_properties(brokers: list[Broker]) -> None:
    """SE-02: a TLS reload sets each listener's store locations dynamically and deletes them at
    once; none may linger, or they would outrank server.properties on the next change."""
    broker = brokers[0]
    # Without --all, ConfigCommand lists only the dynamic configs, of every broker.
    result = broker.admin_tool(broker.configs_class, "--command-config", "--describe",
                               "--entity-type", "brokers")
    assert result.rc == 0 and "Dynamic configs for broker" in result.stdout, result.stdout[-2000:]
    lingering = [line.strip() for line in result.stdout.splitlines()
                 if re.match(r"\s*listener\.name\.[^.]+\.ssl\.(keystore|truststore)\.location=",
                             line)]
    assert not lingering, lingering


def test_controllers_run_as_the_kafka_user_with_their_unit_options(
        controllers: list[Broker]) -> None:
    for controller in controllers:
        exp = controller.expected
        service = controller.host.service("kafka")
        assert service.is_running and service.is_enabled, f"{controller.name}: kafka is down"
        pid = controller.pid()
        user = controller.host.check_output("ps -o user= -p %s", pid)
        assert user == exp["user"], f"{controller.name}: runs as {user}"
        assert_live_jvm(controller.name, controller.host, pid, exp)
        meta = controller.host.file(f"{exp['log_dirs'][0]}/meta.properties")
        assert meta.user == exp["user"], f"{controller.name}: meta.properties is {meta.user}'s"
        assert f"cluster.id={exp['cluster_id']}" in meta.content_string, (
            f"{controller.name}: {meta.content_string}")  # KR-07


def test_the_controller_quorum_has_a_leader_and_every_voter_caught_up(
        controllers: list[Broker]) -> None:
    """KR-08: the gate of every controller restart holds on the running quorum."""
    exp = controllers[0].expected
    result = controllers[0].admin(*exp["health_args"])
    answer = json.loads(result.stdout)
    assert result.rc == 0, answer["problems"]
    voters = sorted(str(c.expected["id"]) for c in controllers)
    # A combined node's gate (KR-04) names the brokers too.
    assert set(voters) <= set(answer["registered"]), answer
    assert answer["controller"] in voters, answer


def test_the_controller_listener_refuses_a_client_without_a_certificate(
        controllers: list[Broker]) -> None:
    """KR-06: TLS alone is not enough on the controller listener; the cluster CA's
    certificate is."""
    controller = controllers[0]
    listener = next(lst for lst in controller.expected["listeners"]
                    if lst["name"] == CONTROLLER_LISTENER)
    endpoint = f"{listener['address']}:{listener['port']}"
    config = controller.client_config("no-certificate", {
        "security.protocol": "SSL", "ssl.truststore.type": "PEM",
        "ssl.truststore.location": controller.expected["tls"]["trust"],
        "request.timeout.ms": "5000", "default.api.timeout.ms": "10000"})
    refused = controller.tool(QUORUM, "--bootstrap-controller", endpoint, "--command-config",
                              config, "describe", "--status", errors_in_stdout=True)
    assert refused.rc != 0, refused.stdout
    allowed = controller.tool(QUORUM, "--bootstrap-controller", endpoint, "--command-config",
                              controller.expected["admin_client_config"], "describe", "--status")
    assert allowed.rc == 0 and "LeaderId" in allowed.stdout, allowed.stdout
