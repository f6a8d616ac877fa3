"""The rule catalogue: every rule id the code, the roles and the docs cite, defined once.

A check that reports a problem takes its rule's id through :func:`cite`, so an id missing here fails
the check itself, and ``tests/unit/test_rules_catalogue.py`` fails on any rule-id-shaped token in
the repository that is not defined here. ``RULES.md`` is generated from this module::

    python -m kafkaform.rules           # write RULES.md at the collection root
    python -m kafkaform.rules --check   # exit 1 when RULES.md differs from this module
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

#: Rule id prefixes and the area each covers, in the order RULES.md lists them.
PREFIXES: dict[str, str] = {
    "ZK": "ZooKeeper ensemble",
    "KB": "Kafka brokers",
    "KR": "KRaft controllers",
    "RA": "Racks and placement",
    "TR": "Topics and replication",
    "CL": "Kafka clients (the pipeline's producer and consumer)",
    "SP": "Spark and the pipeline",
    "OS": "Kernel settings",
    "DF": "Data disks and filesystems",
    "FD": "Open files",
    "JV": "JVM",
    "SE": "Security",
    "MO": "Monitoring and verification",
    "OP": "Operations",
    "KF": "kafkaform's own",
}

#: A rule id as the code and the docs cite it: a known prefix, a dash, digits.
ID_PATTERN = re.compile(r"\b(?:" + "|".join(PREFIXES) + r")-\d+\b")

#: ``checked_by`` of a rule nothing reports a violation of: the roles apply it (defaults,
#: templates, tasks) and RULES.md says so.
DOCUMENTED_ONLY: tuple[str, ...] = ()

# Files whose code reports violations, as RULES.md links them (paths from the collection root).
_PKG = "plugins/plugin_utils/kafkaform"
PREFLIGHT = f"{_PKG}/checks.py"
ZOOKEEPER_SETTINGS = f"{_PKG}/contexts/zookeeper.py"
BROKER_SETTINGS = f"{_PKG}/contexts/kafka_broker.py"
SPARK_NODE_SETTINGS = f"{_PKG}/contexts/spark_node.py"
PIPELINE_SETTINGS = f"{_PKG}/contexts/spark_pipeline.py"
TOPIC_PLAN = f"{_PKG}/topics.py"
OS_TUNING_LIVE = f"{_PKG}/verify/test_os_tuning.py"
USERS_AND_ACLS = f"{_PKG}/acls.py"
KAFKA_LIVE = f"{_PKG}/verify/test_kafka_broker.py"
MONITORING_LIVE = f"{_PKG}/verify/test_monitoring.py"
ALERT_RULE_TESTS = "tests/promtool/alerts.test.yml"
CLOUD_SPEC = f"{_PKG}/cloud/spec.py"
STORAGE_TASKS = "roles/kafka_broker/tasks/storage.yml"
CONTROLLER_UNIT = "templates/kafka_broker/kafka.service.j2"
ADMIN_HELPER = "roles/kafka_broker/files/kafkaform-kafka"
RESTART_TASKS = "roles/kafka_broker/tasks/restart.yml"
MIGRATION_PLAYBOOK = "playbooks/kraft_migration.yml"
MIGRATION_STATES = f"{_PKG}/kraft_migration.py"
FEATURE_TASKS = "roles/kafka_broker/tasks/features.yml"
INSTALL_TASKS = "roles/kafka_broker/tasks/install.yml"
CLOUD_PROVISION = f"{_PKG}/cloud/provision.py"


@dataclass(frozen=True)
class Rule:
    """One rule: what it asks (title), why, how to meet it (fix), and what checks it.

    ``checked_by`` lists the files (from the collection root) whose code reports a violation:
    Python checks cite the id through :func:`cite`, task files and live-host tests name it.
    ``DOCUMENTED_ONLY`` (empty) marks a rule no code checks.
    """

    id: str
    title: str
    why: str
    fix: str
    checked_by: tuple[str, ...]

    @property
    def enforced(self) -> bool:
        return bool(self.checked_by)


CATALOGUE: tuple[Rule, ...] = (
    # ZooKeeper
    Rule("ZK-01", "Install the tested ZooKeeper release, verified by its sha512, behind a stable "
         "symlink",
         "The verified archive is the one the collection was tested with; a versioned directory "
         "behind a symlink makes an upgrade one link change and a rolling restart.",
         "Leave zookeeper_version at the catalog's version, or set zookeeper_archive_url to an "
         "archive with its .sha512 next to it.",
         DOCUMENTED_ONLY),
    Rule("ZK-02", "Standard zoo.cfg: client, quorum and election ports, tick time, init and sync "
         "limits, data directory",
         "Members configured alike form one ensemble, and brokers and tools connect without "
         "per-host settings.",
         "Set the zookeeper_* port, timing and directory variables for the whole zookeeper group.",
         DOCUMENTED_ONLY),
    Rule("ZK-03", "Every member has its own zookeeper_id from 1 to 255, written to myid and never "
         "changed",
         "The id names the member in every server line; a duplicate or changed id makes the "
         "ensemble see a member vanish and an unknown one appear, with the old member's data.",
         "Set zookeeper_id, a unique integer from 1 to 255, in each member's host_vars (it is "
         "never defaulted); to replace a member, follow ZK-14.",
         (PREFLIGHT, "plugins/plugin_utils/kafkaform/plans/zookeeper.py")),
    Rule("ZK-04", "Every member has the same server lines",
         "Members that disagree on who is in the ensemble cannot form one quorum.",
         "Nothing to set: every member's zoo.cfg comes from the one cluster model.",
         DOCUMENTED_ONLY),
    Rule("ZK-05", "Clients and brokers connect on the client port, 2181 by default",
         "The port every ZooKeeper client and Kafka tool expects.",
         "Set zookeeper_client_port for the whole ensemble to use another.",
         DOCUMENTED_ONLY),
    Rule("ZK-06", "An odd ensemble of 3 to 7 members",
         "An even ensemble tolerates no more failures than one member fewer; one member tolerates "
         "none; every member beyond 7 slows every write.",
         "Use 3 or 5 members (7 at most); set kafkaform_allow_single_zookeeper: true for a "
         "development cluster of one, or kafkaform_allow_large_ensemble: true for more than 7.",
         (PREFLIGHT,)),
    Rule("ZK-07", "No rack holds a majority of the ensemble",
         "Losing a rack that holds a majority of the members loses the quorum, and with it every "
         "broker's metadata writes.",
         "Spread the members over the racks so no rack holds more than half of them (in a cloud: "
         "at least 3 availability zones).",
         (PREFLIGHT,)),
    Rule("ZK-08", "Old snapshots and transaction logs are purged, keeping at least 3 snapshots",
         "ZooKeeper never deletes them on its own, so the disk fills; PurgeTxnLog and autopurge "
         "refuse to keep fewer than 3 snapshots.",
         "Choose zookeeper_purge_method (timer or autopurge) and keep "
         "zookeeper_purge_snap_retain_count at 3 or more.",
         (ZOOKEEPER_SETTINGS,)),
    Rule("ZK-09", "The transaction log has a disk of its own",
         "Every write waits for the transaction log's fsync; sharing the disk with snapshots or "
         "other I/O makes writes slow.",
         "Declare a disk with purpose zookeeper_txn_log in os_tuning_data_disks; dataLogDir then "
         "points at it.",
         DOCUMENTED_ONLY),
    Rule("ZK-10", "A fixed ZooKeeper heap of 3-5 GB in production",
         "ZooKeeper holds its whole tree in memory; a full heap means long pauses and expired "
         "sessions, and -Xms equal to -Xmx avoids resizing.",
         "Set zookeeper_heap_mb (3072 by default; at least 64, for a lab only).",
         (ZOOKEEPER_SETTINGS,)),
    Rule("ZK-11", "ZooKeeper runs on hosts of its own (a warning)",
         "A broker's disk and page-cache load delays ZooKeeper's fsyncs and so its sessions.",
         "Give the zookeeper group hosts that are not in the kafka_broker group in production.",
         (PREFLIGHT,)),
    Rule("ZK-13", "Only the four-letter words monitoring needs; the AdminServer off or on "
         "localhost",
         "Four-letter words and the AdminServer answer anyone who reaches the port, without "
         "authentication.",
         "Keep zookeeper_four_letter_words within srvr, mntr, ruok, conf and isro, with srvr "
         "(health checks use it); keep zookeeper_admin_server_enabled false unless needed.",
         (ZOOKEEPER_SETTINGS,)),
    Rule("ZK-14", "A replaced member keeps its id and address",
         "The other members know a member by its id and address; a new id has to be taken into "
         "the ensemble on every member first.",
         "Stop zookeeper on the member, move its data directory (and the dataLogDir) aside and "
         "rerun: it resyncs from the leader. For a new id, remove the old server line from the "
         "ensemble first.",
         ("plugins/plugin_utils/kafkaform/plans/zookeeper.py",)),
    Rule("ZK-15", "Rolling restarts: one member at a time, followers first and the leader last, "
         "each waiting for the quorum",
         "Restarting two of three members at once loses the quorum; restarting the leader last "
         "moves leadership once.",
         "Raise zookeeper_restart_timeout_s when a member needs longer to rejoin; the play stops "
         "at a member that does not, leaving the others alone.",
         ("roles/zookeeper/tasks/restart.yml",)),
    # Kafka brokers
    Rule("KB-02", "Every broker has its own kafka_broker_id",
         "broker.id is the broker's identity in ZooKeeper and in every partition's replica list; "
         "two brokers with one id fight over it, and a changed id orphans the broker's data.",
         "Set kafka_broker_id, a unique integer from 0 to reserved.broker.max.id (1000 unless "
         "kafka_broker_extra_properties raises it; the ids above are Kafka's generated ones), in "
         "each broker's host_vars; it is never defaulted.",
         (PREFLIGHT,)),
    Rule("KB-03", "Brokers run as the kafka system user and listen on kafka_broker_port",
         "An unprivileged user of its own limits what a compromised broker can touch; one known "
         "port keeps firewall rules and bootstrap lists simple.",
         "Keep kafka_broker_user an unprivileged user; set kafka_broker_port (9092) to move the "
         "listener.",
         DOCUMENTED_ONLY),
    Rule("KB-04", "Each broker advertises its own inventory address",
         "Clients connect to the address a broker advertises, so it must be one they can reach.",
         "Set ansible_host (or name the host) with the address clients reach the broker at.",
         DOCUMENTED_ONLY),
    Rule("KB-05", "zookeeper.connect names every ensemble member, comma-separated, with the "
         "cluster's chroot",
         "A broker must reach the ensemble while any one member is down, and a chroot keeps "
         "clusters that share an ensemble apart.",
         "Nothing to set: the cluster model writes it; kafka_zookeeper_chroot chooses the chroot "
         "(default /kafka/<kafka_cluster_name>).",
         DOCUMENTED_ONLY),
    Rule("KB-06", "One Kafka log directory per data mount, never under /tmp; application logs "
         "elsewhere",
         "Kafka spreads partitions over log.dirs, so each disk carries its share; /tmp may be "
         "emptied at boot; logs written to a data disk compete with the data.",
         "Declare the data disks with purpose kafka_log_dir in os_tuning_data_disks; keep "
         "kafka_broker_log_dir off the data mounts.",
         DOCUMENTED_ONLY),
    Rule("KB-07", "More than one recovery thread per log directory",
         "After an unclean shutdown the broker reads every segment before it serves; one thread "
         "per directory makes that restart slow.",
         "Set kafka_broker_num_recovery_threads_per_data_dir to 2 or more (8 by default).",
         (BROKER_SETTINGS,)),
    Rule("KB-09", "The default partition count is a multiple of the broker count",
         "Partitions spread evenly over the brokers only when their count divides evenly.",
         "Set kafka_broker_num_partitions (12 by default) to a multiple of the number of brokers.",
         DOCUMENTED_ONLY),
    Rule("KB-10", "Records are kept 7 days",
         "A consumer stopped over a long weekend must still find its records.",
         "Set kafka_broker_log_retention_ms, or retention.ms per topic in kafka_topics.",
         DOCUMENTED_ONLY),
    Rule("KB-11", "Log segments of 1 GiB",
         "Kafka's default: fewer, larger files keep file handles and index memory low, and "
         "retention deletes whole segments.",
         "Set kafka_broker_log_segment_bytes.",
         DOCUMENTED_ONLY),
    Rule("KB-12", "Followers can replicate the largest message a broker accepts",
         "With replica.fetch.max.bytes below message.max.bytes a broker accepts a batch its "
         "followers cannot fetch, and replication of that partition stalls.",
         "Keep replica.fetch.max.bytes at least kafka_broker_message_max_bytes: the role renders "
         "it so, and kafka_broker_extra_properties may only raise it.",
         (BROKER_SETTINGS,)),
    Rule("KB-13", "No application fsync: the operating system flushes",
         "Durability comes from replication; forcing fsync through log.flush.* costs throughput "
         "and adds nothing the replicas do not give.",
         "Remove log.flush.interval.messages and log.flush.interval.ms from "
         "kafka_broker_extra_properties.",
         (BROKER_SETTINGS,)),
    Rule("KB-14", "Network and I/O threads sized from the host",
         "Too few threads cap a large host's throughput; the I/O pool needs at least one thread "
         "per log directory.",
         "Leave kafka_broker_num_network_threads and kafka_broker_num_io_threads at 0 to size "
         "them from the cores, or set them.",
         DOCUMENTED_ONLY),
    Rule("KB-15", "The broker's unit starts kafka.Kafka directly and stops it with a controlled "
         "shutdown",
         "The live command line is exactly what the inventory asked for, and SIGTERM moves "
         "leadership away before the broker stops.",
         "Nothing to set: the unit comes from templates/kafka_broker/kafka.service.j2.",
         DOCUMENTED_ONLY),
    Rule("KB-16", "Leadership moves back to the preferred replicas automatically",
         "A restarted broker leads nothing until leadership is rebalanced; rebalancing spreads "
         "the load again.",
         "Keep kafka_broker_auto_leader_rebalance_enable true.",
         DOCUMENTED_ONLY),
    Rule("KB-17", "Topic deletion is allowed, and kafkaform never deletes a topic",
         "Operators may delete a topic on purpose; a converge never does it for them.",
         "Set kafka_broker_delete_topic_enable false to forbid deletion altogether.",
         DOCUMENTED_ONLY),
    Rule("KB-18", "A ZooKeeper session timeout of 18 seconds, within what the ensemble grants",
         "Long enough to ride out a GC pause, short enough that a dead broker loses its "
         "leadership quickly. A member negotiates every session's timeout into its own bounds "
         "(2 to 20 ticks unless minSessionTimeout and maxSessionTimeout say otherwise), "
         "silently: a broker asking for more or less runs with what it was granted.",
         "Set kafka_broker_zookeeper_session_timeout_ms within 2 and 20 times "
         "zookeeper_tick_time_ms (4 to 40 s by default).",
         (PREFLIGHT,)),
    Rule("KB-20", "A log cleaner dedupe buffer sized for compaction",
         "Too small a buffer makes compacting large topics slow; more than a quarter of the heap "
         "starves the broker.",
         "Set kafka_broker_log_cleaner_dedupe_buffer_mb (above 128 when topics are compacted); "
         "the role caps it at a quarter of the heap.",
         DOCUMENTED_ONLY),
    Rule("KB-22", "Controller, state-change and log-cleaner logs in files of their own",
         "They explain leadership changes and compaction; mixed into server.log they are lost in "
         "its noise and its rotation.",
         "Nothing to set: templates/kafka_broker/log4j.properties.j2 (Kafka 3) or "
         "log4j2.yaml.j2 (Kafka 4) writes them to kafka_broker_log_dir.",
         DOCUMENTED_ONLY),
    # KRaft controllers
    Rule("KR-01", "The KRaft controller quorum has an odd number of controllers, 3 or more",
         "The quorum needs a majority of its controllers to elect the active controller and "
         "commit metadata: an even quorum tolerates no more failures than one controller fewer, "
         "and a single controller none.",
         "Put 3 or 5 hosts in the kafka_controller group (a single one only with "
         "kafkaform_allow_single_controller: true, for development).",
         (PREFLIGHT,)),
    Rule("KR-02", "Every controller has its own kafka_node_id, which no broker's id takes",
         "Brokers and controllers share one space of node ids: the quorum voters and, while a "
         "ZooKeeper-mode cluster migrates, the brokers' registrations name nodes by it. A "
         "controller with a broker's id makes two nodes one.",
         "Set kafka_node_id, a non-negative integer, in each controller's host_vars, different "
         "from every other controller's and every broker's kafka_broker_id (it is never "
         "defaulted; ids from 3000 up keep the controllers apart from the brokers). A host that "
         "is both (combined mode, KR-04) is one node: its kafka_node_id is its kafka_broker_id.",
         (PREFLIGHT,)),
    Rule("KR-03", "No rack holds a majority of the controllers",
         "Losing a rack that holds a majority of the controllers loses the quorum, and with it "
         "every metadata change of the cluster.",
         "Spread the controllers over the racks so no rack holds more than half of them (in a "
         "cloud: at least 3 availability zones).",
         (PREFLIGHT,)),
    Rule("KR-04", "A host runs both a controller and a broker only by explicit choice",
         "In combined mode the broker's load and restarts reach the metadata quorum, and the two "
         "cannot be rolled or scaled apart; Kafka's documentation keeps it for small and "
         "development clusters.",
         "Give the controllers hosts of their own, or set kafka_controller_combined: true: a host "
         "in both groups then runs one Kafka node with process.roles=broker,controller, on the "
         "broker's heap and log directories, rolled with the brokers on the gate of both (its "
         "partitions and every voter's lag).",
         (PREFLIGHT,)),
    Rule("KR-05", "Controllers are declared only where kafkaform installs them",
         "This release builds a new cluster in KRaft mode (controllers, no ZooKeeper ensemble), "
         "and migrates a ZooKeeper-mode cluster with its own playbook, to dedicated controllers "
         "only, as Kafka's migration requires. Controllers beside a ZooKeeper ensemble outside "
         "a migration would be left out of the run, silently, and a combined controller cannot "
         "migrate a cluster.",
         "For a KRaft cluster, declare controllers and no zookeeper group; to migrate, run "
         "playbooks/kraft_migration.yml (KR-09) with each controller on a host of its own; for "
         "a ZooKeeper-mode cluster, remove the kafka_controller group.",
         (PREFLIGHT,)),
    Rule("KR-06", "The controller listener speaks mutual TLS, and only the cluster's own nodes "
         "and tools are authorized on it",
         "Whoever reaches a controller's listener unauthenticated can write the cluster's "
         "metadata: topics, ACLs, SCRAM credentials, broker registrations.",
         "Keep the role's CONTROLLER listener (SSL with required client certificates, the "
         "StandardAuthorizer, the controllers and brokers as super users); it takes no extra "
         "listener.",
         (BROKER_SETTINGS,)),
    Rule("KR-07", "Every node's storage is formatted once, with the cluster's id, and never again",
         "Formatting a log directory that holds data destroys it; a directory formatted for "
         "another cluster makes the node refuse to start or, worse, join the wrong cluster.",
         "Leave the formatting to the role: it formats a directory without meta.properties and "
         "stops with the host and directory named when one belongs to another cluster id "
         "(set kafka_cluster_id to the cluster's own).",
         (STORAGE_TASKS,)),
    Rule("KR-08", "A controller restarts only while the quorum has a leader and every voter is "
         "caught up, one at a time, the active controller last",
         "Restarting a second controller while one is still catching up, or the leader first, "
         "loses the quorum's majority or forces needless elections: no metadata change, no "
         "broker registration, until it returns.",
         "Let the role roll its restarts; kafka_controller_max_lag bounds the lag it accepts.",
         (RESTART_TASKS,)),
    Rule("KR-09", "A ZooKeeper-mode cluster moves to KRaft one phase per rolling restart, "
         "stops at a soak point, and finalizes only when asked",
         "Kafka's migration passes through states where controllers, brokers and ZooKeeper must "
         "agree: a broker rolled out of order, or controllers leaving migration mode before every "
         "broker runs KRaft, leaves a cluster that neither mode can serve; finalizing ends the "
         "way back to ZooKeeper mode.",
         "Run playbooks/kraft_migration.yml: controllers, dual_write (the soak point), "
         "kraft_brokers, then -e kraft_migration_finalize=true; set kafka_kraft_migration: "
         "finalized afterwards.",
         (PREFLIGHT, MIGRATION_STATES, MIGRATION_PLAYBOOK)),
    Rule("KR-10", "Kafka 4 runs only once the cluster is in KRaft mode, and the metadata "
         "version follows a new release only when every node runs it",
         "Kafka 4 has no ZooKeeper mode: a broker of a ZooKeeper-mode or half-migrated cluster "
         "would not start on it. Raising metadata.version while a node still runs the older "
         "release locks that node out (it cannot read the new records), and once raised the "
         "binaries can no longer go back.",
         "Finalize the migration first (playbooks/kraft_migration.yml, then kafka_kraft_migration: "
         "finalized); then raise kafka_broker_version in group_vars/all and run site.yml: the "
         "controllers, then the brokers roll onto it, and the run raises metadata.version once "
         "every node runs it. To soak the new release first, set "
         "kafka_broker_upgrade_metadata_version: false and run again without it later. Once "
         "it is raised, keep kafka_broker_version at that line or later: a run that would take a "
         "node below it stops before anything changes.",
         (PREFLIGHT, FEATURE_TASKS, INSTALL_TASKS)),
    Rule("KR-11", "A controller's start ends only once its registration with the quorum is in "
         "the metadata log, and a start whose registration Kafka dropped is started again",
         "Kafka (3.9 and 4.1 alike) sends a controller's registration (KIP-919) once and gives "
         "up for good when no answer comes within 5 seconds, as on a slow start (KAFKA-20247). "
         "Such a controller serves the quorum but is missing from what clients bootstrapping "
         "from the controllers see, and a migration from ZooKeeper waits on it for ever.",
         "Nothing to set: the controllers' unit waits for the registration as it starts and fails "
         "a start whose registration was dropped, so that systemd starts a new process. A "
         "controller whose journal says \"channel manager timed out before sending the request\" "
         "and that still runs needs a restart.",
         (CONTROLLER_UNIT, ADMIN_HELPER)),
    # Racks
    Rule("RA-01", "rack is set on every ZooKeeper member and broker, or on none",
         "Rack-aware placement and the quorum check need every host's rack; racks on some hosts "
         "only make placement wrong without an error.",
         "Set rack on every ZooKeeper member and broker (in a cloud: its availability zone), or "
         "on none.",
         (PREFLIGHT,)),
    Rule("RA-02", "Brokers span at least two racks, and replicas are placed rack-aware",
         "Kafka spreads a partition's replicas over racks only when broker.rack is set, and with "
         "every broker in one rack no partition survives losing it.",
         "Spread the brokers over two or more racks.",
         (PREFLIGHT,)),
    Rule("RA-03", "Topics are created rack-aware",
         "A topic created with explicit replica assignments bypasses rack awareness.",
         "Declare topics in kafka_topics, so kafkaform creates them with Kafka's rack-aware "
         "placement.",
         DOCUMENTED_ONLY),
    # Topics and replication
    Rule("TR-01", "Replication factor 3 by default, never above the broker count",
         "Three replicas survive one broker down and another failing; a topic cannot have more "
         "replicas than there are brokers.",
         "Set kafka_default_replication_factor (3 by default) to at most the number of brokers, "
         "or add brokers.",
         (PREFLIGHT, TOPIC_PLAN)),
    Rule("TR-02", "min.insync.replicas at least 1 and below the replication factor",
         "Equal to the replication factor, one broker down stops every acks=all write and no "
         "rolling restart is possible.",
         "Set kafka_min_insync_replicas to the replication factor less one (2 for 3).",
         (PREFLIGHT, TOPIC_PLAN)),
    Rule("TR-03", "No unclean leader election",
         "A replica that is not in sync, elected leader, loses every write it had not copied.",
         "Nothing to set: the cluster model writes unclean.leader.election.enable=false, and an "
         "extra property or topic config may contradict it.",
         (TOPIC_PLAN,)),
    Rule("TR-04", "Topics are declared in the inventory, never created on first use",
         "An auto-created topic gets default partitions and configs nobody chose; declared ones "
         "are reviewed and converged.",
         "Declare every topic in kafka_topics; the cluster model sets "
         "auto.create.topics.enable=false.",
         DOCUMENTED_ONLY),
    Rule("TR-05", "Partitions only grow, and the replication factor is not changed in place",
         "Kafka cannot remove partitions, and a replication-factor change is a planned partition "
         "reassignment, not a converge.",
         "Declare partitions at least the current count (or create a new topic and migrate); "
         "change a replication factor with kafka-reassign-partitions.",
         (TOPIC_PLAN, "roles/kafka_broker/tasks/topics.yml")),
    Rule("TR-06", "Valid topic names: 1 to 249 letters, digits, '.', '_' and '-', no leading "
         "'__', and not both '.' and '_'",
         "Kafka reserves names starting with '__' for itself, and '.' and '_' collide in metric "
         "names.",
         "Rename the topic in kafka_topics (and spark_pipeline_topic).",
         (TOPIC_PLAN, PIPELINE_SETTINGS)),
    Rule("TR-07", "Topic configs are ones Kafka knows, with values it accepts",
         "Kafka refuses an unknown config or a bad value only when the run reaches the topic, "
         "after the brokers were restarted; a misspelt key would otherwise never take effect.",
         "Use the topic configs of the Kafka release "
         "(https://kafka.apache.org/39/documentation.html#topicconfigs) with valid values.",
         (TOPIC_PLAN,)),
    # Kafka clients
    Rule("CL-01", "Producers are idempotent",
         "A send retried after a lost acknowledgement would otherwise write the record twice.",
         "Keep enable.idempotence on in every producer (the pipeline's generator sets it).",
         DOCUMENTED_ONLY),
    Rule("CL-03", "Producers wait for every in-sync replica (acks=all)",
         "With fewer acknowledgements a broker failure can lose a write the producer was told "
         "had succeeded.",
         "Keep acks=all; with min.insync.replicas (TR-02) it bounds the failures without loss.",
         DOCUMENTED_ONLY),
    Rule("CL-05", "Consumers read committed records only",
         "Records of aborted transactions must never reach the sink.",
         "Keep kafka.isolation.level=read_committed on the pipeline's Kafka source.",
         DOCUMENTED_ONLY),
    Rule("CL-07", "Records are keyed by entity",
         "Kafka keeps order within a partition only; one key per entity keeps each entity's "
         "events in order.",
         "Key every event by its entity_id.",
         DOCUMENTED_ONLY),
    Rule("CL-08", "Clients bootstrap from at least two brokers",
         "With one bootstrap broker a client cannot start while that broker is down.",
         "Keep at least two hosts in the kafka_broker group (three or more in production); the "
         "pipeline bootstraps from every broker.",
         (PREFLIGHT, PIPELINE_SETTINGS)),
    Rule("CL-09", "A consumer without a stored position starts from the earliest offset",
         "Starting from the latest offset skips every record written before the first start.",
         "Keep startingOffsets=earliest; a restarted pipeline resumes from its checkpoint "
         "instead.",
         DOCUMENTED_ONLY),
    Rule("CL-12", "Every record lands exactly once",
         "A replay after a stop or crash must not write a record twice, and no record may be "
         "dropped.",
         "Keep the pipeline's sink and checkpoint together under spark_node_shared_dir; "
         "playbooks/pipeline_check.yml audits the output.",
         DOCUMENTED_ONLY),
    # Spark
    Rule("SP-01", "Spark workers have a master",
         "A worker registers with the master; without one it runs nothing.",
         "Add a host to the spark_master group.",
         (PREFLIGHT, SPARK_NODE_SETTINGS)),
    Rule("SP-02", "Structured Streaming reads Kafka through the release's own connector",
         "Spark's Kafka source with a checkpointed file sink gives exactly-once output; "
         "connector jars of the same Spark build, installed with it, need no download at run "
         "time.",
         "Nothing to set: the spark_node role installs the jars (sha512 verified) and puts them "
         "on every class path.",
         DOCUMENTED_ONLY),
    Rule("SP-03", "The pipeline's cores match the topic's partitions",
         "Each partition is read by one task at a time, so cores beyond the partition count "
         "stay idle.",
         "Set spark_pipeline_cores_max to at most the topic's partitions, or raise the "
         "partitions.",
         DOCUMENTED_ONLY),
    Rule("SP-04", "One time zone, UTC, across the pipeline",
         "Event times, partition dates and Spark's session time zone must agree, or a record "
         "lands under another day.",
         "Nothing to set: drivers and executors run in UTC; write event times in UTC (ISO 8601).",
         DOCUMENTED_ONLY),
    Rule("SP-05", "A new pipeline reads its topic from the beginning",
         "The first run must see every record already in the topic; later runs resume from "
         "the checkpoint.",
         "Keep startingOffsets=earliest; remove the checkpoint only to reprocess everything.",
         DOCUMENTED_ONLY),
    Rule("SP-06", "One standalone Spark master",
         "kafkaform runs one master, which survives restarts through its recovery state.",
         "Keep one host in the spark_master group.",
         (PREFLIGHT,)),
    Rule("SP-07", "Every Spark node names the same shared directory",
         "The driver writes the checkpoint and commit log while executors on the workers write "
         "the data files: they must all see one filesystem.",
         "Set spark_node_shared_dir once, in group_vars/all, to the absolute path where a shared "
         "filesystem is mounted on every Spark node (not / or a temporary directory).",
         (PREFLIGHT,)),
    Rule("SP-08", "The pipeline's topic is declared (a warning)",
         "An undeclared topic does not exist until someone creates it, with partitions and a "
         "replication factor nobody chose.",
         "Declare spark_pipeline_topic in kafka_topics, or create it before the pipeline starts.",
         (PREFLIGHT,)),
    Rule("SP-09", "Spark workers restart one at a time, each registered again before the next",
         "A restarted worker ends its executors; restarting every worker at once stops every "
         "application's work until they all register again.",
         "Raise spark_node_register_timeout_s when a worker takes longer to register.",
         ("roles/spark_node/tasks/restart.yml",)),
    Rule("SP-10", "After a master's restart, every running application has executors again",
         "A worker that registers again while the master recovers its state can lose its "
         "executors to a race in the standalone master; the application keeps running with "
         "nothing to run its tasks until the worker restarts. Until the master's recovery "
         "ends, a worker still lists executors the master may yet kill, and just after it the "
         "master's first scheduling can still end one, so the check waits for the master to be "
         "ALIVE and for the same executors to be listed again some seconds later. A worker that "
         "lost an executor this way can keep counting its cores as used, so free cores are the "
         "master's count, and cores the master granted to an application no worker runs an "
         "executor of are lost as well.",
         "The roles restart the workers one at a time when this happens; run the play on the "
         "spark_worker group with the master, or restart spark-worker by hand.",
         ("roles/spark_node/tasks/service.yml",)),
    Rule("SP-11", "An executor of the pipeline fits on a worker",
         "The master places an executor only on a worker with that many free cores and that "
         "much free memory; when none has them, the application waits with no executor and "
         "reads nothing.",
         "Lower spark_pipeline_executor_cores or spark_pipeline_executor_memory_mb, or raise "
         "spark_node_worker_cores or spark_node_worker_memory_mb.",
         (PREFLIGHT, "roles/spark_pipeline/tasks/service.yml")),
    # Kernel
    Rule("OS-01", "TCP buffer maxima within the core socket maxima",
         "The kernel caps a socket's buffer at net.core.rmem_max and wmem_max; a larger "
         "tcp_rmem or tcp_wmem maximum is never used.",
         "Raise net.core.rmem_max / wmem_max or lower the tcp maximum in "
         "os_tuning_sysctl_overrides.",
         (PREFLIGHT,)),
    Rule("OS-02", "The background dirty ratio is below the dirty ratio",
         "Background writeback must start before writers are throttled, or flushes arrive as "
         "stalls.",
         "Keep vm.dirty_background_ratio below vm.dirty_ratio (5 and 60 by default).",
         (PREFLIGHT,)),
    Rule("OS-03", "vm.swappiness is 1, not 0",
         "With 0 the OOM killer may kill the broker before the kernel swaps anything; 1 swaps "
         "only under real pressure.",
         "Set vm.swappiness to 1.",
         (PREFLIGHT,)),
    Rule("OS-04", "Kernel settings are ones sysctl can write",
         "A key is a dotted sysctl name and a value one line; every setting the role sets by "
         "default is numeric (a number, or numbers separated by spaces), so another value is "
         "refused by the kernel on the host, half-way through the run.",
         "Give numbers (\"4096 65536 2048000\" for the TCP buffers) and sysctl names in "
         "os_tuning_sysctl_overrides.",
         (PREFLIGHT,)),
    # Data disks
    Rule("DF-01", "Data disks carry XFS, and kafkaform never formats over data",
         "XFS is the filesystem Kafka is tuned for; formatting a device that holds something "
         "else destroys it.",
         "Declare blank or XFS devices; set force_format: true on an entry only to erase that "
         "device on purpose.",
         ("roles/os_tuning/tasks/disks_check.yml", "roles/os_tuning/tasks/verify.yml")),
    Rule("DF-02", "Data disks are mounted with noatime and recorded in /etc/fstab by UUID",
         "Access-time updates turn reads into writes; device names may change across reboots, "
         "UUIDs do not.",
         "Nothing to set: the role always mounts with noatime; add options with "
         "os_tuning_mount_options or an entry's mount_options.",
         ("roles/os_tuning/tasks/verify.yml",)),
    Rule("DF-03", "Each data disk is declared once, with a mount point of its own and a purpose",
         "One mount per Kafka log directory (or the ZooKeeper transaction log) spreads the I/O; "
         "a device or mount point declared twice cannot work.",
         "Declare each disk once in os_tuning_data_disks as {device, mount, purpose}, with an "
         "absolute mount point and purpose kafka_log_dir or zookeeper_txn_log.",
         (PREFLIGHT, "roles/os_tuning/tasks/disks_check.yml")),
    # Open files
    Rule("FD-01", "Service users may open at least 100000 files",
         "A broker holds a file per log segment and index and a socket per connection; the usual "
         "default of 1024 runs out.",
         "Keep os_tuning_nofile_limit at 100000 or more.",
         (OS_TUNING_LIVE,)),
    Rule("FD-02", "The services' systemd units carry the limit (LimitNOFILE)",
         "limits.d applies to login sessions only; a systemd service takes its limit from its "
         "unit.",
         "Nothing to set: the kafka_broker and zookeeper roles write os_tuning_nofile_limit into "
         "their units.",
         (OS_TUNING_LIVE,)),
    Rule("FD-03", "The running services have the limit, soft and hard",
         "A unit that asks for a limit is no proof the process got it: the machine may cap it "
         "(a container's hard limit).",
         "Raise the machine's hard limit; the live-host tests accept the cap when the unit asks "
         "for the full value.",
         (OS_TUNING_LIVE,)),
    # JVM
    Rule("JV-02", "JVMs run G1 with a short pause-time goal",
         "A long collection pause stalls a broker's requests or expires a ZooKeeper session.",
         "Keep kafka_broker_gc_max_pause_ms and zookeeper_gc_max_pause_ms around 20 ms.",
         DOCUMENTED_ONLY),
    Rule("JV-03", "A fixed broker heap of about 5 GB on a 64 GB host",
         "Kafka serves reads from the page cache: memory given to the heap is taken from the "
         "cache; -Xms equal to -Xmx avoids resizing.",
         "Set kafka_broker_heap_mb (5120 by default; at least 128, for a lab only).",
         (BROKER_SETTINGS,)),
    Rule("JV-04", "No debugger or JMX options among the extra JVM options",
         "-agentlib:jdwp runs whatever code its port receives, and com.sun.management.jmxremote "
         "options bypass the password and TLS of the role's own JMX setting (SE-05).",
         "Remove them from kafka_broker_jvm_extra_opts, zookeeper_jvm_extra_opts and the "
         "defaultJavaOptions of spark_node_defaults_extra; for JMX set kafka_broker_jmx_enabled "
         "with kafka_broker_jmx_password.",
         (PREFLIGHT,)),
    # Security
    Rule("SE-01", "Every Kafka listener speaks TLS: clients SASL_SSL with SCRAM-SHA-512, brokers "
         "to each other over mutually authenticated TLS",
         "Anyone who reaches a plaintext listener reads, writes and deletes every topic; a "
         "loopback listener is no better, since every local user reaches it.",
         "Keep the default listeners; an extra listener (kafka_broker_extra_listeners) must use "
         "SSL or SASL_SSL.",
         (BROKER_SETTINGS, KAFKA_LIVE)),
    Rule("SE-02", "One certificate per host, signed by the cluster CA, with the host's names and "
         "addresses in its subject alternative names, renewed before it expires",
         "Clients and brokers verify the name they dialled against the certificate; an expired "
         "certificate stops every connection at once.",
         "Let kafkaform generate the CA on the control node (kafkaform_secrets_dir), or give your "
         "own with kafkaform_tls_ca_cert and kafkaform_tls_ca_key; tune "
         "kafkaform_tls_cert_validity_days and kafkaform_tls_renew_before_days.",
         (BROKER_SETTINGS, KAFKA_LIVE)),
    Rule("SE-03", "Authorization on: ACLs, no access without one, brokers and the declared admins "
         "as the only super users",
         "Without an authorizer any authenticated client can do anything, including deleting "
         "every topic.",
         "Declare kafka_users (with superuser: true for administrators) and kafka_acls for every "
         "application user.",
         (BROKER_SETTINGS, KAFKA_LIVE)),
    Rule("SE-04", "Services run as system users of their own, never root, without a login shell",
         "A compromised service can then touch only its own files.",
         "Keep kafka_broker_user, zookeeper_user and spark_node_user unprivileged users.",
         DOCUMENTED_ONLY),
    Rule("SE-05", "No JMX port without a password and TLS, loopback included",
         "An unauthenticated JMX port lets any local user run code as the service.",
         "Leave kafka_broker_jmx_enabled off and read metrics through an exporter; when you need "
         "remote JMX, set kafka_broker_jmx_password and kafkaform secures the port with it and "
         "the broker's certificate.",
         (BROKER_SETTINGS,)),
    Rule("SE-06", "Secrets never leave the control node except into files only the service reads",
         "A password in a log, a diff, a fact or a world-readable file is a published password.",
         "Give secrets through kafkaform_secrets and kafka_users from Ansible Vault, or let "
         "kafkaform generate them in kafkaform_secrets_dir.",
         (PREFLIGHT, USERS_AND_ACLS)),
    Rule("SE-07", "ZooKeeper accepts only authenticated sessions, and Kafka's znodes carry ACLs",
         "An anonymous session could otherwise rewrite Kafka's registry: brokers, topics, "
         "configurations and ACLs.",
         "Nothing to set: members enforce SASL DIGEST-MD5 and brokers run with "
         "zookeeper.set.acl=true.",
         (BROKER_SETTINGS, f"{_PKG}/verify/test_zookeeper.py")),
    Rule("SE-08", "ZooKeeper members authenticate each other",
         "Otherwise any host that reaches the quorum port can join the ensemble and serve its "
         "data.",
         "Nothing to set: quorum traffic requires SASL between members.",
         (ZOOKEEPER_SETTINGS, f"{_PKG}/verify/test_zookeeper.py")),
    Rule("SE-09", "Spark daemons and drivers authenticate each other and encrypt their RPC; their "
         "web UIs speak TLS",
         "An open standalone master runs any code anyone submits to it; a plain UI shows every "
         "application's settings and environment to anyone who can listen.",
         "Nothing to set: spark.authenticate and spark.network.crypto.enabled are on, with a "
         "generated secret, and spark.ssl.* serves every UI over TLS with the host's "
         "certificate.",
         DOCUMENTED_ONLY),
    Rule("SE-10", "A cluster built open is secured in place one step per run, each a rolling "
         "restart: TLS listeners beside the plaintext one, then replication over TLS and ACLs on "
         "the existing znodes, then no plaintext and ZooKeeper enforcing authentication",
         "Switched in one run, a restarted broker could not replicate from those still on "
         "plaintext, and a ZooKeeper member requiring logins would refuse the members and "
         "brokers that do not log in yet: the cluster would stop serving mid-roll.",
         "Set kafka_security_migration to plaintext_replication, run; to tls_replication, run; "
         "move the clients to the CLIENT listener; remove it, run. Each run refuses to skip a "
         "step.",
         (PREFLIGHT, f"{_PKG}/security_steps.py")),
    Rule("SE-11", "A cloud cluster's admin_cidrs never cover the whole Internet, alone or "
         "together",
         "SSH and ZooKeeper's client port are open to admin_cidrs; blocks that together cover "
         "0.0.0.0/0 or ::/0 (0.0.0.0/1 and 128.0.0.0/1, say) open them to anyone as surely as "
         "0.0.0.0/0 itself.",
         "List the administrators' networks (a VPN's or office's range) in admin_cidrs.",
         (CLOUD_SPEC,)),
    Rule("SE-12", "A cloud cluster's client_cidrs cover the whole Internet only when the spec "
         "says allow_public_clients: true",
         "Kafka's client port is open to client_cidrs; a public broker is a decision to take "
         "once and on purpose, not the side effect of a list of blocks that happen to add up "
         "to 0.0.0.0/0 or ::/0.",
         "List the clients' networks in client_cidrs, or set allow_public_clients: true in the "
         "spec when the brokers are meant to serve the Internet.",
         (CLOUD_SPEC,)),
    Rule("SE-13", "Every EBS volume kafkaform creates is encrypted",
         "Kafka's logs and ZooKeeper's transaction log hold the cluster's data; an unencrypted "
         "volume exposes them in every snapshot and to anyone who can attach it "
         "(https://docs.aws.amazon.com/ebs/latest/userguide/ebs-encryption.html).",
         "Nothing to set: volumes are created with Encrypted=true, under the spec's kms_key_id "
         "or the account's aws/ebs key. An unencrypted volume found by its tags is kept (its "
         "data is not lost) and reported by plan and up: copy its data onto an encrypted "
         "volume (an encrypted copy of a snapshot) and replace it by hand.",
         (CLOUD_PROVISION,)),
    Rule("SE-14", "Every instance kafkaform creates requires IMDSv2 session tokens",
         "With IMDSv1 a server-side request forgery on the host reads the instance role's "
         "credentials with one GET; IMDSv2 needs a PUT for a token, limited here to one hop "
         "(https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/"
         "configuring-instance-metadata-service.html).",
         "Nothing to set: instances are launched with HttpTokens=required and a hop limit of "
         "1. An instance found without it is reported by plan and up: require tokens with "
         "aws ec2 modify-instance-metadata-options --http-tokens required.",
         (CLOUD_PROVISION,)),
    Rule("SE-15", "Node exporter, Prometheus and Alertmanager speak TLS and answer only callers "
         "with a certificate from the cluster CA; their key is their own, not the host's",
         "A plain exporter or Prometheus tells anyone on the network which services run where, "
         "their versions, limits and errors; an exporter holding a broker's key would let "
         "whoever takes it over act as a super user of Kafka.",
         "Nothing to set: their web configuration (/etc/prometheus/web.yml) requires a client "
         "certificate, and each host's monitoring services get a certificate of their own from "
         "the cluster CA. To query Prometheus from elsewhere, present a certificate the cluster "
         "CA issued (curl --cacert trust.pem --cert cert.pem --key key.pem).",
         (MONITORING_LIVE,)),
    Rule("SE-16", "The secrets and private keys kafkaform keeps on the control node are "
         "encrypted at rest",
         "The secrets directory holds the cluster CA's key, every host's key and the passwords "
         "of the keystores and ZooKeeper logins: whoever reads it can impersonate any broker "
         "or sign certificates the whole cluster trusts.",
         "Give every run your Ansible Vault secret, as ansible-playbook takes it "
         "(--vault-password-file, --vault-id, --ask-vault-pass, ANSIBLE_VAULT_PASSWORD_FILE); "
         "kafkaform seals what it writes with it (Ansible Vault's format) and seals files an "
         "earlier release left in plain text. Plain text only with "
         "kafkaform_secrets_plaintext: true. Re-key with ansible-vault rekey (README, "
         "\"Secrets on the control node\").",
         ("playbooks/preflight.yml", f"{_PKG}/deploys/hosts.py")),
    Rule("SE-17", "Every TLS port offers TLS 1.2 or 1.3 with AEAD cipher suites only",
         "CBC suites (Lucky Thirteen and its kin) and static RSA key exchange (no forward "
         "secrecy) are what scanners and auditors flag first; Mozilla's \"intermediate\" "
         "configuration keeps every supported client while offering neither.",
         "Nothing to set: Kafka's listeners (ssl.cipher.suites, ssl.enabled.protocols), Spark's "
         "web UIs (spark.ssl.enabledAlgorithms) and the monitoring services (web.yml) get the "
         "one list of kafkaform/tls_policy.py; kafkaform verify --checks tls scans every port.",
         (f"{_PKG}/verify/test_tls.py",)),
    Rule("SE-18", "ZooKeeper's clients and members speak mutual TLS: brokers on the secure "
         "client port, members to each other, the plain client port on loopback only",
         "SASL authenticates ZooKeeper's sessions but does not encrypt them: anyone on the "
         "network reads Kafka's metadata, its ACLs and its users' SCRAM salts and iterations "
         "as they pass, and members' quorum traffic carries all of it too.",
         "Nothing to set on a new cluster: each member gets a certificate of its own from the "
         "cluster CA and serves zookeeper_secure_client_port; brokers connect there with their "
         "keystore. An ensemble that ran without TLS moves there in three runs: "
         "kafka_zookeeper_tls_migration offered, connecting, then unset (an open cluster takes "
         "them with kafka_security_migration's steps).",
         (PREFLIGHT, f"{_PKG}/security_steps.py", f"{_PKG}/verify/test_zookeeper.py")),
    # Monitoring
    Rule("MO-01", "ZooKeeper answers ruok with imok, and the ensemble has exactly one leader",
         "A running process is not a serving member; each run checks the quorum after it "
         "(re)starts anything.",
         "Read the member's journal (journalctl -u zookeeper); the run names the member that "
         "does not answer.",
         ("roles/zookeeper/tasks/verify.yml",)),
    Rule("MO-02", "Every broker is registered",
         "A broker that runs but is not registered in ZooKeeper takes no traffic.",
         "Read the broker's journal (journalctl -u kafka) and check that it reaches the "
         "ensemble.",
         ("roles/kafka_broker/tasks/verify.yml",)),
    Rule("MO-03", "Exactly one controller is active",
         "Without an active controller no partition leader can be elected.",
         "Check the brokers' sessions with ZooKeeper; the controller is re-elected once one "
         "holds a session.",
         ("roles/kafka_broker/tasks/verify.yml",)),
    Rule("MO-04", "No partition is under-replicated or offline",
         "An under-replicated partition has lost redundancy; an offline one is unavailable.",
         "Bring the missing brokers back; the run waits up to kafka_broker_restart_timeout_s "
         "for the replicas to catch up.",
         ("roles/kafka_broker/tasks/verify.yml",)),
    Rule("MO-10", "The OS settings are verified on the live hosts",
         "A file written is not a setting applied: containers and kernels may refuse or cap "
         "values.",
         "Run the live-host tests of os_tuning (verify/test_os_tuning.py, pytest-testinfra) "
         "against the hosts after a converge.",
         (OS_TUNING_LIVE,)),
    Rule("MO-05", "Prometheus on the monitoring hosts scrapes every host of the platform, whose "
         "exporters listen on the cluster address only",
         "A host nobody scrapes fails silently; an exporter bound to every interface publishes "
         "the host's internals to any network it is on.",
         "Put a host in the monitoring group and run playbooks/monitoring.yml; `kafkaform verify "
         "--checks monitoring` names the target that is not up.",
         (MONITORING_LIVE,)),
    Rule("MO-06", "Every alert carries a summary and a runbook line, and a test fires it",
         "An alert the on-call engineer cannot act on at 3 a.m. is noise; an alert rule never "
         "seen firing may never fire.",
         "Add the rule to templates/monitoring/alerts.yml.j2 with both annotations and a case in "
         "tests/promtool/alerts.test.yml (promtool test rules).",
         (ALERT_RULE_TESTS,)),
    Rule("MO-07", "Every broker and ZooKeeper member serves its metrics to Prometheus through the "
         "JMX exporter agent, on its cluster address, with a bounded set of series",
         "Under-replicated partitions, the active controller, the ensemble's leader, GC time and "
         "open files exist only inside the JVMs; the agent's rules keep names stable and leave "
         "out per-topic and per-client series, whose count grows with the cluster.",
         "Keep kafka_broker_metrics_enabled and zookeeper_metrics_enabled on; the agent jar comes "
         "from the mirror (kafkaform mirror build). `kafkaform verify --checks monitoring` names "
         "an agent that is not up or listens too wide.",
         ("templates/kafka_broker/jmx-exporter.yml.j2", "templates/zookeeper/jmx-exporter.yml.j2",
          MONITORING_LIVE)),
    Rule("MO-08", "Every host measures its services' memory maps and open files against their "
         "limits, and ZooKeeper's snapshots against the number its purge keeps",
         "A broker that runs out of memory maps dies, and the brokers of a balanced cluster run "
         "out at about the same time; descriptors run out under many partitions and connections; "
         "a purge that stopped lets snapshots fill ZooKeeper's disk. No exporter reports these.",
         "Keep the monitoring role on every host (playbooks/monitoring.yml): its "
         "kafkaform-process-metrics timer writes them for node exporter every minute, and "
         "`kafkaform verify --checks monitoring` names a running service Prometheus has no "
         "figures for.",
         ("templates/monitoring/kafkaform-process-metrics.j2", MONITORING_LIVE)),
    Rule("MO-09", "Spark's master and workers serve their metrics to Prometheus, and the "
         "pipeline reports each query's progress and how far it is behind the topic's end",
         "A worker the master lost takes its cores from the pipeline without stopping anything; "
         "a query that stalls or cannot keep up shows only in its progress events, which the "
         "driver keeps in memory.",
         "Keep the monitoring role on every host: Prometheus scrapes the master's and the "
         "workers' metrics over their web UIs' TLS ports, trusting the cluster CA, and the "
         "pipeline's listener writes its progress for kafkaform-process-metrics. `kafkaform "
         "verify --checks monitoring` names a Spark target that is not up and a running "
         "pipeline Prometheus has no progress of.",
         ("templates/monitoring/prometheus.yml.j2",
          "templates/monitoring/kafkaform-process-metrics.j2", MONITORING_LIVE)),
    Rule("MO-15", "No acknowledged message is lost in a rolling restart or when a broker is "
         "killed",
         "Controlled shutdown, acks=all and min.insync.replicas promise it; a drill under load "
         "shows it on the running cluster.",
         "Run benchmarks/kafka_drills.py against the cluster; it exits 1 on a lost message.",
         ("benchmarks/kafka_drills.py",)),
    # Operations
    Rule("OP-02", "Brokers restart one at a time, the active controller last, each waiting for "
         "a healthy cluster",
         "Two brokers down at once can take a partition below min.insync.replicas; restarting "
         "the controller last moves the controller once.",
         "Run playbooks/rolling_restart.yml for a restart on demand; raise "
         "kafka_broker_restart_timeout_s when catching up takes longer.",
         ("roles/kafka_broker/tasks/restart.yml",)),
    Rule("OP-03", "A service restarts when it runs an older configuration than its files, "
         "whatever ended the run that wrote them",
         "A run stopped between writing a file and restarting the service would leave it on the "
         "old configuration, and the next run, seeing no change, would never restart it.",
         "Nothing to do: the next run compares each service's start with its files' changes "
         "(kafkaform.platform.service_stale) and restarts it, health-gated.",
         ("roles/zookeeper/tasks/service.yml", "roles/kafka_broker/tasks/service.yml",
          "roles/spark_node/tasks/service.yml", "roles/spark_pipeline/tasks/service.yml")),
    # kafkaform
    Rule("KF-01", "Cluster-wide settings have one value",
         "The model reads each cluster setting from any host; different values on different "
         "hosts would give each host another cluster.",
         "Set kafka_cluster_name, kafka_default_replication_factor, kafka_min_insync_replicas "
         "and the other cluster settings once, in group_vars/all.",
         (PREFLIGHT,)),
    Rule("KF-02", "Every role input has a value its role can use",
         "A setting a role cannot render (a heap too small to start, a value spanning lines, a "
         "choice the role does not know) would fail on a host, or worse start a broken service.",
         "Correct the setting the finding names; each role's README lists its inputs, types "
         "and choices.",
         (PREFLIGHT,)),
    Rule("KF-03", "Every variable with a kafkaform prefix is one kafkaform reads",
         "A misspelt variable is ignored without a word: its role falls back to the default the "
         "operator meant to change. The prefixes are kafkaform_, kafka_, zookeeper_, os_tuning_, "
         "spark_node_ and spark_pipeline_.",
         "Rename it to the input the finding names, or remove it; a name that other tooling in "
         "the same inventory reads goes in kafkaform_other_variables.",
         (PREFLIGHT,)),
    Rule("KF-04", "No two services of a host bind the same port",
         "The second service to start would fail on a host, after the run has changed it; a "
         "port that is not a number in 1-65535 fails the same way.",
         "Give each service on the host its own ports (the finding names the settings).",
         (PREFLIGHT,)),
)

#: The catalogue by id.
RULES: dict[str, Rule] = {rule.id: rule for rule in CATALOGUE}


def cite(rule_id: str) -> str:
    """``rule_id`` itself, once it is known to be in the catalogue: what a check names."""
    if rule_id not in RULES:
        raise LookupError(f"rule {rule_id} is not in the catalogue (kafkaform/rules.py)")
    return rule_id


def _ordered() -> list[Rule]:
    order = list(PREFIXES)
    return sorted(RULES.values(), key=lambda r: (order.index(r.id[:2]), int(r.id[3:])))


def checker(path: str) -> str:
    """A short name for the code at ``path`` that checks a rule, for the summary table."""
    if path == PREFLIGHT:
        return "preflight"
    if path == TOPIC_PLAN:
        return "kafka_broker role"
    if path.startswith("roles/"):
        return f"{path.split('/')[1]} role"
    if "/plans/" in path:
        # A role's plan: both the role and its pyinfra deploy refuse by it.
        return f"{Path(path).stem} role"
    if "/contexts/" in path:
        # The preflight runs each role's input checks (checks.role_inputs) before any host.
        return f"preflight ({Path(path).stem} inputs)"
    if "/verify/" in path:
        return "live-host tests"
    if path.startswith("benchmarks/"):
        return "drills"
    if "/cloud/" in path:
        return "kafkaform cloud"
    return path


def _anchor(rule_id: str) -> str:
    return f"#{rule_id.lower()}"


def render() -> str:
    """RULES.md: a summary table, then every rule by area with why, how to meet it and what
    checks it."""
    from .role_docs import markdown_text, wrap

    def md(text: str) -> str:
        # Rule ids in the text link to their entries.
        return ID_PATTERN.sub(lambda m: f"[{m[0]}]({_anchor(m[0])})", markdown_text(text))

    rules = _ordered()
    lines = [
        "<!-- Generated from plugins/plugin_utils/kafkaform/rules.py: edit that, then run "
        "`python -m kafkaform.rules`. -->",
        "",
        "# Rules",
        "",
        wrap("Every rule id the code, the roles and this repository's documents cite is defined "
             "here. A check that finds a rule broken names its id, what is wrong and how to fix "
             "it. *Checked by* names the code that reports a violation: the preflight "
             "(`kafkaform check`, `playbooks/preflight.yml`) before any host is touched, a "
             "role's check before it changes a host or its verification after, a live-host test "
             "or a drill. A rule marked *documented only* is applied by the roles' defaults, "
             "templates and tasks, and no check reports a violation."),
        "",
        "| Rule | What it asks | Checked by |",
        "| --- | --- | --- |",
    ]
    for rule in rules:
        where = ", ".join(dict.fromkeys(checker(p) for p in rule.checked_by))
        lines.append(f"| [{rule.id}]({_anchor(rule.id)}) | {md(rule.title)} | "
                     f"{where or '*documented only*'} |")
    lines.append("")
    for prefix, area in PREFIXES.items():
        in_area = [r for r in rules if r.id.startswith(prefix + "-")]
        if not in_area:
            continue
        lines += [f"## {prefix}: {area}", ""]
        for rule in in_area:
            lines += [f"### {rule.id}", "", wrap(f"**{md(rule.title)}.**"), "",
                      wrap(f"**Why.** {md(rule.why)}"), "", wrap(f"**Fix.** {md(rule.fix)}"), ""]
            if rule.enforced:
                links = ", ".join(f"[`{p}`]({p})" for p in rule.checked_by)
                lines += [wrap(f"**Checked by** {links}."), ""]
            else:
                lines += ["*Documented only*: no check reports a violation.", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    from .paths import collection_root

    parser = argparse.ArgumentParser(prog="python -m kafkaform.rules",
                                     description="Write RULES.md from the rule catalogue.")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when RULES.md differs from the catalogue")
    parser.add_argument("--output", type=Path, default=None,
                        help="the file to write or check (default: RULES.md at the collection "
                        "root)")
    args = parser.parse_args(argv)
    output: Path = args.output or collection_root() / "RULES.md"
    text = render()
    current = output.read_text() if output.is_file() else None
    if args.check:
        if current != text:
            print(f"{output} is out of date: run python -m kafkaform.rules", file=sys.stderr)
            return 1
        return 0
    if current != text:
        output.write_text(text)
        print(f"wrote {output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
