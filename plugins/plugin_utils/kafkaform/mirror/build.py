"""Building the mirror: every selected archive of the catalog, skipped when it is current."""

from __future__ import annotations

import functools
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ..catalog import CATALOG, Catalog, Component, MavenJar, PythonWheel
from .archive import MANIFEST, Manifest, Member, Recipe, publish, write_tarball
from .common import MirrorError, progress, run_tool
from .kafka import kafka_members, kafka_recipe, kafka_roots
from .maven import maven_resolve, resolved_version_of
from .signing import Signer, sign_releases
from .spark import pyspark_sdist, spark_members, spark_recipe, unpack_sdist
from .zookeeper import zookeeper_bom, zookeeper_members, zookeeper_recipe, zookeeper_roots

#: `--only` name of the JVMs' metrics agent (the catalog's jmx_exporter jar).
JMX_EXPORTER = "jmx_exporter"
#: `--only` name of the brokers' admin client (the catalog's admin_client wheel).
ADMIN_CLIENT = "admin_client"


def cache_root() -> Path:
    """$KAFKAFORM_CACHE, default /var/cache/kafkaform."""
    return Path(os.environ.get("KAFKAFORM_CACHE") or "/var/cache/kafkaform")


def default_mirror_dir() -> Path:
    """Where `mirror build` writes and `mirror serve` serves by default."""
    return cache_root() / "mirror"


@dataclass(frozen=True, slots=True)
class BuildOptions:
    """Where the mirror goes and where downloads and scratch space are."""

    mirror_dir: Path
    cache: Path
    only: frozenset[str] = frozenset()

    def wants(self, name: str) -> bool:
        """Whether `--only` selects this component (everything when no `--only`)."""
        return not self.only or name in self.only


def jar_recipe(jar: MavenJar) -> Recipe:
    """Recipe of a connector jar: just its coordinate."""
    return Recipe(jar.dist_path, {"maven": jar.coordinate})


def build_maven_component(
    component: Component,
    recipe: Recipe,
    roots: list[str],
    bom: str | None,
    layout: Callable[[Component, Sequence[Path]], list[Member]],
    options: BuildOptions,
    manifest: Manifest,
    checksum_style: str,
) -> bool:
    """Resolve a Maven-built component's jars, lay the archive out and publish it."""
    subject = f"{component.name} {component.version}"
    if manifest.is_current(recipe, options.mirror_dir):
        progress(subject, f"up to date ({component.dist_path})")
        return False
    with tempfile.TemporaryDirectory(prefix=f"{component.name}-", dir=scratch(options)) as work:
        progress(subject, f"resolving {len(roots)} Maven roots and their runtime dependencies")
        started = time.monotonic()
        jars = maven_resolve(roots, Path(work), bom)
        progress(
            subject, f"resolved {len(jars)} jars with maven in {time.monotonic() - started:.0f} s"
        )
        members = layout(component, jars)
        progress(subject, f"writing {component.archive} ({len(members)} files)")
        return publish(
            options.mirror_dir,
            recipe,
            manifest,
            functools.partial(write_tarball, members, component.top_dir),
            checksum_style,
            subject,
            checked=True,
        )


def build_spark(component: Component, options: BuildOptions, manifest: Manifest) -> bool:
    """Lay the Spark archive out from the pyspark sdist and publish it."""
    subject = f"{component.name} {component.version}"
    recipe = spark_recipe(component)
    if manifest.is_current(recipe, options.mirror_dir):
        progress(subject, f"up to date ({component.dist_path})")
        return False
    sdist = pyspark_sdist(component.version, options.cache)
    with tempfile.TemporaryDirectory(prefix="spark-", dir=scratch(options)) as work:
        progress(subject, f"unpacking {sdist.name}")
        root = unpack_sdist(sdist, Path(work))
        members = spark_members(component, root)
        jars = sum(1 for m in members if m.path.startswith("jars/"))
        progress(subject, f"writing {component.archive} ({len(members)} files, {jars} jars)")
        return publish(
            options.mirror_dir,
            recipe,
            manifest,
            functools.partial(write_tarball, members, component.top_dir),
            "sha512sum",
            subject,
            checked=True,
        )


def build_connector(spark: Component, catalog: Catalog, options: BuildOptions,
                    manifest: Manifest) -> int:
    """Publish a Spark release's Kafka connector jars; check their versions against its POM."""
    subject = f"spark {spark.version} connector"
    jars = catalog.spark_kafka_connectors[spark.version]
    if all(manifest.is_current(jar_recipe(jar), options.mirror_dir) for jar in jars):
        progress(subject, f"up to date ({len(jars)} jars)")
        return 0
    root = next(j for j in jars if j.artifact.startswith("spark-sql-kafka"))
    with tempfile.TemporaryDirectory(prefix="connector-", dir=scratch(options)) as work:
        progress(subject, f"resolving {root.coordinate} with maven")
        resolved = maven_resolve([root.coordinate], Path(work))
        built = 0
        for jar in jars:
            found = resolved_version_of(jar.artifact, resolved)
            if found is None or found.name != jar.file_name:
                declared = found.name if found else f"no {jar.artifact} jar"
                raise MirrorError(
                    f"{subject}: the catalog lists {jar.file_name} but Spark's POM resolves to"
                    f" {declared}; update spark_kafka_connectors in kafkaform/catalog.py"
                )
            built += publish(
                options.mirror_dir,
                jar_recipe(jar),
                manifest,
                functools.partial(copy_file, found),
                "sha512sum",
                subject,
            )
        return built


def build_jar(jar: MavenJar, options: BuildOptions, manifest: Manifest) -> int:
    """Publish one jar as Maven Central has it (a self-contained one, such as an agent)."""
    subject = f"{jar.artifact} {jar.version}"
    if manifest.is_current(jar_recipe(jar), options.mirror_dir):
        progress(subject, f"up to date ({jar.dist_path})")
        return 0
    with tempfile.TemporaryDirectory(prefix=f"{jar.artifact}-", dir=scratch(options)) as work:
        progress(subject, f"resolving {jar.coordinate} with maven")
        found = resolved_version_of(jar.artifact, maven_resolve([jar.coordinate], Path(work)))
        if found is None or found.name != jar.file_name:
            raise MirrorError(f"{subject}: maven resolved no {jar.file_name}; check that"
                              f" {jar.coordinate} exists on Maven Central")
        return int(publish(options.mirror_dir, jar_recipe(jar), manifest,
                           functools.partial(copy_file, found), "sha512sum", subject))


def build_wheel(wheel: PythonWheel, options: BuildOptions, manifest: Manifest) -> int:
    """Publish one wheel as the package index pip is configured for has it, its sha256 checked
    by pip against the catalog's."""
    subject = f"{wheel.project} {wheel.version}"
    recipe = Recipe(wheel.dist_path, {"pypi": wheel.requirement})
    if manifest.is_current(recipe, options.mirror_dir):
        progress(subject, f"up to date ({wheel.dist_path})")
        return 0
    with tempfile.TemporaryDirectory(prefix=f"{wheel.project}-", dir=scratch(options)) as work:
        requirements = Path(work) / "requirements.txt"
        requirements.write_text(wheel.requirement + "\n", encoding="utf-8")
        progress(subject, "downloading with pip, its sha256 checked")
        run_tool([sys.executable, "-m", "pip", "download", "--progress-bar", "off", "--no-deps",
                  "--only-binary", ":all:", "--require-hashes", "-r", str(requirements),
                  "-d", work], f"pip download {wheel.project}=={wheel.version}",
                 "check that the package index pip is configured for is reachable "
                 "(`pip config list`, proxy)")
        found = Path(work) / wheel.file_name
        if not found.is_file():
            raise MirrorError(f"{subject}: pip left no {wheel.file_name}")
        return int(publish(options.mirror_dir, recipe, manifest,
                           functools.partial(copy_file, found), "sha512sum", subject))


def copy_file(source: Path, out: BinaryIO) -> None:
    """Copy a file's bytes into an open stream."""
    with source.open("rb") as stream:
        shutil.copyfileobj(stream, out)


def scratch(options: BuildOptions) -> Path:
    """Scratch space for unpacking and Maven output, next to the cache (same filesystem)."""
    path = options.cache / "tmp"
    path.mkdir(parents=True, exist_ok=True)
    return path


def build(options: BuildOptions, catalog: Catalog = CATALOG) -> int:
    """Build every selected archive of the catalog into the mirror; return how many were built."""
    options.mirror_dir.mkdir(parents=True, exist_ok=True)
    manifest = Manifest.load(options.mirror_dir / MANIFEST)
    built = 0
    if options.wants("zookeeper"):
        # The release new ensembles run, and the one ensembles built before run until upgraded.
        for zk in (catalog.zookeeper, catalog.zookeeper_previous):
            built += build_maven_component(
                zk, zookeeper_recipe(zk), zookeeper_roots(zk), zookeeper_bom(zk),
                zookeeper_members, options, manifest, "sha512sum",
            )  # fmt: skip
    if options.wants("kafka"):
        # Kafka's own releases are signed with `gpg --print-md`: keep that shape, so roles meet
        # both checksum formats end to end.
        for kf in (catalog.kafka, catalog.kafka_previous, catalog.kafka_upgrade,
                   catalog.kafka_upgrade_previous):
            built += build_maven_component(
                kf, kafka_recipe(kf), kafka_roots(kf), None, kafka_members, options, manifest,
                "gpg",
            )  # fmt: skip
    if options.wants("spark"):
        # The release new clusters run, and the one nodes built before run until upgraded.
        for spark in (catalog.spark, catalog.spark_previous):
            built += build_spark(spark, options, manifest)
            built += build_connector(spark, catalog, options, manifest)
    # SE-19: every release archive in the mirror signed, and the projects' KEYS beside them.
    built += sign_releases(options.mirror_dir, catalog.components,
                           Signer(options.cache / "mirror-signing"))
    if options.wants(JMX_EXPORTER):
        built += build_jar(catalog.jmx_exporter, options, manifest)
    if options.wants(ADMIN_CLIENT):
        built += build_wheel(catalog.admin_client, options, manifest)
    return built
