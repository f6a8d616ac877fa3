"""The releases an inventory asks for, against the catalog's table of what each release is known
to run with (kafkaform.catalog.COMPATIBLE): an unknown release, Java, ZooKeeper line, Kafka line
of the pipeline's connector or Scala build is refused before any host is touched (KF-05), as is a
broker newer than the KRaft controllers it registers with (KR-12)."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from functools import cache

from .. import catalog, java, kraft_migration, model
from ..defaults import role_default
from ..model import InventoryView
from ..rules import cite
from .finding import Finding

#: The group of each role's hosts, and the inputs naming its release and its Java package.
ROLES = (
    ("kafka", (model.KAFKA_CONTROLLER, model.KAFKA_BROKER), "kafka_broker_version",
     "kafka_broker_java_package"),
    ("zookeeper", (model.ZOOKEEPER,), "zookeeper_version", "zookeeper_java_package"),
    ("spark", (model.SPARK_MASTER, model.SPARK_WORKER), "spark_node_version",
     "spark_node_java_package"),
)

#: The Scala build in a Kafka archive's name (kafka_2.13-3.9.2.tgz).
_SCALA_BUILD = re.compile(r"/kafka_(?P<scala>\d+\.\d+)-[^/]*$")


def _one_of(choices: list[str]) -> str:
    """"a", "a or b", "a, b or c"."""
    return " or ".join([", ".join(choices[:-1]), choices[-1]] if len(choices) > 2 else choices)


@cache
def _default(key: str) -> str:
    """The role's default of ``key``: a release is the catalog's (the role's default names it
    through a filter), a Java package is plain text."""
    for name, _groups, version_key, _java_key in ROLES:
        if key == version_key:
            return catalog.CATALOG.component(name).version
    return str(role_default(key))


def _value(view: InventoryView, host: str, key: str, defaulted: bool = True) -> str | None:
    """The host's value of ``key``, its role's default when unset or empty (None unless
    ``defaulted``); None for a value the inventory templates (the run decides it; the role's own
    checks see it there). A Kafka node without kafka_broker_version gets a new cluster's release
    (model.kafka_release): on a cluster that runs, the run keeps the line its nodes run."""
    given = view.var(host, key)
    if isinstance(given, str) and "{{" in given:
        return None
    if given is None or given == "":
        if not defaulted:
            return None
        return model.kafka_release(view) if key == "kafka_broker_version" else _default(key)
    return str(given)


def _by_value(view: InventoryView, hosts: list[str], key: str,
              defaulted: bool = True) -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    for host in hosts:
        value = _value(view, host, key, defaulted)
        if value is not None:
            found[value].append(host)
    return found


def _hosts(view: InventoryView, groups: tuple[str, ...]) -> list[str]:
    return list(dict.fromkeys(h for group in groups for h in view.members(group)))


def release_catalog(view: InventoryView) -> Iterator[Finding]:
    """Each host's release is one the catalog knows, on a Java it runs on; the ensemble's
    ZooKeeper line is one the brokers' release is run with in ZooKeeper mode; the brokers' Kafka
    line is one the pipeline's connector is run with; the Kafka archive is a Scala build the
    catalog knows (KF-05)."""
    releases: dict[str, dict[str, list[str]]] = {}
    for name, groups, version_key, java_key in ROLES:
        hosts = _hosts(view, groups)
        releases[name] = _by_value(view, hosts, version_key)
        for version, on in releases[name].items():
            known = catalog.compatible(name, version)
            if known is None:
                versions = _one_of(catalog.known_versions(name))
                yield Finding(cite("KF-05"), f"{version_key} {version} is not a release "
                              "kafkaform's catalog knows", f"use {versions} (kafkaform.catalog)",
                              tuple(on))
                continue
            for package, with_it in _by_value(view, on, java_key).items():
                major = java.java_major(package)
                if major is not None and major not in known.java:
                    runs_on = ", ".join(str(n) for n in known.java)
                    yield Finding(cite("KF-05"), f"{name} {version} does not run on Java {major} "
                                  f"({java_key} {package})", f"use {java.DEFAULT_PACKAGE} "
                                  f"({name} {version} runs on Java {runs_on})", tuple(with_it))
    yield from _zookeeper_lines(view, releases)
    yield from _connector_lines(releases)
    yield from _scala_builds(view)


def _zookeeper_lines(view: InventoryView,
                     releases: dict[str, dict[str, list[str]]]) -> Iterator[Finding]:
    state = str(view.cluster_var("kafka_kraft_migration") or "")
    if not releases["zookeeper"] or state == kraft_migration.FINALIZED:
        return
    for version, brokers in releases["kafka"].items():
        known = catalog.compatible("kafka", version)
        if known is None or "zookeeper" not in known.modes:
            continue  # unknown above; a KRaft-only release on ZooKeeper is KR-10's
        for zk_version, members in releases["zookeeper"].items():
            line = catalog.release_line(zk_version)
            if catalog.compatible("zookeeper", zk_version) and line not in known.zookeeper_lines:
                lines = _one_of(list(known.zookeeper_lines))
                yield Finding(cite("KF-05"), f"Kafka {version} is not run with ZooKeeper {line} "
                              f"(zookeeper_version {zk_version} on {', '.join(members)})",
                              f"run the ensemble on ZooKeeper {lines}", tuple(brokers))


def _connector_lines(releases: dict[str, dict[str, list[str]]]) -> Iterator[Finding]:
    for version, nodes in releases["spark"].items():
        known = catalog.compatible("spark", version)
        if known is None:
            continue
        for kafka_version in releases["kafka"]:
            line = catalog.release_line(kafka_version)
            if catalog.compatible("kafka", kafka_version) and line not in known.kafka_lines:
                lines = _one_of(list(known.kafka_lines))
                yield Finding(cite("KF-05"), f"Spark {version}'s Kafka connector is not run with "
                              f"Kafka {line} brokers (kafka_broker_version {kafka_version})",
                              f"run the brokers on Kafka {lines}, or Spark on a release whose "
                              "connector is run with them", tuple(nodes))


def _scala_builds(view: InventoryView) -> Iterator[Finding]:
    # Unset, it is the catalog's own build.
    urls = _by_value(view, _hosts(view, (model.KAFKA_CONTROLLER, model.KAFKA_BROKER)),
                     "kafka_broker_archive_url", defaulted=False)
    for url, nodes in urls.items():
        found = _SCALA_BUILD.search(url.split("?", 1)[0])
        if found and found["scala"] != catalog.SCALA_BINARY_VERSION:
            yield Finding(cite("KF-05"), f"kafka_broker_archive_url is Kafka's Scala "
                          f"{found['scala']} build; the catalog knows its Scala "
                          f"{catalog.SCALA_BINARY_VERSION} builds, the Scala of Spark 4",
                          f"use the kafka_{catalog.SCALA_BINARY_VERSION}-<version>.tgz archive",
                          tuple(nodes))


def controllers_first(view: InventoryView) -> Iterator[Finding]:
    """A KRaft broker never runs a newer release than the oldest controller: an upgrade rolls
    the controllers first, then the brokers (KR-12)."""
    controllers = _by_value(view, view.members(model.KAFKA_CONTROLLER), "kafka_broker_version")
    if not controllers:
        return
    oldest = min(controllers, key=catalog.release_key)
    controller_hosts = set(view.members(model.KAFKA_CONTROLLER))
    newer = [host for version, hosts in _by_value(view, view.members(model.KAFKA_BROKER),
                                                  "kafka_broker_version").items()
             if catalog.release_key(version) > catalog.release_key(oldest)
             for host in hosts if host not in controller_hosts]
    if newer:
        yield Finding(cite("KR-12"), f"brokers would run a newer Kafka than the controller(s) "
                      f"{', '.join(controllers[oldest])} on {oldest}", "raise "
                      "kafka_broker_version on every controller first (a run rolls them), "
                      "then on the brokers", tuple(newer))


#: Kafka's feature names: lower-case words joined by dots, ending in ".version".
_FEATURE_NAME = re.compile(r"^[a-z]+(\.[a-z]+)*\.version$")


def feature_levels(view: InventoryView) -> Iterator[Finding]:
    """The features an upgrade raises by name (KR-13): Kafka's feature names with whole levels;
    not metadata.version (kafka_broker_upgrade_metadata_version raises it), not kraft.version
    (raised, it makes the static controller quorum kafkaform runs dynamic, for good)."""
    by_problem: dict[tuple[str, str], list[str]] = defaultdict(list)
    for host in [*view.members(model.KAFKA_CONTROLLER), *view.members(model.KAFKA_BROKER)]:
        levels = view.var(host, "kafka_broker_feature_levels")
        if not isinstance(levels, dict):
            continue  # unset, or templated: the role's argument spec checks its type
        for name, level in levels.items():
            if name == "kraft.version":
                problem = ("kraft.version would turn the static controller quorum "
                           "(controller.quorum.voters) dynamic, for good, and kafkaform runs a "
                           "static one", "remove kraft.version from kafka_broker_feature_levels")
            elif name == "metadata.version":
                problem = ("metadata.version follows the release on its own",
                           "remove it from kafka_broker_feature_levels; "
                           "kafka_broker_upgrade_metadata_version decides when it is raised")
            elif not _FEATURE_NAME.match(str(name)):
                problem = (f"{name!r} is not a Kafka feature name",
                           "name features as kafka-features.sh describe lists them "
                           "(transaction.version, group.version)")
            elif isinstance(level, bool) or not isinstance(level, int) or level < 0:
                problem = (f"{name}: {level!r} is not a feature level",
                           f"give {name} a whole level, 0 or more")
            else:
                continue
            by_problem[problem].append(host)
    for (message, fix), hosts in by_problem.items():
        yield Finding(cite("KR-13"), f"kafka_broker_feature_levels: {message}", fix,
                      tuple(hosts))
