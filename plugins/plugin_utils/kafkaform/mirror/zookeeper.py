"""ZooKeeper's release layout: lib/ from Maven, bin/ and conf/ from files/zookeeper/."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from ..catalog import Component, release_key
from .archive import Member, Recipe, file_member, jar_entry, text_member
from .common import release_text

# Artifacts of ZooKeeper's release lib/ that its POM marks `provided` (non-optional): the binary
# assembly ships them, and the AdminServer (Jetty), zkCli (jline) and metrics need them.
ZOOKEEPER_PROVIDED = (
    "commons-cli:commons-cli",
    "org.eclipse.jetty:jetty-server",
    "org.eclipse.jetty:jetty-servlet",
    "org.eclipse.jetty:jetty-client",
    "com.fasterxml.jackson.core:jackson-databind",
    "jline:jline",
    "io.dropwizard.metrics:metrics-core",
    "org.xerial.snappy:snappy-java",
)


def zookeeper_roots(component: Component) -> list[str]:
    """Maven roots of the ZooKeeper release's lib/ (versions from ZooKeeper's parent POM).

    The release also ships zookeeper-prometheus-metrics, but 3.8.4's is not on Maven Central:
    the mirror's ZooKeeper does not enable `metricsProvider.className=...PrometheusMetricsProvider`
    (the JMX exporter agent serves the metrics of every release alike).
    """
    provided: tuple[str, ...] = ZOOKEEPER_PROVIDED
    if release_key(component.version) >= (3, 9):
        # zkCli moved to JLine 3, under org.jline; logback-classic, the logging the release
        # ships, became an optional dependency, which Maven leaves out unless asked.
        provided = (*("org.jline:jline" if a == "jline:jline" else a for a in provided),
                    "ch.qos.logback:logback-classic")
    return [f"org.apache.zookeeper:zookeeper:{component.version}", *provided]


def zookeeper_bom(component: Component) -> str:
    """ZooKeeper's parent POM, whose dependencyManagement gives the `provided` versions."""
    return f"org.apache.zookeeper:parent:{component.version}"


#: The release's bin/ scripts and conf/ files, as kept under files/; the recipe hashes their
#: texts in the order conf, then bin.
SCRIPTS = ("bin/zkEnv.sh", "bin/zkServer.sh", "bin/zkCli.sh", "bin/zkCleanup.sh")
CONF = ("conf/zoo_sample.cfg", "conf/logback.xml")


def zookeeper_members(component: Component, jars: Sequence[Path]) -> list[Member]:
    """The ZooKeeper release layout: bin/, conf/{zoo_sample.cfg,logback.xml}, lib/."""
    members = [file_member(f"lib/{jar.name}", jar, executable=False) for jar in jars]
    members += [
        text_member(path, release_text(f"zookeeper/{path}"), executable=True) for path in SCRIPTS
    ]
    members += [text_member(path, release_text(f"zookeeper/{path}")) for path in CONF]
    core = next((jar for jar in jars if jar.name == f"zookeeper-{component.version}.jar"), None)
    if core is not None:
        for entry, name in (
            ("META-INF/LICENSE.txt", "LICENSE.txt"),
            ("META-INF/NOTICE.txt", "NOTICE.txt"),
        ):
            data = jar_entry(core, entry)
            if data is not None:
                members.append(Member(name, data=data))
    return members


def zookeeper_recipe(component: Component) -> Recipe:
    """Recipe of the ZooKeeper archive."""
    texts = [release_text(f"zookeeper/{path}") for path in (*CONF, *SCRIPTS)]
    files = hashlib.sha256(json.dumps(texts).encode()).hexdigest()
    inputs = {
        "component": asdict(component),
        "maven": zookeeper_roots(component),
        "bom": zookeeper_bom(component),
        "files": files,
    }
    return Recipe(component.dist_path, inputs)
