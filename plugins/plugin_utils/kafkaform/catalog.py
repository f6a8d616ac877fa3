"""The one catalog of what kafkaform installs: each component's version, archive and where it lives.

Every path here is relative to the Apache distribution root (https://archive.apache.org/dist/).
The artifact mirror (`kafkaform mirror build`) writes its archives under the same relative paths,
so a mirror URL is a drop-in replacement for the Apache dist root: roles only ever join
`<root>/<dist_path>`.

Versions were chosen against what exists on Maven Central and PyPI, since Apache download sites
are unreachable from the build machines:

* Kafka 3.9.2: newest 3.9.x of `org.apache.kafka:kafka_2.13` (3.9 is the last line with ZooKeeper).
  What a new cluster runs, in ZooKeeper or KRaft mode.
* Kafka 3.9.1: the 3.9 patch before; the mirror carries it so a cluster on it takes the patch
  upgrade to 3.9.2 in a run (a rolling restart, ZooKeeper or KRaft mode alike).
* Kafka 4.4.0: newest 4.x of `org.apache.kafka:kafka_2.13`, the release a cluster upgrades to
  once it runs in KRaft mode (4.x has no ZooKeeper mode). Kafka's upgrade notes take KRaft
  clusters from 3.3 and later straight to the newest 4.x
  (https://kafka.apache.org/43/getting-started/upgrade/ for 4.3, the same for 4.4); the mirror
  carries the releases, so the upgrade is a version raised in the inventory.
* Kafka 4.1.2: what KRaft clusters upgraded to before; the mirror keeps it, so they go on to
  4.4.0 in a run, the 4.x to 4.y upgrade.
* ZooKeeper 3.9.5: newest 3.9.x of `org.apache.zookeeper:zookeeper` whose dependencies resolve
  (3.9.6's do not). What a new ensemble runs. Kafka 3.9.2's own POM pins the 3.8.4 client, which
  a 3.9 ensemble serves (ZooKeeper keeps its client protocol across 3.x).
* ZooKeeper 3.8.4: what ensembles built before ran; the mirror carries it, so they upgrade to
  3.9.5 in a run, one member at a time.
* Spark 4.2.0: the newest 4.x whose whole Kafka connector is on Maven Central (pyspark and
  spark-core go up to 4.3.0, but `spark-sql-kafka-0-10_2.13` and
  `spark-token-provider-kafka-0-10_2.13` stop at 4.2.0 there). What a new cluster runs.
* Spark 4.0.0: what Spark nodes ran before; the mirror carries it, so they upgrade to 4.2.0 in a
  run, the pipeline resuming from its own checkpoints (`Compatible.resumes_checkpoints_of`).
* The Spark Kafka connector jars: the versions each Spark release's POMs declare (4.2.0:
  kafka-clients 3.9.2, commons-pool2 2.13.1; 4.0.0: kafka-clients 3.9.0, commons-pool2 2.12.0).
  `kafkaform mirror build` re-resolves them with Maven and fails if they drift.
* The Prometheus JMX exporter java agent 1.0.1 (`io.prometheus.jmx:jmx_prometheus_javaagent`), on
  every broker and ZooKeeper member. ZooKeeper's own Prometheus metrics provider is not used: it is
  published on Maven Central for 3.8.3 and 3.9.x but not for 3.8.4, the release Kafka pins.
  Neither it nor the connector jars exist under the Apache dist root, so both come from a mirror.
* kafka-python 3.0.12 (PyPI, a pure-Python wheel for every CPython 3.8 and later): the admin
  client of the brokers' admin helper (topics, configs, SCRAM users, ACLs, elections, health),
  one process and one connection a run instead of one JVM a question. Its sha256 is pinned here,
  as PyPI lists it; the mirror refuses any other bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

#: Official Apache distribution root: where roles download from when the inventory names no
#: mirror (kafkaform_apache_mirror_url). The mirror replaces exactly this prefix.
APACHE_DIST_ROOT = "https://archive.apache.org/dist/"

#: Scala binary version of the Kafka and Spark builds (both must agree for the connector).
SCALA_BINARY_VERSION = "2.13"


def join_url(root: str, path: str) -> str:
    """Join a distribution root and a relative path with exactly one slash between them."""
    return root.rstrip("/") + "/" + path.lstrip("/")


class Published:
    """Published under a distribution root at ``dist_path``, with a ``.sha512`` beside it."""

    __slots__ = ()
    dist_path: str

    def url_on(self, root: str) -> str:
        """URL under a dist root: Apache's or a mirror's."""
        return join_url(root, self.dist_path)

    @property
    def sha512_path(self) -> str:
        """Path of the `.sha512` file relative to the dist root."""
        return self.dist_path + ".sha512"


@dataclass(frozen=True, slots=True)
class Component(Published):
    """One installable release archive, as published (or mirrored) under the Apache dist root.

    Attributes:
        name: short name used by roles and the CLI (`kafka`, `zookeeper`, `spark`).
        version: upstream release version.
        archive: file name of the release archive.
        top_dir: the single top-level directory every archive member lives under.
        dist_path: path of the archive relative to the Apache dist root.
    """

    name: str
    version: str
    archive: str
    top_dir: str
    dist_path: str

    @property
    def url(self) -> str:
        """Official Apache URL of the archive."""
        return self.url_on(APACHE_DIST_ROOT)

    @property
    def sha512_url(self) -> str:
        """Official Apache URL of the archive's `.sha512` file."""
        return self.url + ".sha512"

    @property
    def keys_path(self) -> str:
        """The project's KEYS file (its release managers' public keys) relative to the dist
        root, in the project's directory: `kafka/KEYS`."""
        return self.dist_path.split("/", 1)[0] + "/KEYS"


@dataclass(frozen=True, slots=True)
class MavenJar(Published):
    """A jar taken as-is from a Maven repository and published in the mirror at `dist_path`.

    Attributes:
        group: Maven groupId.
        artifact: Maven artifactId.
        version: Maven version.
        dist_path: where the mirror publishes the jar, relative to the dist root.
    """

    group: str
    artifact: str
    version: str
    dist_path: str

    @property
    def file_name(self) -> str:
        """Jar file name as Maven names it."""
        return f"{self.artifact}-{self.version}.jar"

    @property
    def coordinate(self) -> str:
        """`group:artifact:version`, as Maven and `spark-submit --packages` take it."""
        return f"{self.group}:{self.artifact}:{self.version}"


@dataclass(frozen=True, slots=True)
class PythonWheel(Published):
    """A wheel taken as-is from the Python package index and published in the mirror at
    `dist_path`.

    Attributes:
        project: the project's name on the index.
        version: its version.
        sha256: the wheel's sha256 as the index lists it; pip checks the download against it.
        dist_path: where the mirror publishes the wheel, relative to the dist root.
    """

    project: str
    version: str
    sha256: str
    dist_path: str

    @property
    def file_name(self) -> str:
        """The wheel's file name."""
        return self.dist_path.rsplit("/", 1)[-1]

    @property
    def requirement(self) -> str:
        """The pinned requirement pip downloads: `project==version --hash=sha256:...`."""
        return f"{self.project}=={self.version} --hash=sha256:{self.sha256}"


@dataclass(frozen=True, slots=True)
class Catalog:
    """Every component kafkaform installs, the jars Spark needs to talk to Kafka and the metrics
    agent of the JVMs."""

    kafka: Component
    kafka_previous: Component
    kafka_upgrade: Component
    kafka_upgrade_previous: Component
    zookeeper: Component
    zookeeper_previous: Component
    spark: Component
    spark_previous: Component
    #: Each Spark release's Kafka connector jars, by the Spark version.
    spark_kafka_connectors: dict[str, tuple[MavenJar, ...]]
    jmx_exporter: MavenJar
    admin_client: PythonWheel

    @property
    def components(self) -> tuple[Component, ...]:
        """The release archives, in build order (smallest first)."""
        return (self.zookeeper, self.zookeeper_previous, self.kafka, self.kafka_previous,
                self.kafka_upgrade, self.kafka_upgrade_previous, self.spark, self.spark_previous)

    def component(self, name: str) -> Component:
        """Look a component up by name (the version a new cluster gets); raise KeyError listing
        the known names."""
        for item in self.components:
            if item.name == name:
                return item
        known = ", ".join(dict.fromkeys(c.name for c in self.components))
        raise KeyError(f"unknown component {name!r}; the catalog has: {known}")


def kafka(version: str, scala: str = SCALA_BINARY_VERSION) -> Component:
    """Kafka binary release `kafka_<scala>-<version>.tgz`."""
    base = f"kafka_{scala}-{version}"
    return Component("kafka", version, f"{base}.tgz", base, f"kafka/{version}/{base}.tgz")


def zookeeper(version: str) -> Component:
    """ZooKeeper binary release `apache-zookeeper-<version>-bin.tar.gz`."""
    base = f"apache-zookeeper-{version}-bin"
    path = f"zookeeper/zookeeper-{version}/{base}.tar.gz"
    return Component("zookeeper", version, f"{base}.tar.gz", base, path)


def spark(version: str) -> Component:
    """Spark binary release built for Hadoop 3 (Spark 4 only ships Scala 2.13)."""
    base = f"spark-{version}-bin-hadoop3"
    return Component("spark", version, f"{base}.tgz", base, f"spark/spark-{version}/{base}.tgz")


def spark_connector_jar(spark_version: str, group: str, artifact: str, version: str) -> MavenJar:
    """A Spark Kafka connector jar, published next to the Spark archive under `connector/`."""
    path = f"spark/spark-{spark_version}/connector/{artifact}-{version}.jar"
    return MavenJar(group, artifact, version, path)


def spark_kafka_connector(spark_version: str, kafka_clients: str,
                          commons_pool2: str) -> tuple[MavenJar, ...]:
    """The Kafka connector of a Spark release: its two Spark modules and the two jars they need
    that Spark's jars/ lacks, at the versions the release's POM declares."""
    return (
        spark_connector_jar(spark_version, "org.apache.spark", "spark-sql-kafka-0-10_2.13",
                            spark_version),
        spark_connector_jar(spark_version, "org.apache.spark",
                            "spark-token-provider-kafka-0-10_2.13", spark_version),
        spark_connector_jar(spark_version, "org.apache.kafka", "kafka-clients", kafka_clients),
        spark_connector_jar(spark_version, "org.apache.commons", "commons-pool2", commons_pool2),
    )


def maven_jar(group: str, artifact: str, version: str) -> MavenJar:
    """A jar published in the mirror under `maven/`, in Maven's own repository layout."""
    path = f"maven/{group.replace('.', '/')}/{artifact}/{version}/{artifact}-{version}.jar"
    return MavenJar(group, artifact, version, path)


def pure_python_wheel(project: str, version: str, sha256: str) -> PythonWheel:
    """A pure-Python wheel (``py3-none-any``), published in the mirror under `python/`."""
    name = f"{project.replace('-', '_')}-{version}-py3-none-any.whl"
    return PythonWheel(project, version, sha256, f"python/{name}")


#: Each component's archive for any version, by name (roles may pin another version).
RELEASES: dict[str, Callable[[str], Component]] = {
    "kafka": kafka,
    "zookeeper": zookeeper,
    "spark": spark,
}

KAFKA_VERSION = "3.9.2"
KAFKA_PREVIOUS_VERSION = "3.9.1"
KAFKA_UPGRADE_VERSION = "4.4.0"
KAFKA_UPGRADE_PREVIOUS_VERSION = "4.1.2"
ZOOKEEPER_VERSION = "3.9.5"
ZOOKEEPER_PREVIOUS_VERSION = "3.8.4"
SPARK_VERSION = "4.2.0"
SPARK_PREVIOUS_VERSION = "4.0.0"
JMX_EXPORTER_VERSION = "1.0.1"
KAFKA_PYTHON_VERSION = "3.0.12"

CATALOG = Catalog(
    kafka=kafka(KAFKA_VERSION),
    kafka_previous=kafka(KAFKA_PREVIOUS_VERSION),
    kafka_upgrade=kafka(KAFKA_UPGRADE_VERSION),
    kafka_upgrade_previous=kafka(KAFKA_UPGRADE_PREVIOUS_VERSION),
    zookeeper=zookeeper(ZOOKEEPER_VERSION),
    zookeeper_previous=zookeeper(ZOOKEEPER_PREVIOUS_VERSION),
    spark=spark(SPARK_VERSION),
    spark_previous=spark(SPARK_PREVIOUS_VERSION),
    # What `spark-sql-kafka-0-10_2.13` needs beyond Spark's own jars/ (spark-sql is `provided`,
    # scala-parallel-collections is in jars/); versions as each release's POM declares them
    # (kafka.version, commons-pool2.version).
    spark_kafka_connectors={
        SPARK_VERSION: spark_kafka_connector(SPARK_VERSION, kafka_clients="3.9.2",
                                             commons_pool2="2.13.1"),
        SPARK_PREVIOUS_VERSION: spark_kafka_connector(SPARK_PREVIOUS_VERSION,
                                                      kafka_clients="3.9.0",
                                                      commons_pool2="2.12.0"),
    },
    jmx_exporter=maven_jar("io.prometheus.jmx", "jmx_prometheus_javaagent", JMX_EXPORTER_VERSION),
    admin_client=pure_python_wheel(
        "kafka-python", KAFKA_PYTHON_VERSION,
        "67add72052e3ad0c37ed9963ebe2b1696adc7f063c64eaf19862c21b69a64a18"),
)


@dataclass(frozen=True, slots=True)
class Compatible:
    """A release the catalog knows and what it is known to run with: the preflight refuses any
    other release, and any other combination (KF-05).

    Attributes:
        name: the component (`kafka`, `zookeeper`, `spark`).
        version: the release.
        java: the Java releases it runs on (Debian's openjdk-N packages).
        modes: Kafka's metadata modes it runs in.
        zookeeper_lines: Kafka in ZooKeeper mode: the ZooKeeper release lines (major.minor) of
            the ensemble it is run with.
        kafka_lines: Spark: the Kafka release lines (major.minor) of the brokers its Kafka
            connector is run with.
        resumes_checkpoints_of: Spark: the other releases whose Structured Streaming
            checkpoints it resumes (the pipeline's upgrade drill runs each); a checkpoint written
            by any other release is refused before a Spark node changes (SP-12).
    """

    name: str
    version: str
    java: tuple[int, ...]
    modes: tuple[str, ...] = ()
    zookeeper_lines: tuple[str, ...] = ()
    kafka_lines: tuple[str, ...] = ()
    resumes_checkpoints_of: tuple[str, ...] = ()


#: Every release the catalog knows, and what it runs with. Java: Kafka 3.9 runs on Java 11, 17
#: and 21, Kafka 4 brokers on 17 and 21 (https://kafka.apache.org/documentation/#java); ZooKeeper
#: 3.8 and 3.9 on 8, 11, 17 and later LTS releases (their administrator's guide, "Required
#: Software");
#: Spark 4 on 17 and 21 (https://spark.apache.org/docs/4.2.0/#downloading). The lines each
#: release is run with are the ones the suite's scenarios and drills run it with: Kafka 3.9.2 on
#: ZooKeeper 3.9, and on 3.8 (its own POM's client) until the ensemble's upgrade, the pipeline's
#: connectors (kafka-clients 3.9.2 and 3.9.0) on brokers 3.9 and, after the upgrade drills, 4.1
#: and 4.4. Checkpoints go forward only: Spark 4.2 reads the offset log versions 1 and 2 and the
#: commit log versions 1 to 3, Spark 4.0 only version 1 of each (their OffsetSeqLog and CommitLog
#: classes), so nothing resumes a checkpoint of a newer release.
COMPATIBLE: tuple[Compatible, ...] = (
    Compatible("kafka", KAFKA_VERSION, java=(11, 17, 21), modes=("zookeeper", "kraft"),
               zookeeper_lines=("3.8", "3.9")),
    Compatible("kafka", KAFKA_PREVIOUS_VERSION, java=(11, 17, 21), modes=("zookeeper", "kraft"),
               zookeeper_lines=("3.8", "3.9")),
    Compatible("kafka", KAFKA_UPGRADE_VERSION, java=(17, 21), modes=("kraft",)),
    Compatible("kafka", KAFKA_UPGRADE_PREVIOUS_VERSION, java=(17, 21), modes=("kraft",)),
    Compatible("zookeeper", ZOOKEEPER_VERSION, java=(8, 11, 17, 21)),
    Compatible("zookeeper", ZOOKEEPER_PREVIOUS_VERSION, java=(8, 11, 17, 21)),
    Compatible("spark", SPARK_VERSION, java=(17, 21), kafka_lines=("3.9", "4.1", "4.4"),
               resumes_checkpoints_of=(SPARK_PREVIOUS_VERSION,)),
    Compatible("spark", SPARK_PREVIOUS_VERSION, java=(17, 21), kafka_lines=("3.9", "4.1", "4.4")),
)


def compatible(name: str, version: str) -> Compatible | None:
    """What the catalog knows of ``name`` at ``version``, None for a release it does not know."""
    return next((c for c in COMPATIBLE if (c.name, c.version) == (name, version)), None)


def known_versions(name: str) -> list[str]:
    return [c.version for c in COMPATIBLE if c.name == name]


def release_line(version: str) -> str:
    """A release's line, major.minor ("3.9" for 3.9.2)."""
    return ".".join(str(n) for n in release_key(version)[:2])


def release_url(name: str, version: str, root: str = "") -> str:
    """Where the release archive of ``name`` at ``version`` is: on the mirror ``root``, else on
    the Apache distribution site."""
    return RELEASES[name](str(version)).url_on(str(root) or APACHE_DIST_ROOT)


def kafka_release(kraft: bool, running: str = "") -> str:
    """The Kafka release of a node whose inventory names none (KF-05). On a cluster that runs,
    the newest release the catalog has of the line its nodes run (``running``): a patch release
    arrives with a run, a new line only when the operator names it, since the metadata.version
    a new line raises cannot be lowered again (KR-10). On a new cluster, the newest release of
    its mode: Kafka 4 in KRaft mode (``kraft``), else the 3.9 line, the last with ZooKeeper."""
    if running:
        line = release_line(running)
        same_line = [v for v in known_versions("kafka") if release_line(v) == line]
        return max([*same_line, running], key=release_key)
    return CATALOG.kafka_upgrade.version if kraft else CATALOG.kafka.version


def kafka_major(version: object = None) -> int:
    """The major version of a Kafka release (4 for "4.1.2"): 3 is the last line with ZooKeeper
    mode. The catalog's default release when ``version`` is unset or not a version number."""
    return (release_key(version) or release_key(CATALOG.kafka.version))[0]


def release_key(version: object) -> tuple[int, ...]:
    """A release's numbers, for ordering releases (3.9.2 before 4.1.2); () for no version."""
    head = str(version or "").split("-", 1)[0]
    return tuple(int(part) for part in head.split(".") if part.isdigit())


def spark_connector_jars(spark_version: str) -> tuple[MavenJar, ...]:
    """The Kafka connector jars of a Spark release the catalog knows."""
    try:
        return CATALOG.spark_kafka_connectors[spark_version]
    except KeyError:
        known = ", ".join(CATALOG.spark_kafka_connectors)
        raise KeyError(
            f"no Kafka connector jar set is catalogued for Spark {spark_version} (only for "
            f"{known}); set spark_node_connector_urls to the jars of your release"
        ) from None


def checkpoint_carry_over_problem(written_by: str, release: str) -> str:
    """Why Spark ``release`` cannot resume a streaming checkpoint last written by Spark
    ``written_by``; "" when it can (the same release, or one it lists in
    ``resumes_checkpoints_of``). SP-12"""
    if not written_by or written_by == release:
        return ""
    known = compatible("spark", release)
    if known is not None and written_by in known.resumes_checkpoints_of:
        return ""
    if release_key(release) < release_key(written_by):
        why = "a checkpoint goes forward only, never back to an older release"
    else:
        resumes = ", ".join(known.resumes_checkpoints_of) if known else ""
        why = (f"Spark {release} is known to resume the checkpoints of "
               f"{resumes or 'no other release'}")
    return f"Spark {release} cannot resume a checkpoint Spark {written_by} wrote ({why})"
