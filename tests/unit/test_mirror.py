"""kafkaform.mirror and kafkaform.catalog: layouts, reproducible tarballs, manifest skips, CLI.

Fast and offline: Maven and pip are not run here (tests/unit/test_mirror_integration.py runs the
built archives' JVMs). Jars are stand-in files; only names and layout matter to these tests.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
import tarfile
import urllib.request
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import BinaryIO

import pytest

from kafkaform import catalog, lab_image, mirror
from kafkaform.catalog import APACHE_DIST_ROOT, CATALOG, Component, join_url
from kafkaform.checksum import file_sha512, parse_sha512
from kafkaform.cli import build_parser
from kafkaform.mirror import common as mirror_common


def tar_names(data: bytes) -> list[str]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return tar.getnames()


def tarball(members: list[mirror.Member], top: str = "demo-1.0") -> bytes:
    out = io.BytesIO()
    mirror.write_tarball(members, top, out)
    return out.getvalue()


def fake_jars(directory: Path, names: list[str]) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in names:
        path = directory / name
        path.write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip: a valid jar with no entries
        paths.append(path)
    return paths


def kafka_jars(directory: Path, component: Component, *others: str,
               leave_out: str = "") -> list[Path]:
    """The release's jars as far as the layout looks into them: its core jar holding the main
    class of every script (but ``leave_out``), and empty ``others``."""
    directory.mkdir(parents=True, exist_ok=True)
    core = directory / f"kafka_2.13-{component.version}.jar"
    with zipfile.ZipFile(core, "w") as jar:
        for main in set(mirror.kafka_layout(component).scripts.values()) - {leave_out}:
            jar.writestr(main.split()[0].replace(".", "/") + ".class", b"")
    return [core, *fake_jars(directory, list(others))]


# ------------------------------------------------------------------------------------ catalog


def test_catalog_paths_follow_the_apache_dist_layout() -> None:
    kafka, zookeeper, spark = CATALOG.kafka, CATALOG.zookeeper, CATALOG.spark
    assert kafka.dist_path == f"kafka/{kafka.version}/kafka_2.13-{kafka.version}.tgz"
    assert kafka.top_dir == f"kafka_2.13-{kafka.version}"
    assert zookeeper.dist_path == (
        f"zookeeper/zookeeper-{zookeeper.version}/apache-zookeeper-{zookeeper.version}-bin.tar.gz"
    )
    assert spark.dist_path == f"spark/spark-{spark.version}/spark-{spark.version}-bin-hadoop3.tgz"
    assert kafka.url == APACHE_DIST_ROOT + kafka.dist_path
    assert kafka.sha512_url == kafka.url + ".sha512"
    assert zookeeper.url_on("http://mirror:8000/") == f"http://mirror:8000/{zookeeper.dist_path}"


def test_catalog_versions_are_the_supported_lines() -> None:
    assert CATALOG.kafka.version.startswith("3.9.")
    # The release a KRaft cluster upgrades to: the mirror builds it too, the default stays 3.9.
    assert catalog.kafka_major(CATALOG.kafka_upgrade.version) == 4
    assert CATALOG.kafka_upgrade in CATALOG.components
    assert CATALOG.component("kafka") is CATALOG.kafka
    assert CATALOG.zookeeper.version.startswith("3.9.")
    assert CATALOG.zookeeper_previous.version.startswith("3.8.")
    assert CATALOG.zookeeper_previous in CATALOG.components
    assert CATALOG.spark.version.startswith("4.")


def test_releases_order_by_their_numbers() -> None:
    assert catalog.release_key("3.9.2") < catalog.release_key("3.10.0") < catalog.release_key(
        "4.1.2") < catalog.release_key("4.1.10")
    assert catalog.release_key("") == ()
    assert catalog.kafka_major("{{ 'kafka' | kafkaform.platform.release_version }}") == \
        catalog.kafka_major(CATALOG.kafka.version)


@pytest.mark.parametrize("spark", [CATALOG.spark, CATALOG.spark_previous])
def test_connector_jars_sit_next_to_the_spark_archive(spark: Component) -> None:
    jars = CATALOG.spark_kafka_connectors[spark.version]
    assert {jar.artifact for jar in jars} == {
        "spark-sql-kafka-0-10_2.13",
        "spark-token-provider-kafka-0-10_2.13",
        "kafka-clients",
        "commons-pool2",
    }
    for jar in jars:
        assert jar.dist_path == f"spark/spark-{spark.version}/connector/{jar.file_name}"
    spark_modules = {jar.version for jar in jars if jar.group == "org.apache.spark"}
    assert spark_modules == {spark.version}


def test_component_lookup_names_the_known_components() -> None:
    assert CATALOG.component("kafka") is CATALOG.kafka
    with pytest.raises(KeyError, match="kafka, spark"):
        CATALOG.component("flink")


def test_join_url_puts_exactly_one_slash() -> None:
    assert (
        join_url("http://m:8000/", "/a/b")
        == join_url("http://m:8000", "a/b")
        == "http://m:8000/a/b"
    )


# ----------------------------------------------------------------------------------- tarballs


def test_tarball_is_byte_identical_for_equal_inputs(tmp_path: Path) -> None:
    jar = fake_jars(tmp_path, ["x-1.jar"])[0]
    members = [
        mirror.text_member("bin/run.sh", "#!/bin/sh\n", executable=True),
        mirror.file_member("libs/x-1.jar", jar, executable=False),
    ]
    assert tarball(members) == tarball(list(reversed(members)))


def test_tarball_lists_sorted_directories_under_one_top_dir_with_pinned_metadata() -> None:
    members = [
        mirror.text_member("conf/a.cfg", "a=1\n"),
        mirror.text_member("bin/run.sh", "#!/bin/sh\n", executable=True),
    ]
    data = tarball(members)
    assert tar_names(data) == [
        "demo-1.0",
        "demo-1.0/bin",
        "demo-1.0/bin/run.sh",
        "demo-1.0/conf",
        "demo-1.0/conf/a.cfg",
    ]
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        infos = {info.name: info for info in tar.getmembers()}
    assert infos["demo-1.0/bin/run.sh"].mode == 0o755
    assert infos["demo-1.0/conf/a.cfg"].mode == 0o644
    assert {(i.uid, i.gid, i.uname, i.mtime) for i in infos.values()} == {
        (0, 0, "root", mirror.DEFAULT_EPOCH)
    }
    assert data[4:8] == bytes(4)  # gzip header mtime is zero


@pytest.mark.parametrize("path", ["", "/etc/passwd", "a/../../b"])
def test_unsafe_member_paths_are_refused(path: str) -> None:
    with pytest.raises(mirror.MirrorError, match="unsafe"):
        mirror.check_layout([mirror.text_member(path, "x")])


def test_duplicate_member_paths_are_refused() -> None:
    with pytest.raises(mirror.MirrorError, match="two archive members"):
        mirror.check_layout([mirror.text_member("a", "1"), mirror.text_member("a", "2")])


# ------------------------------------------------------------------------------------ layouts


def archive_of(*members: tuple[str, str]) -> tarfile.TarFile:
    """An in-memory tar of (name, symlink target or "" for a small file) members."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, link in members:
            info = tarfile.TarInfo(name)
            if link:
                info.type, info.linkname = tarfile.SYMTYPE, link
                tar.addfile(info)
            else:
                info.size = 2
                tar.addfile(info, io.BytesIO(b"ok"))
    raw.seek(0)
    return tarfile.open(fileobj=raw)


def test_extract_safely_unpacks_files_and_inner_links(tmp_path: Path) -> None:
    mirror.extract_safely(archive_of(("top/bin/tool", ""), ("top/current", "bin")), tmp_path)
    assert (tmp_path / "top/current/tool").read_bytes() == b"ok"


@pytest.mark.parametrize("member", [("../escape", ""), ("top/out", "../../outside")])
def test_extract_safely_refuses_what_would_land_outside(tmp_path: Path,
                                                        member: tuple[str, str]) -> None:
    into = tmp_path / "into"
    into.mkdir()
    with pytest.raises((mirror.MirrorError, tarfile.TarError)):
        mirror.extract_safely(archive_of(member), into)
    assert not (tmp_path / "escape").exists()
    assert [p.name for p in into.rglob("*") if p.is_symlink()] == []


def test_kafka_layout_has_the_release_directories(tmp_path: Path) -> None:
    version = CATALOG.kafka.version
    jars = kafka_jars(tmp_path, CATALOG.kafka, f"kafka-tools-{version}.jar")
    members = {m.path: m for m in mirror.kafka_members(CATALOG.kafka, jars)}
    assert {path.split("/")[0] for path in members} >= {"bin", "config", "libs"}
    assert f"libs/kafka-tools-{version}.jar" in members
    for name in ("server.properties", "log4j.properties", "tools-log4j.properties"):
        assert f"config/{name}" in members
    scripts = [m for path, m in members.items() if path.startswith("bin/")]
    assert "bin/kafka-topics.sh" in members and all(m.mode == 0o755 for m in scripts)
    assert b"org.apache.kafka.tools.TopicCommand" in (members["bin/kafka-topics.sh"].data or b"")
    assert all(m.mode == 0o644 for path, m in members.items() if path.startswith("libs/"))


def test_kafka_4_layout_logs_with_log4j2_and_has_no_zookeeper_scripts(tmp_path: Path) -> None:
    upgrade = CATALOG.kafka_upgrade
    version = upgrade.version
    log4j = mirror.KAFKA4_LOG4J[version]
    jars = kafka_jars(tmp_path, upgrade, f"log4j-core-{log4j}.jar",
                      f"log4j-slf4j-impl-{log4j}.jar")
    members = {m.path: m for m in mirror.kafka_members(upgrade, jars)}
    assert {"config/log4j2.yaml", "config/tools-log4j2.yaml"} <= set(members)
    assert not {"config/log4j.properties", "config/zookeeper.properties"} & set(members)
    assert not [path for path in members if path.startswith("bin/zookeeper")]
    assert b"org.apache.kafka.tools.ConsoleProducer" in (
        members["bin/kafka-console-producer.sh"].data or b"")
    assert b"-Dlog4j2.configurationFile=" in (members["bin/kafka-server-start.sh"].data or b"")
    assert b"log4j2.yaml" in (members["bin/kafka-run-class.sh"].data or b"")
    assert mirror.kafka_roots(upgrade)[-1] == mirror.kafka4_slf4j_binding(version)
    assert mirror.kafka_recipe(upgrade).digest() != mirror.kafka_recipe(CATALOG.kafka).digest()


@pytest.mark.parametrize(("version", "configs", "dump_log"), [
    ("3.9.2", "kafka.admin.ConfigCommand", "kafka.tools.DumpLogSegments"),
    ("4.1.2", "kafka.admin.ConfigCommand", "kafka.tools.DumpLogSegments"),
    ("4.3.0", "kafka.admin.ConfigCommand", "org.apache.kafka.tools.DumpLogSegments"),
    ("4.4.0", "org.apache.kafka.tools.ConfigCommand", "org.apache.kafka.tools.DumpLogSegments"),
])
def test_each_release_scripts_call_the_classes_of_its_line(version: str, configs: str,
                                                           dump_log: str) -> None:
    assert mirror.kafka_main_class(version, "kafka-configs.sh") == configs
    assert mirror.kafka_main_class(version, "kafka-dump-log.sh") == dump_log


@pytest.mark.parametrize(("version", "option"), [
    ("3.9.2", "--consumer.config"), ("4.1.2", "--consumer.config"), ("4.2.0", "--command-config"),
    ("4.4.0", "--command-config")])
def test_client_tools_read_their_configuration_from_their_releases_option(
        version: str, option: str) -> None:
    assert mirror.kafka.client_config_option(version, "--consumer.config") == option


def test_a_script_whose_class_the_release_moved_fails_the_build(tmp_path: Path) -> None:
    upgrade = CATALOG.kafka_upgrade
    log4j = mirror.KAFKA4_LOG4J[upgrade.version]
    jars = kafka_jars(tmp_path, upgrade, f"log4j-core-{log4j}.jar",
                      leave_out=mirror.kafka_main_class(upgrade.version, "kafka-configs.sh"))
    with pytest.raises(mirror.MirrorError, match=r"ConfigCommand.*kafka-configs\.sh.*MOVED"):
        mirror.kafka_members(upgrade, jars)


def test_a_kafka_4_release_without_a_log4j_version_is_refused() -> None:
    with pytest.raises(mirror.MirrorError, match=r"kafka 4\.9\.9: .*KAFKA4_LOG4J"):
        mirror.kafka_roots(catalog.kafka("4.9.9"))


@pytest.mark.parametrize("release", ["kafka", "kafka_upgrade", "kafka_upgrade_previous"])
def test_each_kafka_layout_points_its_scripts_at_its_own_logging_files(release: str) -> None:
    layout = mirror.kafka_layout(getattr(CATALOG, release))
    tools = re.search(r"\$base_dir/config/([\w.-]+)", layout.run_class)
    server = re.search(r"\$base_dir/\.\./config/([\w.-]+)", layout.server_start)
    assert tools and server, "a script lost its logging option"
    assert {tools[1], server[1]} <= set(layout.config)
    assert "tools" in tools[1] and "tools" not in server[1]


def test_kafka_4_binding_must_match_the_log4j_maven_resolves(tmp_path: Path) -> None:
    jars = fake_jars(tmp_path, ["log4j-core-2.99.0.jar", "log4j-slf4j-impl-2.25.3.jar"])
    with pytest.raises(mirror.MirrorError, match=r"log4j-core-2\.99\.0\.jar.*KAFKA4_LOG4J"):
        mirror.kafka_members(CATALOG.kafka_upgrade, jars)


def test_kafka_roots_are_the_broker_and_the_tools() -> None:
    version = CATALOG.kafka.version
    assert mirror.kafka_roots(CATALOG.kafka) == [
        f"org.apache.kafka:kafka_2.13:{version}",
        f"org.apache.kafka:kafka-tools:{version}",
    ]


def test_zookeeper_layout_has_lib_conf_and_bin(tmp_path: Path) -> None:
    jars = fake_jars(tmp_path, [f"zookeeper-{CATALOG.zookeeper.version}.jar", "logback-core.jar"])
    paths = {m.path for m in mirror.zookeeper_members(CATALOG.zookeeper, jars)}
    assert {"conf/zoo_sample.cfg", "conf/logback.xml", "bin/zkServer.sh"} <= paths
    assert "lib/logback-core.jar" in paths


def test_spark_layout_is_taken_from_the_sdist_deps(tmp_path: Path) -> None:
    root = tmp_path / "pyspark-4.0.0"
    for rel in ("deps/bin/spark-class", "deps/bin/spark-class.cmd", "deps/sbin/spark-daemon.sh"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("#!/bin/sh\n")
    fake_jars(root / "deps/jars", ["spark-core_2.13-4.0.0.jar"])
    fake_jars(root / "deps/jars/connect-repl", ["ammonite.jar"])
    fake_jars(root / "lib", ["pyspark.zip", "py4j-0.10.9.9-src.zip"])
    members = {m.path: m for m in mirror.spark_members(CATALOG.spark, root)}
    assert members["bin/spark-class"].mode == 0o755
    assert members["bin/spark-class.cmd"].mode == 0o644
    assert members["jars/spark-core_2.13-4.0.0.jar"].mode == 0o644
    assert "jars/connect-repl/ammonite.jar" in members
    assert {"python/lib/pyspark.zip", "python/lib/py4j-0.10.9.9-src.zip"} <= set(members)
    assert {"sbin/start-master.sh", "sbin/start-worker.sh", "sbin/spark-daemon.sh"} <= set(members)
    assert "conf/spark-env.sh.template" in members


def test_spark_layout_refuses_something_that_is_not_a_pyspark_sdist(tmp_path: Path) -> None:
    with pytest.raises(mirror.MirrorError, match="is this a pyspark sdist"):
        mirror.spark_members(CATALOG.spark, tmp_path)


# -------------------------------------------------------------------------------------- maven


def test_maven_pom_imports_the_bom_and_lists_the_roots() -> None:
    pom = mirror.maven_pom(["g:a:1", "g:b"], bom="org.apache.zookeeper:parent:3.8.4")
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    root = ET.fromstring(pom.split("\n", 1)[1])
    managed = root.find("m:dependencyManagement/m:dependencies/m:dependency", ns)
    assert managed is not None
    assert managed.findtext("m:scope", namespaces=ns) == "import"
    deps = root.findall("m:dependencies/m:dependency", ns)
    assert [d.findtext("m:artifactId", namespaces=ns) for d in deps] == ["a", "b"]
    assert deps[1].find("m:version", ns) is None


def test_resolved_version_of_does_not_confuse_artifacts_with_digits() -> None:
    jars = [Path("spark-sql-kafka-0-10_2.13-4.0.0.jar"), Path("kafka-clients-3.9.0.jar")]
    assert mirror.resolved_version_of("spark-sql-kafka-0-10_2.13", jars) == jars[0]
    assert mirror.resolved_version_of("kafka-clients", jars) == jars[1]
    assert mirror.resolved_version_of("kafka", jars) is None


# ---------------------------------------------------------------------- maven's configuration

SETTINGS_NS = "http://maven.apache.org/SETTINGS/1.0.0"
CENTRAL = "https://central.example/maven2"


def fake_maven_home(root: Path, central: str = CENTRAL, global_settings: str = "") -> Path:
    """A Maven installation: a model-builder jar holding a super POM, and conf/settings.xml."""
    home = root / "maven"
    (home / "lib").mkdir(parents=True)
    (home / "conf").mkdir()
    super_pom = (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        "<repositories><repository><id>snapshots</id><url>https://other.example/</url>"
        f"</repository><repository><id>central</id><url>{central}</url></repository>"
        "</repositories></project>"
    )
    with zipfile.ZipFile(home / "lib" / "maven-model-builder-3.9.9.jar", "w") as jar:
        jar.writestr(mirror.SUPER_POM_ENTRY, super_pom)
    if global_settings:
        (home / "conf" / "settings.xml").write_text(global_settings)
    return home


def settings_xml(body: str) -> str:
    return f'<?xml version="1.0"?>\n<settings xmlns="{SETTINGS_NS}">{body}</settings>\n'


def a_mirror(url: str, mirror_of: str = "*", blocked: bool = False) -> str:
    flag = "<blocked>true</blocked>" if blocked else ""
    return (
        f"<mirrors><mirror><id>m</id><mirrorOf>{mirror_of}</mirrorOf><url>{url}</url>{flag}"
        "</mirror></mirrors>"
    )


def mirrors_of(settings: Path) -> list[tuple[str, str, str]]:
    root = ET.parse(settings).getroot()
    return [
        (m.findtext("id", ""), m.findtext("mirrorOf", ""), m.findtext("url", ""))
        for m in root.iterfind("mirrors/mirror")
    ]


def test_a_mirror_in_the_user_settings_leaves_maven_as_configured(tmp_path: Path) -> None:
    user = tmp_path / "user-settings.xml"
    user.write_text(settings_xml(a_mirror("https://nexus.corp.example/maven")))
    home = fake_maven_home(tmp_path)
    assert mirror.maven_settings_args(tmp_path, home, user) == []
    assert not (tmp_path / "global-settings.xml").exists()


def test_a_mirror_in_the_global_settings_leaves_maven_as_configured(tmp_path: Path) -> None:
    home = fake_maven_home(tmp_path, global_settings=settings_xml(a_mirror("https://corp/m2")))
    assert mirror.maven_settings_args(tmp_path, home, tmp_path / "absent.xml") == []


def test_without_a_mirror_central_comes_from_the_super_pom(tmp_path: Path) -> None:
    home = fake_maven_home(tmp_path)
    args = mirror.maven_settings_args(tmp_path, home, tmp_path / "absent.xml")
    assert args[0] == "-gs" and "-s" not in args
    assert mirrors_of(Path(args[1])) == [
        (mirror.CENTRAL_MIRROR_ID, mirror.CENTRAL_MIRROR_OF, CENTRAL)
    ]


def test_generated_settings_keep_the_global_ones_and_read_the_user_ones(tmp_path: Path) -> None:
    # Maven's stock global settings block plain-HTTP repositories: a blocked mirror, no mirror.
    blocker = a_mirror("http://0.0.0.0/", "external:http:*", blocked=True)
    proxy = (
        "<proxies><proxy><id>corp</id><host>proxy.corp</host><port>3128</port></proxy></proxies>"
    )
    home = fake_maven_home(tmp_path, global_settings=settings_xml(blocker + proxy))
    user = tmp_path / "user-settings.xml"
    user_text = settings_xml(
        "<servers><server><id>central</id><username>me</username></server></servers>"
    )
    user.write_text(user_text)
    args = mirror.maven_settings_args(tmp_path, home, user)
    # The user settings are not replaced: Maven still reads them from their usual place.
    assert args[0] == "-gs" and "-s" not in args
    assert user.read_text() == user_text
    generated = Path(args[1])
    assert mirrors_of(generated) == [
        (mirror.CENTRAL_MIRROR_ID, mirror.CENTRAL_MIRROR_OF, CENTRAL),
        ("m", "external:http:*", "http://0.0.0.0/"),
    ]
    assert ET.parse(generated).getroot().findtext("proxies/proxy/host") == "proxy.corp"


def test_a_maven_without_super_pom_is_reported(tmp_path: Path) -> None:
    home = tmp_path / "maven"
    (home / "lib").mkdir(parents=True)
    with pytest.raises(mirror.MirrorError, match="super POM"):
        mirror.maven_settings_args(tmp_path, home, tmp_path / "absent.xml")


def test_unreadable_settings_are_reported_by_name(tmp_path: Path) -> None:
    user = tmp_path / "user-settings.xml"
    user.write_text("<settings><mirrors>")
    with pytest.raises(mirror.MirrorError, match=r"user-settings\.xml"):
        mirror.maven_settings_args(tmp_path, fake_maven_home(tmp_path), user)


def test_maven_home_is_read_from_mvn_version() -> None:
    output = "\x1b[1mApache Maven 3.8.7\x1b[m\nMaven home: /usr/share/maven\nJava version: 17\n"
    assert mirror.parse_maven_home(output) == Path("/usr/share/maven")
    assert mirror.parse_maven_home("Apache Maven 3.8.7\n") is None


# -------------------------------------------------------------------- no registry host in code

REGISTRY_HOSTS = ("repo1.maven.org", "repo.maven.apache.org", "deb.debian.org", "pypi.org")


def source_files(module: ModuleType) -> list[Path]:
    """A module's file, or every file of a package (its modules and the files it ships)."""
    path = Path(str(module.__file__))
    if path.name != "__init__.py":
        return [path]
    return [p for p in sorted(path.parent.rglob("*")) if p.is_file() and p.suffix != ".pyc"]


@pytest.mark.parametrize("module", [catalog, mirror, lab_image], ids=lambda m: m.__name__)
def test_no_registry_host_is_written_into_the_code(module: ModuleType) -> None:
    found = [(path.name, host) for path in source_files(module)
             for host in REGISTRY_HOSTS if host in path.read_text()]
    assert found == []


# ------------------------------------------------------------------------- manifest / publish


class Producer:
    """A produce() callback counting its calls."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.calls = 0

    def __call__(self, out: BinaryIO) -> None:
        self.calls += 1
        out.write(self.data)


def publish(root: Path, produce: Callable[[BinaryIO], None], recipe: mirror.Recipe) -> bool:
    manifest = mirror.Manifest.load(root / mirror.MANIFEST)
    return mirror.publish(root, recipe, manifest, produce, "gpg", "test")


RECIPE = mirror.Recipe("demo/1.0/demo-1.0.tgz", {"version": "1.0"})


def test_publish_writes_the_archive_its_sha512_and_the_manifest(tmp_path: Path) -> None:
    assert publish(tmp_path, Producer(b"archive"), RECIPE)
    archive = tmp_path / RECIPE.dist_path
    checksum = (tmp_path / (RECIPE.dist_path + ".sha512")).read_text()
    assert checksum.startswith("demo-1.0.tgz: ")  # the gpg --print-md shape was asked for
    assert parse_sha512(checksum, archive.name) == file_sha512(archive)
    assert not [p for p in archive.parent.iterdir() if p.name.startswith(".")]  # no temp left


def test_second_publish_with_nothing_new_skips(tmp_path: Path) -> None:
    producer = Producer(b"archive")
    assert publish(tmp_path, producer, RECIPE)
    assert not publish(tmp_path, producer, RECIPE)
    assert producer.calls == 1


@pytest.mark.parametrize(
    "damage",
    [
        lambda root: (root / RECIPE.dist_path).write_bytes(b"archivf"),  # same size, other bytes
        lambda root: (root / RECIPE.dist_path).unlink(),
        lambda root: (root / (RECIPE.dist_path + ".sha512")).write_text("0" * 128 + "  x.tgz\n"),
        lambda root: (root / mirror.MANIFEST).write_text("{not json"),
    ],
    ids=["corrupted", "deleted", "bad-sha512", "bad-manifest"],
)
def test_damaged_artifacts_are_rebuilt(tmp_path: Path, damage: Callable[[Path], object]) -> None:
    producer = Producer(b"archive")
    publish(tmp_path, producer, RECIPE)
    damage(tmp_path)
    assert publish(tmp_path, producer, RECIPE)
    assert producer.calls == 2
    assert (
        file_sha512(tmp_path / RECIPE.dist_path)
        == mirror.Manifest.load(tmp_path / mirror.MANIFEST).entries[RECIPE.dist_path]["sha512"]
    )


def test_a_changed_recipe_is_rebuilt(tmp_path: Path) -> None:
    producer = Producer(b"archive")
    publish(tmp_path, producer, RECIPE)
    assert publish(tmp_path, producer, mirror.Recipe(RECIPE.dist_path, {"version": "1.1"}))


def test_a_failing_producer_leaves_nothing_behind(tmp_path: Path) -> None:
    def fail(out: BinaryIO) -> None:
        out.write(b"half")
        raise mirror.MirrorError("maven failed")

    with pytest.raises(mirror.MirrorError):
        publish(tmp_path, fail, RECIPE)
    assert list((tmp_path / "demo/1.0").iterdir()) == []


def test_recipes_change_when_generated_files_change(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = mirror.kafka_recipe(CATALOG.kafka).digest()
    files = shutil.copytree(mirror_common.FILES, tmp_path / "files")
    with (files / "kafka/3/config/log4j.properties").open("a") as log4j:
        log4j.write("# changed\n")
    monkeypatch.setattr(mirror_common, "FILES", files)
    assert mirror.kafka_recipe(CATALOG.kafka).digest() != before


# ---------------------------------------------------------------------------------------- CLI


def test_cli_registers_build_and_serve() -> None:
    parser = build_parser()
    args = parser.parse_args(["mirror", "build", "--dir", "/m", "--only", "kafka"])
    assert args.handler is mirror.handle_build and args.only == ["kafka"] and args.dir == "/m"
    args = parser.parse_args(["mirror", "serve"])
    assert args.handler is mirror.handle_serve
    assert (args.bind, args.port) == ("127.0.0.1", 8000)


def test_build_rejects_unknown_components(capsys: pytest.CaptureFixture[str]) -> None:
    args = build_parser().parse_args(["mirror", "build", "--only", "flink"])
    assert mirror.handle_build(args) == 2
    assert "unknown component" in capsys.readouterr().err


def test_serve_refuses_a_directory_that_is_no_mirror(tmp_path: Path) -> None:
    args = build_parser().parse_args(["mirror", "serve", "--dir", str(tmp_path)])
    assert mirror.handle_serve(args) == 1


def test_serve_serves_the_mirror_over_http_on_loopback(tmp_path: Path) -> None:
    publish(tmp_path, Producer(b"archive"), RECIPE)
    command = [sys.executable, "-m", "kafkaform.cli", "mirror", "serve", "--dir", str(tmp_path)]
    with subprocess.Popen([*command, "--port", "0"], stderr=subprocess.PIPE, text=True) as server:
        try:
            assert server.stderr is not None
            banner = server.stderr.readline()
            url = banner.split(" at ")[1].split()[0]
            assert url.startswith("http://127.0.0.1:")
            with urllib.request.urlopen(url + RECIPE.dist_path, timeout=5) as response:
                assert response.read() == b"archive"
        finally:
            server.terminate()


def test_a_tool_shows_its_download_progress_and_its_tail_on_failure(
        capsys: pytest.CaptureFixture[str]) -> None:
    script = ("echo '[INFO] Scanning for projects'; "
              "echo 'Downloaded from central: https://repo/x.jar (1.2 MB at 3 MB/s)'; "
              "echo '[WARNING] checksum policy'")
    mirror.run_tool(["sh", "-c", script], "maven", "hint")
    shown = capsys.readouterr().err
    assert "    Downloaded from central: https://repo/x.jar (1.2 MB at 3 MB/s)" in shown
    assert "[WARNING] checksum policy" in shown and "Scanning" not in shown
    with pytest.raises(mirror.MirrorError, match=r"(?s)maven failed \(exit 3\):.*Scanning.*hint"):
        mirror.run_tool(["sh", "-c", script + "; exit 3"], "maven", "hint")


def test_zookeeper_3_9_ships_jline_3_and_its_logging() -> None:
    """3.9 moved zkCli to JLine 3 (org.jline) and made logback-classic optional, which Maven
    leaves out unless asked: without it the members would log nothing."""
    from kafkaform.mirror.zookeeper import zookeeper_roots
    new, old = (zookeeper_roots(c) for c in (CATALOG.zookeeper, CATALOG.zookeeper_previous))
    assert "org.jline:jline" in new and "jline:jline" not in new
    assert "ch.qos.logback:logback-classic" in new
    assert "jline:jline" in old and "ch.qos.logback:logback-classic" not in old
