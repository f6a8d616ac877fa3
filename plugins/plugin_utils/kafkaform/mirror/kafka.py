"""Kafka's release layouts (Kafka 3 and Kafka 4): libs/ from Maven, bin/ and config/ from
files/kafka/."""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from ..catalog import Component, kafka_major, release_key
from .archive import Member, Recipe, file_member, jar_entry, text_member
from .common import MirrorError, release_text
from .maven import resolved_version_of

#: Kafka 4's POMs declare log4j-core but not the SLF4J binding its release ships in libs/:
#: without it the broker logs nothing. Per Kafka 4 release, the log4j version its POM resolves,
#: which the binding must match.
KAFKA4_LOG4J = {"4.1.2": "2.25.3", "4.4.0": "2.25.5"}


def kafka4_slf4j_binding(version: str) -> str:
    """The Maven coordinate of the SLF4J binding a Kafka 4 release ships."""
    if version not in KAFKA4_LOG4J:
        raise MirrorError(
            f"kafka {version}: no log4j version for its SLF4J binding; add the log4j-core"
            " version its POM resolves to KAFKA4_LOG4J in kafkaform/mirror/kafka.py")
    return f"org.apache.logging.log4j:log4j-slf4j-impl:{KAFKA4_LOG4J[version]}"


def kafka_roots(component: Component) -> list[str]:
    """Maven roots of the Kafka release's libs/: the broker and the command-line tools (and on
    Kafka 4 the logging binding)."""
    four = kafka_major(component.version) >= 4
    return [
        f"org.apache.kafka:kafka_2.13:{component.version}",
        f"org.apache.kafka:kafka-tools:{component.version}",
        *([kafka4_slf4j_binding(component.version)] if four else []),
    ]


def check_kafka_binding(component: Component, jars: Sequence[Path]) -> None:
    """Kafka 4: the SLF4J binding and the log4j-core it binds to are one log4j release."""
    if kafka_major(component.version) < 4:
        return
    core = resolved_version_of("log4j-core", jars)
    binding = kafka4_slf4j_binding(component.version).rsplit(":", 1)[1]
    if core is None or core.name != f"log4j-core-{binding}.jar":
        raise MirrorError(
            f"kafka {component.version}: its POM resolves {core.name if core else 'no log4j-core'}"
            f" but the SLF4J binding is {binding}; set its entry in KAFKA4_LOG4J in"
            " kafkaform/mirror/kafka.py to the same log4j version"
        )


#: bin/ script → main class, as the release's scripts call them (TOOLS-FACTS section 1).
KAFKA_SCRIPTS = {
    "kafka-server-start.sh": "kafka.Kafka",
    "kafka-topics.sh": "org.apache.kafka.tools.TopicCommand",
    "kafka-configs.sh": "kafka.admin.ConfigCommand",
    "kafka-console-producer.sh": "kafka.tools.ConsoleProducer",
    "kafka-console-consumer.sh": "org.apache.kafka.tools.consumer.ConsoleConsumer",
    "kafka-verifiable-producer.sh": "org.apache.kafka.tools.VerifiableProducer",
    "kafka-verifiable-consumer.sh": "org.apache.kafka.tools.VerifiableConsumer",
    "kafka-producer-perf-test.sh": "org.apache.kafka.tools.ProducerPerformance",
    "kafka-consumer-perf-test.sh": "org.apache.kafka.tools.ConsumerPerformance",
    "kafka-leader-election.sh": "org.apache.kafka.tools.LeaderElectionCommand",
    "kafka-reassign-partitions.sh": "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
    "kafka-get-offsets.sh": "org.apache.kafka.tools.GetOffsetShell",
    "kafka-dump-log.sh": "kafka.tools.DumpLogSegments",
    "zookeeper-shell.sh": "org.apache.zookeeper.ZooKeeperMainWithTlsSupportForKafka -server",
    "zookeeper-server-start.sh": "org.apache.zookeeper.server.quorum.QuorumPeerMain",
}

#: Kafka 4's bin/ scripts: the ZooKeeper ones are gone, tools moved from kafka.* to
#: org.apache.kafka.tools, and the KRaft tools kafkaform runs are there too.
KAFKA4_SCRIPTS = {
    **{script: main for script, main in KAFKA_SCRIPTS.items()
       if not script.startswith("zookeeper")},
    "kafka-console-producer.sh": "org.apache.kafka.tools.ConsoleProducer",
    "kafka-acls.sh": "org.apache.kafka.tools.AclCommand",
    "kafka-storage.sh": "kafka.tools.StorageTool",
    "kafka-metadata-quorum.sh": "org.apache.kafka.tools.MetadataQuorumCommand",
    "kafka-features.sh": "org.apache.kafka.tools.FeatureCommand",
}

#: The tools Kafka 4 moved to org.apache.kafka.tools after 4.0, by the release line that moved
#: them: each release's scripts call the classes of its own line and the ones before.
KAFKA4_MOVED_TOOLS = {
    (4, 3): {"kafka-dump-log.sh": "org.apache.kafka.tools.DumpLogSegments"},
    (4, 4): {"kafka-configs.sh": "org.apache.kafka.tools.ConfigCommand"},
}


def kafka_scripts(version: str) -> dict[str, str]:
    """The release's bin/ scripts and the main class each one runs."""
    if kafka_major(version) < 4:
        return KAFKA_SCRIPTS
    scripts = dict(KAFKA4_SCRIPTS)
    for line, moved in KAFKA4_MOVED_TOOLS.items():
        if release_key(version)[:2] >= line:
            scripts.update(moved)
    return scripts


def kafka_main_class(version: str, script: str) -> str:
    """The main class ``script`` (kafka-configs.sh) of Kafka ``version`` runs."""
    return kafka_scripts(version)[script]


def client_config_option(version: str, old: str) -> str:
    """The option Kafka ``version``'s client tools (ConsoleConsumer, VerifiableProducer) read
    their client configuration from: Kafka 4.2 gave them all ``--command-config`` (KIP-1147) and
    deprecates ``old`` (``--consumer.config``) with a warning on standard output."""
    return "--command-config" if release_key(version)[:2] >= (4, 2) else old


def check_main_classes(component: Component, scripts: dict[str, str],
                       jars: Sequence[Path]) -> None:
    """Every script's main class is in the release's jars: a class moved by a new release
    fails the build here rather than on the hosts."""
    classes: set[str] = set()
    for jar in jars:
        if jar.name.startswith(("kafka", "zookeeper")):
            with zipfile.ZipFile(jar) as archive:
                classes.update(name[:-len(".class")].replace("/", ".")
                               for name in archive.namelist() if name.endswith(".class"))
    missing = {script: main.split()[0] for script, main in scripts.items()
               if main.split()[0] not in classes}
    if missing:
        raise MirrorError(
            f"kafka {component.version}: no class {', '.join(sorted(set(missing.values())))} in"
            f" its jars for {', '.join(sorted(missing))}; name the class the release moved it to"
            " in KAFKA4_MOVED_TOOLS in kafkaform/mirror/kafka.py")


#: The scripts' texts take the release's logging option where they read @LOGGING@ (log4j 1.x
#: properties on Kafka 3, log4j2 YAML on Kafka 4): see :func:`kafka_layout`.
LOGGING = "@LOGGING@"

#: Each line's config/: file name → its text under files/, in the order the recipe hashes them.
#: files/kafka/bin/ and config/ hold what both lines share, 3/ and 4/ what only one line has
#: (.yamllint leaves files/ alone: they are the release's texts, not the repository's YAML).
KAFKA3_CONFIG = {
    "server.properties": "kafka/3/config/server.properties",
    "zookeeper.properties": "kafka/3/config/zookeeper.properties",
    "log4j.properties": "kafka/3/config/log4j.properties",
    "tools-log4j.properties": "kafka/3/config/tools-log4j.properties",
    "producer.properties": "kafka/config/producer.properties",
    "consumer.properties": "kafka/config/consumer.properties",
}
KAFKA4_CONFIG = {
    "server.properties": "kafka/4/config/server.properties",
    "log4j2.yaml": "kafka/4/config/log4j2.yaml",
    "tools-log4j2.yaml": "kafka/4/config/tools-log4j2.yaml",
    "producer.properties": "kafka/config/producer.properties",
    "consumer.properties": "kafka/config/consumer.properties",
}


@dataclass(frozen=True)
class KafkaLayout:
    """What a Kafka line's archive holds besides its jars: bin/ scripts, config/ files."""

    scripts: dict[str, str]
    run_class: str
    server_start: str
    server_stop: str
    config: dict[str, str]

    def digest(self) -> str:
        """A digest of every generated file: the recipe changes when one does."""
        return hashlib.sha256(json.dumps(
            [self.scripts, self.run_class, self.server_start, self.server_stop, self.config]
        ).encode()).hexdigest()  # fmt: skip


def kafka_layout(component: Component) -> KafkaLayout:
    """Kafka 3's layout (reload4j, log4j 1.x files), or Kafka 4's (log4j2 YAML files)."""
    run_class = release_text("kafka/bin/kafka-run-class.sh")
    server_start = release_text("kafka/bin/kafka-server-start.sh")
    server_stop = release_text("kafka/bin/kafka-server-stop.sh")
    scripts = kafka_scripts(component.version)
    if kafka_major(component.version) < 4:
        config, option = KAFKA3_CONFIG, "-Dlog4j.configuration=file:{}"
        tools_log, server_log = "tools-log4j.properties", "log4j.properties"
    else:
        config, option = KAFKA4_CONFIG, "-Dlog4j2.configurationFile={}"
        tools_log, server_log = "tools-log4j2.yaml", "log4j2.yaml"
    return KafkaLayout(
        scripts,
        run_class.replace(LOGGING, option.format(f"$base_dir/config/{tools_log}")),
        server_start.replace(LOGGING, option.format(f"$base_dir/../config/{server_log}")),
        server_stop,
        {name: release_text(path) for name, path in config.items()})


def kafka_members(component: Component, jars: Sequence[Path]) -> list[Member]:
    """The Kafka release layout: bin/, config/, libs/ (+ LICENSE/NOTICE from the kafka jar)."""
    layout = kafka_layout(component)
    check_kafka_binding(component, jars)
    check_main_classes(component, layout.scripts, jars)
    members = [file_member(f"libs/{jar.name}", jar, executable=False) for jar in jars]
    members.append(text_member("bin/kafka-run-class.sh", layout.run_class, executable=True))
    members.append(text_member("bin/kafka-server-start.sh", layout.server_start, executable=True))
    members.append(text_member("bin/kafka-server-stop.sh", layout.server_stop, executable=True))
    for script, main in layout.scripts.items():
        if script == "kafka-server-start.sh":
            continue
        body = f'#!/usr/bin/env bash\nexec "$(dirname "$0")/kafka-run-class.sh" {main} "$@"\n'
        members.append(text_member(f"bin/{script}", body, executable=True))
    for name, text in layout.config.items():
        members.append(text_member(f"config/{name}", text))
    core = next((jar for jar in jars if jar.name == f"kafka_2.13-{component.version}.jar"), None)
    if core is not None:
        for entry, name in (("LICENSE", "LICENSE"), ("NOTICE", "NOTICE")):
            data = jar_entry(core, entry) or jar_entry(core, f"META-INF/{entry}")
            if data is not None:
                members.append(Member(name, data=data))
    return members


def kafka_recipe(component: Component) -> Recipe:
    """Recipe of the Kafka archive: catalog entry, Maven roots and the generated files."""
    files = kafka_layout(component).digest()
    inputs = {"component": asdict(component), "maven": kafka_roots(component), "files": files}
    return Recipe(component.dist_path, inputs)
