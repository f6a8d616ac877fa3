"""The artifact mirror: release archives rebuilt from Maven and Python packages, served over HTTP.

    kafkaform mirror build [--dir DIR] [--only NAME]   assemble the archives of the catalog
    kafkaform mirror serve [--dir DIR] [--bind ADDR] [--port N]

Apache download sites are unreachable from the build machines, so the mirror re-assembles each
release archive with the official internal layout from what is reachable: Kafka and ZooKeeper
from their jars (dependency closure resolved by Maven through the repositories it is configured
for, Maven Central by default), Spark from the `pyspark` sdist (which carries Spark's jars/, bin/
and python/lib/) that pip downloads from its configured index. Archives sit under the same
paths as under https://archive.apache.org/dist/ (see kafkaform.catalog), each with a `.sha512`
next to it, so roles take the mirror URL as a drop-in replacement for the Apache dist root.

The parts: archive (members, reproducible tarballs, the manifest, publishing), maven (resolving
jars), kafka, zookeeper and spark (each release's layout; the scripts and configuration files it
adds are under files/), build (the whole catalog) and cli (the two commands).
"""

from __future__ import annotations

from .archive import (
    DEFAULT_EPOCH,
    MANIFEST,
    Manifest,
    Member,
    Recipe,
    check_layout,
    extract_safely,
    file_member,
    publish,
    text_member,
    write_tarball,
)
from .build import default_mirror_dir
from .cli import add_commands, handle_build, handle_serve
from .common import MirrorError, run_tool
from .kafka import (
    KAFKA4_LOG4J,
    kafka4_slf4j_binding,
    kafka_layout,
    kafka_main_class,
    kafka_members,
    kafka_recipe,
    kafka_roots,
)
from .maven import (
    CENTRAL_MIRROR_ID,
    CENTRAL_MIRROR_OF,
    SUPER_POM_ENTRY,
    maven_pom,
    maven_settings_args,
    parse_maven_home,
    resolved_version_of,
)
from .spark import spark_members
from .zookeeper import zookeeper_members

__all__ = [
    "CENTRAL_MIRROR_ID",
    "CENTRAL_MIRROR_OF",
    "DEFAULT_EPOCH",
    "KAFKA4_LOG4J",
    "MANIFEST",
    "SUPER_POM_ENTRY",
    "Manifest",
    "Member",
    "MirrorError",
    "Recipe",
    "add_commands",
    "check_layout",
    "default_mirror_dir",
    "extract_safely",
    "file_member",
    "handle_build",
    "handle_serve",
    "kafka4_slf4j_binding",
    "kafka_layout",
    "kafka_main_class",
    "kafka_members",
    "kafka_recipe",
    "kafka_roots",
    "maven_pom",
    "maven_settings_args",
    "parse_maven_home",
    "publish",
    "resolved_version_of",
    "run_tool",
    "spark_members",
    "text_member",
    "write_tarball",
    "zookeeper_members",
]
