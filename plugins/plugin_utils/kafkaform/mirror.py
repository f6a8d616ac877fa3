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

Builds are deterministic (sorted members, fixed mtimes and owners, gzip without timestamp) and
atomic (temp file, then rename). `manifest.json` records, per archive, a digest of the recipe
(catalog entry + inputs) and the archive's sha512: a rebuild with nothing new re-hashes the
archives and stops there, without running Maven or pip.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import gzip
import hashlib
import http.server
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from .catalog import CATALOG, Catalog, Component, MavenJar, kafka_major
from .checksum import file_sha512, format_gpg_print_md, format_sha512sum, parse_sha512

#: Bump when the way archives are assembled changes: every archive is then rebuilt once.
RECIPE_VERSION = 1

#: Pinned so the resolution does not depend on whichever plugin version Maven picks by default.
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"

#: mtime of every archive member (2025-01-01T00:00:00Z) unless SOURCE_DATE_EPOCH says otherwise:
#: equal inputs must give byte-identical archives.
DEFAULT_EPOCH = 1_735_689_600

#: gzip level of the archives: jars are already deflated, so higher levels only cost time.
GZIP_LEVEL = 6

MANIFEST = "manifest.json"
#: `--only` name of the JVMs' metrics agent (the catalog's jmx_exporter jar).
JMX_EXPORTER = "jmx_exporter"

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


class MirrorError(Exception):
    """A build step failed; the message says what happened and what to do next."""


# --------------------------------------------------------------------------------------------
# Paths and progress


def cache_root() -> Path:
    """$KAFKAFORM_CACHE, default /var/cache/kafkaform."""
    return Path(os.environ.get("KAFKAFORM_CACHE") or "/var/cache/kafkaform")


def default_mirror_dir() -> Path:
    """Where `mirror build` writes and `mirror serve` serves by default."""
    return cache_root() / "mirror"


def progress(subject: str, message: str) -> None:
    """One progress line on stderr, prefixed with what it is about (`kafka 3.9.2: ...`)."""
    print(f"{subject}: {message}", file=sys.stderr, flush=True)


def source_epoch() -> int:
    """Member mtime: SOURCE_DATE_EPOCH (the reproducible-builds convention) or DEFAULT_EPOCH."""
    value = os.environ.get("SOURCE_DATE_EPOCH", "")
    return int(value) if value.isdigit() else DEFAULT_EPOCH


# --------------------------------------------------------------------------------------------
# Archive members and deterministic tarballs


@dataclass(frozen=True, slots=True)
class Member:
    """One file of an archive, relative to its top-level directory; content from a file or bytes."""

    path: str
    mode: int = 0o644
    source: Path | None = None
    data: bytes | None = None

    def size(self) -> int:
        """Size in bytes of the member's content."""
        if self.data is not None:
            return len(self.data)
        return self.file().stat().st_size

    def file(self) -> Path:
        """The file the content comes from (for a member without `data`)."""
        if self.source is None:
            raise TypeError(f"archive member {self.path!r} has neither data nor a source file")
        return self.source


def text_member(path: str, text: str, executable: bool = False) -> Member:
    """A member from text; scripts are executable."""
    return Member(path, 0o755 if executable else 0o644, data=text.encode())


def file_member(path: str, source: Path, executable: bool | None = None) -> Member:
    """A member copied from a file; `executable=None` keeps the file's own executable bit."""
    if executable is None:
        executable = bool(source.stat().st_mode & 0o111)
    return Member(path, 0o755 if executable else 0o644, source=source)


def directories_of(paths: Iterable[str]) -> set[str]:
    """Every parent directory of the given relative paths (so the tarball lists them)."""
    found: set[str] = set()
    for path in paths:
        parts = path.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            found.add("/".join(parts[:depth]))
    return found


def check_layout(members: Sequence[Member]) -> None:
    """Refuse duplicate or unsafe member paths before anything is written."""
    seen: set[str] = set()
    for member in members:
        path = member.path
        if not path or path.startswith("/") or ".." in path.split("/"):
            raise MirrorError(f"unsafe archive member path {path!r}")
        if path in seen:
            raise MirrorError(f"two archive members at {path!r}")
        seen.add(path)


def write_tarball(members: Sequence[Member], top_dir: str, target: BinaryIO) -> None:
    """Write `top_dir/<member>` for every member as a reproducible .tar.gz stream.

    Members are sorted, directories listed explicitly, owners root:root, mtimes fixed and the
    gzip header carries no name or time, so equal inputs give byte-identical archives.
    """
    check_layout(members)
    epoch = source_epoch()
    by_path = {member.path: member for member in members}
    entries = sorted(directories_of(by_path) | set(by_path))
    with (
        gzip.GzipFile(
            filename="", mode="wb", fileobj=target, mtime=0, compresslevel=GZIP_LEVEL
        ) as zipped,
        tarfile.open(fileobj=zipped, mode="w", format=tarfile.GNU_FORMAT) as tar,
    ):
        tar.addfile(_tarinfo(top_dir, tarfile.DIRTYPE, 0o755, 0, epoch))
        for path in entries:
            name = f"{top_dir}/{path}"
            member = by_path.get(path)
            if member is None:
                tar.addfile(_tarinfo(name, tarfile.DIRTYPE, 0o755, 0, epoch))
                continue
            info = _tarinfo(name, tarfile.REGTYPE, member.mode, member.size(), epoch)
            if member.data is not None:
                tar.addfile(info, io.BytesIO(member.data))
            else:
                with open(member.file(), "rb") as content:
                    tar.addfile(info, content)


def _tarinfo(name: str, kind: bytes, mode: int, size: int, epoch: int) -> tarfile.TarInfo:
    """A TarInfo with everything that varies between machines pinned."""
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = mode
    info.size = size
    info.mtime = epoch
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


# --------------------------------------------------------------------------------------------
# Manifest: skip what is already built


@dataclass(frozen=True, slots=True)
class Recipe:
    """Everything an artifact is made from; its digest decides whether a rebuild is needed."""

    dist_path: str
    inputs: dict[str, Any]

    def digest(self) -> str:
        """sha256 of the canonical JSON of the recipe (plus RECIPE_VERSION)."""
        text = json.dumps(
            {"recipe_version": RECIPE_VERSION, "dist_path": self.dist_path, "inputs": self.inputs},
            sort_keys=True,
        )
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass(slots=True)
class Manifest:
    """`manifest.json`: dist path → {recipe digest, sha512, size} of what the mirror holds."""

    path: Path
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> Manifest:
        """Read the manifest; a missing or unreadable one is empty (everything gets rebuilt)."""
        try:
            data = json.loads(path.read_text())
            entries = data["artifacts"] if isinstance(data.get("artifacts"), dict) else {}
        except (OSError, ValueError, AttributeError):
            entries = {}
        return cls(path, entries)

    def save(self) -> None:
        """Write atomically, so a crash never leaves a half-written manifest."""
        text = json.dumps({"artifacts": self.entries}, indent=2, sort_keys=True) + "\n"
        atomic_write_bytes(self.path, text.encode())

    def is_current(self, recipe: Recipe, root: Path) -> bool:
        """Whether the mirror holds this recipe's artifact intact, its `.sha512` agreeing.

        Re-hashes the artifact (about 1 s for all of them): a size check alone would miss a
        corrupted or hand-edited file, and serving one would fail every install downstream.
        """
        entry = self.entries.get(recipe.dist_path)
        artifact = root / recipe.dist_path
        checksum = root / (recipe.dist_path + ".sha512")
        if not entry or entry.get("recipe") != recipe.digest():
            return False
        if not artifact.is_file() or not checksum.is_file():
            return False
        if artifact.stat().st_size != entry.get("size"):
            return False
        try:
            published = parse_sha512(checksum.read_text(), artifact.name, source=str(checksum))
        except ValueError:
            return False
        return published == entry.get("sha512") == file_sha512(artifact)

    def record(self, recipe: Recipe, root: Path, sha512: str) -> None:
        """Remember a freshly published artifact and save the manifest."""
        size = (root / recipe.dist_path).stat().st_size
        self.entries[recipe.dist_path] = {"recipe": recipe.digest(), "sha512": sha512, "size": size}
        self.save()


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write a file via a temp file in the same directory and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", delete=False) as tmp:
        tmp.write(data)
        tmp.flush()
        os.fsync(tmp.fileno())
    os.chmod(tmp.name, 0o644)
    os.replace(tmp.name, path)


def publish(
    root: Path,
    recipe: Recipe,
    manifest: Manifest,
    produce: Callable[[BinaryIO], None],
    checksum_style: str = "sha512sum",
    subject: str = "",
    checked: bool = False,
) -> bool:
    """Publish the artifact at `root/recipe.dist_path` plus its `.sha512` unless it is current.

    `produce` writes the artifact's bytes to the stream it is given (a temp file renamed into
    place only once complete). `checked=True` says the caller already found it out of date.
    Returns True when something was built.
    """
    subject = subject or recipe.dist_path
    if not checked and manifest.is_current(recipe, root):
        progress(subject, f"up to date ({recipe.dist_path})")
        return False
    target = root / recipe.dist_path
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(
        dir=target.parent, prefix=f".{target.name}.", delete=False
    ) as tmp:
        try:
            produce(tmp)  # type: ignore[arg-type]  # a real binary file, typeshed wraps it
            tmp.flush()
            os.fsync(tmp.fileno())
        except BaseException:
            os.unlink(tmp.name)
            raise
    os.chmod(tmp.name, 0o644)
    sha512 = file_sha512(tmp.name)
    os.replace(tmp.name, target)
    formatter = format_gpg_print_md if checksum_style == "gpg" else format_sha512sum
    atomic_write_bytes(
        target.with_name(target.name + ".sha512"), formatter(sha512, target.name).encode()
    )
    manifest.record(recipe, root, sha512)
    size_mb = target.stat().st_size / 1e6
    progress(subject, f"wrote {recipe.dist_path} ({size_mb:.1f} MB, sha512 {sha512[:16]}...)")
    return True


# --------------------------------------------------------------------------------------------
# Maven and pip


#: The lines of a tool's output shown as it runs: the resolver's and pip's own progress
#: (what they download, with sizes) and their warnings; everything else only on failure.
SHOWN = re.compile(r"Download|Saved|Collecting|WARN|ERROR", re.IGNORECASE)


def run_tool(command: Sequence[str], what: str, hint: str, cwd: Path | None = None) -> None:
    """Run an external tool, showing its progress lines as they come (indented under the
    artifact's own); on failure raise MirrorError with its output's tail and a hint."""
    if shutil.which(command[0]) is None and not Path(command[0]).is_file():
        raise MirrorError(f"{command[0]} is not installed; {hint}")
    tail: collections.deque[str] = collections.deque(maxlen=25)
    with subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True) as process:
        for line in process.stdout or ():
            tail.append(line.rstrip())
            if SHOWN.search(line):
                print(f"    {line.rstrip()}", file=sys.stderr, flush=True)
    if process.returncode != 0:
        lines = "\n".join(tail)
        raise MirrorError(f"{what} failed (exit {process.returncode}):\n{lines}\n{hint}")


def maven_pom(roots: Sequence[str], bom: str | None = None) -> str:
    """A throwaway POM depending on `roots` (`group:artifact[:version]`).

    `bom` (`group:artifact:version`) is imported into dependencyManagement so roots without a
    version take the version the upstream project's parent POM manages.
    """

    def dependency(coordinate: str, extra: str = "") -> str:
        parts = coordinate.split(":")
        version = f"<version>{parts[2]}</version>" if len(parts) > 2 else ""
        return (
            f"<dependency><groupId>{parts[0]}</groupId><artifactId>{parts[1]}</artifactId>"
            f"{version}{extra}</dependency>"
        )

    managed = ""
    if bom:
        managed = (
            "<dependencyManagement><dependencies>"
            + dependency(bom, "<type>pom</type><scope>import</scope>")
            + "</dependencies></dependencyManagement>"
        )
    deps = "".join(dependency(root) for root in roots)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<project xmlns="http://maven.apache.org/POM/4.0.0">'
        "<modelVersion>4.0.0</modelVersion>"
        "<groupId>kafkaform.mirror</groupId><artifactId>resolve</artifactId><version>0</version>"
        "<packaging>pom</packaging>"
        f"{managed}<dependencies>{deps}</dependencies></project>\n"
    )


#: The super POM inside Maven's installation: the parent of every POM, defining Central.
SUPER_POM_ENTRY = "org/apache/maven/model/pom-4.0.0.xml"

#: Id of the generated mirror: the local repository records each artifact under it, so keeping
#: it stable lets later builds, even offline, reuse what earlier ones downloaded.
CENTRAL_MIRROR_ID = "central-only"

#: The repositories the generated mirror stands in for: every remote one (not file:// or
#: localhost), so repositories that dependency POMs declare are fetched from Central too.
CENTRAL_MIRROR_OF = "external:*"


def maven_home() -> Path:
    """Maven's installation directory, as `mvn --version` reports it."""
    hint = "install Maven (apt-get install maven) or put `mvn` on PATH"
    if shutil.which("mvn") is None:
        raise MirrorError(f"mvn is not installed; {hint}")
    result = subprocess.run(
        ["mvn", "--batch-mode", "--version"], capture_output=True, text=True, check=False
    )
    output = result.stdout + result.stderr
    home = parse_maven_home(output)
    if result.returncode != 0 or home is None:
        raise MirrorError(f"`mvn --version` reported no Maven home; {hint}:\n{output.strip()}")
    return home


def parse_maven_home(version_output: str) -> Path | None:
    """The directory of the "Maven home: ..." line of `mvn --version`, colour codes aside."""
    plain = re.sub(r"\x1b\[[0-9;]*m", "", version_output)
    found = re.search(r"^Maven home: (.+)$", plain, re.MULTILINE)
    return Path(found.group(1).strip()) if found else None


def _local_name(tag: str) -> str:
    """An XML tag without its namespace: Maven reads settings and POMs by local names."""
    return tag.rpartition("}")[2]


def _children(element: ET.Element, name: str) -> list[ET.Element]:
    """The child elements called `name`, whatever namespace the file uses."""
    return [child for child in element if _local_name(child.tag) == name]


def _child_text(element: ET.Element, name: str) -> str:
    """Stripped text of the first child called `name`, or "" if there is none."""
    found = _children(element, name)
    return (found[0].text or "").strip() if found else ""


def read_xml(path: Path, what: str) -> ET.Element:
    """Parse an XML file; a broken one raises MirrorError naming it."""
    try:
        return ET.parse(path).getroot()
    except (ET.ParseError, OSError) as error:
        raise MirrorError(f"cannot read {what} {path}: {error}; fix or remove it") from error


def settings_mirrors(path: Path) -> list[str]:
    """Ids of the mirrors a Maven settings.xml declares; [] when the file does not exist.

    Blocked mirrors do not count: they only refuse repositories (Maven's own global settings
    block plain-HTTP ones that way) and serve nothing in their place.
    """
    if not path.is_file():
        return []
    root = read_xml(path, "Maven settings")
    return [
        _child_text(mirror, "id")
        for mirrors in _children(root, "mirrors")
        for mirror in _children(mirrors, "mirror")
        if _child_text(mirror, "blocked").lower() != "true"
    ]


def central_url_of_super_pom(pom: bytes) -> str | None:
    """The URL of the `central` repository a super POM declares."""
    root = ET.fromstring(pom)
    for repositories in _children(root, "repositories"):
        for repository in _children(repositories, "repository"):
            if _child_text(repository, "id") == "central":
                return _child_text(repository, "url") or None
    return None


def maven_central_url(home: Path) -> str:
    """Central as the Maven installation at `home` defines it, read from its super POM."""
    lib = home / "lib"
    # maven-model-builder holds the super POM; other jars are searched in case a release moves it.
    jars = sorted(lib.glob("maven-model-builder-*.jar"))
    jars += [jar for jar in sorted(lib.glob("maven-*.jar")) if jar not in jars]
    for jar in jars:
        pom = jar_entry(jar, SUPER_POM_ENTRY)
        url = central_url_of_super_pom(pom) if pom is not None else None
        if url:
            return url
    raise MirrorError(
        f"found no super POM ({SUPER_POM_ENTRY}) declaring `central` in the jars of {lib};"
        " is this a complete Maven installation?"
    )


def central_mirror_settings(global_settings: Path, central_url: str) -> bytes:
    """Maven's global settings (if any) plus a mirror of every external repository on Central."""
    if global_settings.is_file():
        root = read_xml(global_settings, "Maven global settings")
    else:
        root = ET.Element("settings")
    # Maven matches elements by local name; plain names spare ElementTree's ns0: prefixes.
    for element in root.iter():
        element.tag = _local_name(element.tag)
    mirrors = next(iter(_children(root, "mirrors")), None)
    if mirrors is None:
        mirrors = ET.SubElement(root, "mirrors")
    mirror = ET.Element("mirror")
    for name, text in (
        ("id", CENTRAL_MIRROR_ID),
        ("mirrorOf", CENTRAL_MIRROR_OF),
        ("url", central_url),
    ):
        ET.SubElement(mirror, name).text = text
    # First, so it wins over a pattern mirror such as the plain-HTTP blocker.
    mirrors.insert(0, mirror)
    data: bytes = ET.tostring(root, encoding="UTF-8", xml_declaration=True)
    return data


def maven_settings_args(work: Path, home: Path, user_settings: Path | None = None) -> list[str]:
    """Maven options that keep resolution on the repositories the machine is configured for.

    Spark's parent POM declares a Google Cloud mirror of Central as a repository; it is
    unreachable here and Maven would try it first. A mirror in the user settings
    (`user_settings`, default ~/.m2/settings.xml) or in the installation's global settings
    (`home`/conf/settings.xml) already decides where such repositories go: Maven then runs as
    configured, with no options. Otherwise `-gs` names a copy of the global settings with one
    mirror added, sending every external repository to Central as the installation's own super
    POM names it. The user settings stay where Maven reads them, so their servers, proxies and
    local repository still apply, and no host name is written here.
    """
    user_settings = user_settings or Path.home() / ".m2" / "settings.xml"
    global_settings = home / "conf" / "settings.xml"
    if settings_mirrors(user_settings) or settings_mirrors(global_settings):
        return []
    settings = work / "global-settings.xml"
    settings.write_bytes(central_mirror_settings(global_settings, maven_central_url(home)))
    return ["-gs", str(settings)]


def maven_resolve(roots: Sequence[str], work: Path, bom: str | None = None) -> list[Path]:
    """Copy the runtime dependency closure of `roots` (roots included) into `work/jars`.

    Maven runs with the machine's own configuration (see maven_settings_args) and the user's
    ~/.m2 repository, so jars already downloaded are not fetched again; `--strict-checksums`
    makes a corrupted download fail instead of landing in an archive.
    """
    work.mkdir(parents=True, exist_ok=True)
    (work / "pom.xml").write_text(maven_pom(roots, bom))
    out = work / "jars"
    command = [
        "mvn", "-B", "--strict-checksums", "-f", str(work / "pom.xml"),
        *maven_settings_args(work, maven_home()),
        f"{DEPENDENCY_PLUGIN}:copy-dependencies",
        "-DincludeScope=runtime",
        "-Dmdep.useRepositoryLayout=false",
        f"-DoutputDirectory={out}",
    ]  # fmt: skip
    hint = (
        "check that the Maven repositories your settings.xml configures (or Maven Central) are"
        f" reachable and that `mvn` works (apt-get install maven); the generated POM is"
        f" {work / 'pom.xml'}"
    )
    run_tool(command, "maven dependency resolution", hint)
    jars = sorted(out.glob("*.jar"))
    if not jars:
        raise MirrorError(f"maven resolved no jars for {', '.join(roots)}; {hint}")
    return jars


def pyspark_sdist(version: str, cache: Path) -> Path:
    """The `pyspark==version` sdist, downloaded once into `cache/pypi` (~450 MB).

    `pip download` fetches it from the package index pip is configured for (pip.conf,
    PIP_INDEX_URL), so a company's own index works unchanged.
    """
    target = cache / "pypi" / f"pyspark-{version}.tar.gz"
    if target.is_file():
        return target
    progress(f"spark {version}", "downloading pyspark sdist with pip (~450 MB, once)")
    command = [
        sys.executable, "-m", "pip", "download", "--progress-bar", "off", "--no-deps",
        "--no-binary", ":all:", f"pyspark=={version}", "-d", str(target.parent),
    ]  # fmt: skip
    hint = (
        "check that the package index pip is configured for is reachable (`pip config list`,"
        f" proxy); the download goes to {target.parent}"
    )
    run_tool(command, f"pip download pyspark=={version}", hint)
    if not target.is_file():
        raise MirrorError(f"pip did not leave {target}; {hint}")
    return target


def jar_entry(jar: Path, entry: str) -> bytes | None:
    """Bytes of `entry` inside a jar, or None if it is not there."""
    with zipfile.ZipFile(jar) as archive:
        try:
            return archive.read(entry)
        except KeyError:
            return None


# --------------------------------------------------------------------------------------------
# Kafka


#: Kafka 4's POMs declare log4j-core but not the SLF4J binding its release ships in libs/:
#: without it the broker logs nothing. Its version must be the log4j-core Maven resolves.
KAFKA4_SLF4J_BINDING = "org.apache.logging.log4j:log4j-slf4j-impl:2.25.3"


def kafka_roots(component: Component) -> list[str]:
    """Maven roots of the Kafka release's libs/: the broker and the command-line tools (and on
    Kafka 4 the logging binding)."""
    return [
        f"org.apache.kafka:kafka_2.13:{component.version}",
        f"org.apache.kafka:kafka-tools:{component.version}",
        *([KAFKA4_SLF4J_BINDING] if kafka_major(component.version) >= 4 else []),
    ]


def check_kafka_binding(component: Component, jars: Sequence[Path]) -> None:
    """Kafka 4: the SLF4J binding and the log4j-core it binds to are one log4j release."""
    if kafka_major(component.version) < 4:
        return
    core = resolved_version_of("log4j-core", jars)
    binding = KAFKA4_SLF4J_BINDING.rsplit(":", 1)[1]
    if core is None or core.name != f"log4j-core-{binding}.jar":
        raise MirrorError(
            f"kafka {component.version}: its POM resolves {core.name if core else 'no log4j-core'}"
            f" but the SLF4J binding is {binding}; set KAFKA4_SLF4J_BINDING in kafkaform/mirror.py"
            " to the same log4j version"
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

#: The scripts' texts take the release's logging option where they read @LOGGING@ (log4j 1.x
#: properties on Kafka 3, log4j2 YAML on Kafka 4): see :func:`kafka_layout`.
LOGGING = "@LOGGING@"

KAFKA_RUN_CLASS = """\
#!/usr/bin/env bash
# Minimal kafka-run-class.sh: what the release's script does for a plain Linux JVM.
# Usage: kafka-run-class.sh [-daemon] [-name NAME] CLASS [ARGS...]
set -e
base_dir=$(cd "$(dirname "$0")/.." && pwd)
CLASSPATH="$base_dir/libs/*${CLASSPATH:+:$CLASSPATH}"
KAFKA_LOG4J_OPTS=${KAFKA_LOG4J_OPTS:-"@LOGGING@"}
KAFKA_HEAP_OPTS=${KAFKA_HEAP_OPTS:-"-Xmx256M"}
LOG_DIR=${LOG_DIR:-"$base_dir/logs"}
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java
daemon=""
name=""
while [ $# -gt 0 ]; do
  case "$1" in
    -daemon) daemon=1; shift ;;
    -name) name=$2; shift 2 ;;
    *) break ;;
  esac
done
# shellcheck disable=SC2086  # option strings are word-split on purpose, as upstream does
set -- $KAFKA_HEAP_OPTS $KAFKA_JVM_PERFORMANCE_OPTS $KAFKA_JMX_OPTS $KAFKA_LOG4J_OPTS \\
  -Dkafka.logs.dir="$LOG_DIR" $KAFKA_OPTS -cp "$CLASSPATH" "$@"
if [ -n "$daemon" ]; then
  mkdir -p "$LOG_DIR"
  nohup "$JAVA" "$@" >"$LOG_DIR/${name:-kafka}.out" 2>&1 </dev/null &
else
  exec "$JAVA" "$@"
fi
"""

KAFKA_SERVER_START = """\
#!/usr/bin/env bash
# Usage: kafka-server-start.sh [-daemon] server.properties [--override property=value]*
base_dir=$(dirname "$0")
log4j="@LOGGING@"
export KAFKA_LOG4J_OPTS=${KAFKA_LOG4J_OPTS:-$log4j}
export KAFKA_HEAP_OPTS=${KAFKA_HEAP_OPTS:-"-Xmx1G -Xms1G"}
extra=""
if [ "$1" = "-daemon" ]; then extra="-daemon -name kafkaServer"; shift; fi
# shellcheck disable=SC2086
exec "$base_dir/kafka-run-class.sh" $extra kafka.Kafka "$@"
"""

KAFKA_SERVER_STOP = """\
#!/usr/bin/env bash
# Like the release's script: SIGTERM every kafka.Kafka JVM on this host.
pids=$(pgrep -f 'java.*kafka\\.Kafka' || true)
if [ -z "$pids" ]; then echo "No kafka server to stop"; exit 1; fi
# shellcheck disable=SC2086
kill -s TERM $pids
"""

KAFKA_SERVER_PROPERTIES = """\
# Broker defaults as in the Kafka release's config/server.properties (ZooKeeper mode).
# kafkaform's kafka_broker role writes its own; this file is the release's example.
broker.id=0
#listeners=PLAINTEXT://:9092
num.network.threads=3
num.io.threads=8
socket.send.buffer.bytes=102400
socket.receive.buffer.bytes=102400
socket.request.max.bytes=104857600
log.dirs=/tmp/kafka-logs
num.partitions=1
num.recovery.threads.per.data.dir=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
log.retention.hours=168
log.retention.check.interval.ms=300000
zookeeper.connect=localhost:2181
zookeeper.connection.timeout.ms=18000
group.initial.rebalance.delay.ms=0
"""

KAFKA_ZOOKEEPER_PROPERTIES = """\
# As the Kafka release's config/zookeeper.properties: a single-node ZooKeeper for trying Kafka.
dataDir=/tmp/zookeeper
clientPort=2181
maxClientCnxns=0
admin.enableServer=false
"""

KAFKA_LOG4J = """\
# log4j 1.x syntax, read by reload4j (Kafka 3.9's binding): the broker's logs under kafka.logs.dir.
log4j.rootLogger=INFO, stdout, kafkaAppender

log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n

log4j.appender.kafkaAppender=org.apache.log4j.DailyRollingFileAppender
log4j.appender.kafkaAppender.DatePattern='.'yyyy-MM-dd-HH
log4j.appender.kafkaAppender.File=${kafka.logs.dir}/server.log
log4j.appender.kafkaAppender.layout=org.apache.log4j.PatternLayout
log4j.appender.kafkaAppender.layout.ConversionPattern=[%d] %p %m (%c)%n

log4j.appender.controllerAppender=org.apache.log4j.DailyRollingFileAppender
log4j.appender.controllerAppender.DatePattern='.'yyyy-MM-dd-HH
log4j.appender.controllerAppender.File=${kafka.logs.dir}/controller.log
log4j.appender.controllerAppender.layout=org.apache.log4j.PatternLayout
log4j.appender.controllerAppender.layout.ConversionPattern=[%d] %p %m (%c)%n

log4j.appender.stateChangeAppender=org.apache.log4j.DailyRollingFileAppender
log4j.appender.stateChangeAppender.DatePattern='.'yyyy-MM-dd-HH
log4j.appender.stateChangeAppender.File=${kafka.logs.dir}/state-change.log
log4j.appender.stateChangeAppender.layout=org.apache.log4j.PatternLayout
log4j.appender.stateChangeAppender.layout.ConversionPattern=[%d] %p %m (%c)%n

log4j.logger.org.apache.zookeeper=INFO
log4j.logger.kafka=INFO
log4j.logger.org.apache.kafka=INFO
log4j.logger.kafka.request.logger=WARN
log4j.additivity.kafka.request.logger=false
log4j.logger.kafka.controller=TRACE, controllerAppender
log4j.additivity.kafka.controller=false
log4j.logger.state.change.logger=INFO, stateChangeAppender
log4j.additivity.state.change.logger=false
"""

KAFKA_TOOLS_LOG4J = """\
# Command-line tools log warnings to stderr only, so their stdout stays parseable.
log4j.rootLogger=WARN, stderr

log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.appender.stderr.Target=System.err
"""

KAFKA_CLIENT_PROPERTIES = {
    "producer.properties": "bootstrap.servers=localhost:9092\ncompression.type=none\n",
    "consumer.properties": "bootstrap.servers=localhost:9092\ngroup.id=test-consumer-group\n",
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

KAFKA4_SERVER_PROPERTIES = """\
# As the Kafka release's config/server.properties: one node that is broker and controller.
# kafkaform's kafka_broker role writes its own; this file is the release's example.
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=localhost:9093
listeners=PLAINTEXT://:9092,CONTROLLER://:9093
advertised.listeners=PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=/tmp/kraft-combined-logs
num.partitions=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
log.retention.hours=168
"""

KAFKA4_LOG4J2 = """\
# log4j2 (Kafka 4's logging): the broker's logs under kafka.logs.dir.
Configuration:
  Properties:
    Property:
      - name: "kafka.logs.dir"
        value: "."
      - name: "logPattern"
        value: "[%d] %p %m (%c)%n"
  Appenders:
    Console:
      name: STDOUT
      PatternLayout:
        pattern: "${logPattern}"
    RollingFile:
      - name: KafkaAppender
        fileName: "${sys:kafka.logs.dir}/server.log"
        filePattern: "${sys:kafka.logs.dir}/server.log.%d{yyyy-MM-dd-HH}"
        PatternLayout:
          pattern: "${logPattern}"
        TimeBasedTriggeringPolicy:
          modulate: true
          interval: 1
  Loggers:
    Root:
      level: INFO
      AppenderRef:
        - ref: STDOUT
        - ref: KafkaAppender
    Logger:
      - name: kafka.request.logger
        level: WARN
        additivity: false
        AppenderRef:
          ref: KafkaAppender
"""

KAFKA4_TOOLS_LOG4J2 = """\
# Command-line tools log warnings to stderr only, so their stdout stays parseable.
Configuration:
  Appenders:
    Console:
      name: STDERR
      target: SYSTEM_ERR
      PatternLayout:
        pattern: "[%d] %p %m (%c)%n"
  Loggers:
    Root:
      level: WARN
      AppenderRef:
        - ref: STDERR
"""


@dataclass(frozen=True)
class KafkaLayout:
    """What a Kafka line's archive holds besides its jars: bin/ scripts, config/ files."""

    scripts: dict[str, str]
    run_class: str
    server_start: str
    config: dict[str, str]

    def digest(self) -> str:
        """A digest of every generated file: the recipe changes when one does."""
        return hashlib.sha256(json.dumps(
            [self.scripts, self.run_class, self.server_start, KAFKA_SERVER_STOP, self.config]
        ).encode()).hexdigest()  # fmt: skip


def kafka_layout(component: Component) -> KafkaLayout:
    """Kafka 3's layout (reload4j, log4j 1.x files), or Kafka 4's (log4j2 YAML files)."""
    clients = KAFKA_CLIENT_PROPERTIES
    if kafka_major(component.version) < 4:
        option = "-Dlog4j.configuration=file:{}.properties"
        return KafkaLayout(
            KAFKA_SCRIPTS,
            KAFKA_RUN_CLASS.replace(LOGGING, option.format("$base_dir/config/tools-log4j")),
            KAFKA_SERVER_START.replace(LOGGING, option.format("$base_dir/../config/log4j")),
            {"server.properties": KAFKA_SERVER_PROPERTIES,
             "zookeeper.properties": KAFKA_ZOOKEEPER_PROPERTIES,
             "log4j.properties": KAFKA_LOG4J,
             "tools-log4j.properties": KAFKA_TOOLS_LOG4J, **clients})
    option = "-Dlog4j2.configurationFile={}.yaml"
    return KafkaLayout(
        KAFKA4_SCRIPTS,
        KAFKA_RUN_CLASS.replace(LOGGING, option.format("$base_dir/config/tools-log4j2")),
        KAFKA_SERVER_START.replace(LOGGING, option.format("$base_dir/../config/log4j2")),
        {"server.properties": KAFKA4_SERVER_PROPERTIES, "log4j2.yaml": KAFKA4_LOG4J2,
         "tools-log4j2.yaml": KAFKA4_TOOLS_LOG4J2, **clients})


def kafka_members(component: Component, jars: Sequence[Path]) -> list[Member]:
    """The Kafka release layout: bin/, config/, libs/ (+ LICENSE/NOTICE from the kafka jar)."""
    layout = kafka_layout(component)
    check_kafka_binding(component, jars)
    members = [file_member(f"libs/{jar.name}", jar, executable=False) for jar in jars]
    members.append(text_member("bin/kafka-run-class.sh", layout.run_class, executable=True))
    members.append(text_member("bin/kafka-server-start.sh", layout.server_start, executable=True))
    members.append(text_member("bin/kafka-server-stop.sh", KAFKA_SERVER_STOP, executable=True))
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


# --------------------------------------------------------------------------------------------
# ZooKeeper


def zookeeper_roots(component: Component) -> list[str]:
    """Maven roots of the ZooKeeper release's lib/ (versions from ZooKeeper's parent POM).

    The release also ships zookeeper-prometheus-metrics, but 3.8.4's is not on Maven Central:
    the mirror's ZooKeeper cannot enable `metricsProvider.className=...PrometheusMetricsProvider`.
    """
    return [f"org.apache.zookeeper:zookeeper:{component.version}", *ZOOKEEPER_PROVIDED]


def zookeeper_bom(component: Component) -> str:
    """ZooKeeper's parent POM, whose dependencyManagement gives the `provided` versions."""
    return f"org.apache.zookeeper:parent:{component.version}"


ZOO_SAMPLE_CFG = """\
# The number of milliseconds of each tick
tickTime=2000
# The number of ticks that the initial
# synchronization phase can take
initLimit=10
# The number of ticks that can pass between
# sending a request and getting an acknowledgement
syncLimit=5
# the directory where the snapshot is stored.
# do not use /tmp for storage, /tmp here is just
# example sakes.
dataDir=/tmp/zookeeper
# the port at which the clients will connect
clientPort=2181
# the maximum number of client connections.
# increase this if you need to handle more clients
#maxClientCnxns=60
#
# Be sure to read the maintenance section of the
# administrator guide before turning on autopurge.
#
# https://zookeeper.apache.org/doc/current/zookeeperAdmin.html#sc_maintenance
#
# The number of snapshots to retain in dataDir
#autopurge.snapRetainCount=3
# Purge task interval in hours
# Set to "0" to disable auto purge feature
#autopurge.purgeInterval=1

## Metrics Providers
#
# https://prometheus.io Metrics Exporter
#metricsProvider.className=org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider
#metricsProvider.httpHost=0.0.0.0
#metricsProvider.httpPort=7000
#metricsProvider.exportJvmInfo=true
"""

ZOO_LOGBACK = """\
<!-- As the ZooKeeper release's conf/logback.xml: console logging, file appender available. -->
<configuration>
  <property name="zookeeper.console.threshold" value="INFO" />
  <property name="zookeeper.log.dir" value="." />
  <property name="zookeeper.log.file" value="zookeeper.log" />
  <property name="zookeeper.log.threshold" value="INFO" />
  <property name="zookeeper.log.maxfilesize" value="256MB" />
  <property name="zookeeper.log.maxbackupindex" value="20" />

  <appender name="CONSOLE" class="ch.qos.logback.core.ConsoleAppender">
    <encoder>
      <pattern>%d{ISO8601} [myid:%X{myid}] - %-5p [%t:%C{1}@%L] - %m%n</pattern>
    </encoder>
    <filter class="ch.qos.logback.classic.filter.ThresholdFilter">
      <level>${zookeeper.console.threshold}</level>
    </filter>
  </appender>

  <root level="INFO">
    <appender-ref ref="CONSOLE" />
  </root>
</configuration>
"""

ZK_ENV = """\
#!/usr/bin/env bash
# Minimal zkEnv.sh: classpath and configuration directory of this installation.
ZOOBINDIR=${ZOOBINDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
ZOOKEEPER_PREFIX=$(cd "$ZOOBINDIR/.." && pwd)
ZOOCFGDIR=${ZOOCFGDIR:-$ZOOKEEPER_PREFIX/conf}
ZOOCFG=${ZOOCFG:-zoo.cfg}
ZOO_LOG_DIR=${ZOO_LOG_DIR:-$ZOOKEEPER_PREFIX/logs}
CLASSPATH="$ZOOCFGDIR:$ZOOKEEPER_PREFIX/lib/*${CLASSPATH:+:$CLASSPATH}"
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java
export ZOOBINDIR ZOOKEEPER_PREFIX ZOOCFGDIR ZOOCFG ZOO_LOG_DIR CLASSPATH JAVA
"""

ZK_SERVER = """\
#!/usr/bin/env bash
# Minimal zkServer.sh: start-foreground [zoo.cfg] (services run the JVM directly).
. "$(dirname "$0")/zkEnv.sh"
case "${1:-}" in
  start-foreground)
    cfg=${2:-$ZOOCFGDIR/$ZOOCFG}
    # shellcheck disable=SC2086
    exec "$JAVA" -Dzookeeper.log.dir="$ZOO_LOG_DIR" $SERVER_JVMFLAGS $JVMFLAGS \\
      -cp "$CLASSPATH" org.apache.zookeeper.server.quorum.QuorumPeerMain "$cfg" ;;
  *)
    echo "Usage: $0 start-foreground [zoo.cfg]" >&2; exit 2 ;;
esac
"""

ZK_CLI = """\
#!/usr/bin/env bash
. "$(dirname "$0")/zkEnv.sh"
# shellcheck disable=SC2086
exec "$JAVA" $CLIENT_JVMFLAGS $JVMFLAGS -cp "$CLASSPATH" org.apache.zookeeper.ZooKeeperMain "$@"
"""

ZK_CLEANUP = """\
#!/usr/bin/env bash
# zkCleanup.sh -n COUNT: purge old snapshots/logs of the dirs named in zoo.cfg (count >= 3).
. "$(dirname "$0")/zkEnv.sh"
cfg=$ZOOCFGDIR/$ZOOCFG
data=$(sed -n 's/^dataDir=//p' "$cfg")
logs=$(sed -n 's/^dataLogDir=//p' "$cfg")
exec "$JAVA" -cp "$CLASSPATH" org.apache.zookeeper.server.PurgeTxnLog "${logs:-$data}" "$data" "$@"
"""


def zookeeper_members(component: Component, jars: Sequence[Path]) -> list[Member]:
    """The ZooKeeper release layout: bin/, conf/{zoo_sample.cfg,logback.xml}, lib/."""
    members = [file_member(f"lib/{jar.name}", jar, executable=False) for jar in jars]
    members += [
        text_member("bin/zkEnv.sh", ZK_ENV, executable=True),
        text_member("bin/zkServer.sh", ZK_SERVER, executable=True),
        text_member("bin/zkCli.sh", ZK_CLI, executable=True),
        text_member("bin/zkCleanup.sh", ZK_CLEANUP, executable=True),
        text_member("conf/zoo_sample.cfg", ZOO_SAMPLE_CFG),
        text_member("conf/logback.xml", ZOO_LOGBACK),
    ]
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


# --------------------------------------------------------------------------------------------
# Spark

SPARK_START_MASTER = """\
#!/usr/bin/env bash
# Minimal start-master.sh (pyspark ships no start scripts): a master via spark-daemon.sh.
export SPARK_HOME=${SPARK_HOME:-$(cd "$(dirname "$0")/.." && pwd)}
. "$SPARK_HOME/sbin/spark-config.sh"
. "$SPARK_HOME/bin/load-spark-env.sh"
SPARK_MASTER_PORT=${SPARK_MASTER_PORT:-7077}
SPARK_MASTER_WEBUI_PORT=${SPARK_MASTER_WEBUI_PORT:-8080}
SPARK_MASTER_HOST=${SPARK_MASTER_HOST:-$(hostname -f)}
exec "$SPARK_HOME/sbin/spark-daemon.sh" start org.apache.spark.deploy.master.Master 1 \\
  --host "$SPARK_MASTER_HOST" --port "$SPARK_MASTER_PORT" \\
  --webui-port "$SPARK_MASTER_WEBUI_PORT" "$@"
"""

SPARK_START_WORKER = """\
#!/usr/bin/env bash
# Minimal start-worker.sh: start-worker.sh spark://HOST:PORT [worker options]
export SPARK_HOME=${SPARK_HOME:-$(cd "$(dirname "$0")/.." && pwd)}
. "$SPARK_HOME/sbin/spark-config.sh"
. "$SPARK_HOME/bin/load-spark-env.sh"
if [ $# -lt 1 ]; then echo "Usage: $0 spark://HOST:PORT [options]" >&2; exit 1; fi
exec "$SPARK_HOME/sbin/spark-daemon.sh" start org.apache.spark.deploy.worker.Worker 1 \\
  --webui-port "${SPARK_WORKER_WEBUI_PORT:-8081}" "$@"
"""


def spark_stop_script(main_class: str) -> str:
    """stop-master.sh / stop-worker.sh: stop the daemon spark-daemon.sh started."""
    return (
        "#!/usr/bin/env bash\n"
        'export SPARK_HOME=${SPARK_HOME:-$(cd "$(dirname "$0")/.." && pwd)}\n'
        f'exec "$SPARK_HOME/sbin/spark-daemon.sh" stop {main_class} 1\n'
    )


SPARK_ENV_TEMPLATE = """\
#!/usr/bin/env bash
# Copy to spark-env.sh; sourced by Spark's scripts. Standalone daemons read, for example:
# SPARK_MASTER_HOST, SPARK_MASTER_PORT, SPARK_MASTER_WEBUI_PORT
# SPARK_WORKER_CORES, SPARK_WORKER_MEMORY, SPARK_WORKER_WEBUI_PORT, SPARK_WORKER_DIR
"""

SPARK_DEFAULTS_TEMPLATE = """\
# Default system properties included when running spark-submit.
# spark.master                     spark://master:7077
# spark.eventLog.enabled           true
# spark.serializer                 org.apache.spark.serializer.KryoSerializer
"""


def spark_members(component: Component, sdist_root: Path) -> list[Member]:
    """The Spark release layout from an unpacked pyspark sdist (`deps/` and `lib/`)."""
    deps = sdist_root / "deps"
    members: list[Member] = []
    for subdir in ("bin", "sbin", "jars"):
        base = deps / subdir
        if not base.is_dir():
            raise MirrorError(f"{sdist_root.name}: no deps/{subdir}/; is this a pyspark sdist?")
        for path in sorted(p for p in base.rglob("*") if p.is_file()):
            rel = path.relative_to(deps).as_posix()
            executable = subdir != "jars" and not path.name.endswith(".cmd")
            members.append(file_member(rel, path, executable=executable))
    for path in sorted((sdist_root / "lib").glob("*.zip")):
        members.append(file_member(f"python/lib/{path.name}", path, executable=False))
    for name in ("LICENSE", "NOTICE", "README.md"):
        if (sdist_root / name).is_file():
            members.append(file_member(name, sdist_root / name, executable=False))
    have = {m.path for m in members}
    for name, text in (
        ("sbin/start-master.sh", SPARK_START_MASTER),
        ("sbin/start-worker.sh", SPARK_START_WORKER),
        ("sbin/stop-master.sh", spark_stop_script("org.apache.spark.deploy.master.Master")),
        ("sbin/stop-worker.sh", spark_stop_script("org.apache.spark.deploy.worker.Worker")),
    ):
        if name not in have:
            members.append(text_member(name, text, executable=True))
    members.append(text_member("conf/spark-env.sh.template", SPARK_ENV_TEMPLATE))
    members.append(text_member("conf/spark-defaults.conf.template", SPARK_DEFAULTS_TEMPLATE))
    # The release's conf/log4j2.properties.template is the logging default Spark bundles (in
    # spark-common-utils since 4.0, spark-core before).
    log4j = None
    for module in ("common-utils", "core"):
        jar = deps / "jars" / f"spark-{module}_2.13-{component.version}.jar"
        if log4j is None and jar.is_file():
            log4j = jar_entry(jar, "org/apache/spark/log4j2-defaults.properties")
    if log4j is not None:
        members.append(Member("conf/log4j2.properties.template", data=log4j))
    release = (
        f"Spark {component.version} built for Hadoop 3 (from PyPI pyspark {component.version})\n"
    )
    members.append(text_member("RELEASE", release))
    return members


def unpack_sdist(sdist: Path, work: Path) -> Path:
    """Unpack the parts of the pyspark sdist the release layout needs; return its root dir."""
    wanted = re.compile(
        r"^[^/]+/(deps/(bin|sbin|jars)/|lib/[^/]+\.zip$|(LICENSE|NOTICE|README\.md)$)"
    )
    with tarfile.open(sdist, "r:gz") as tar:
        members = [m for m in tar.getmembers() if wanted.match(m.name)]
        roots = {m.name.split("/", 1)[0] for m in members}
        if len(roots) != 1:
            raise MirrorError(f"{sdist}: unexpected sdist layout (top directories {sorted(roots)})")
        extract_safely(tar, work, members)
    return work / roots.pop()


def extract_safely(tar: tarfile.TarFile, into: Path,
                   members: Sequence[tarfile.TarInfo] | None = None) -> None:
    """Extract with the "data" filter (PEP 706): nothing lands outside ``into``, no device files.

    Python 3.11.0 to 3.11.3 (Debian 12's python3 is 3.11.2) have no filters: there the same
    rules are checked here first, and any member that breaks them stops the extraction.
    """
    if hasattr(tarfile, "data_filter"):
        tar.extractall(into, members=members, filter="data")
        return
    root = into.resolve()
    chosen = list(members) if members is not None else tar.getmembers()
    for member in chosen:
        target = (root / member.name).resolve()
        linked = (target.parent / member.linkname).resolve() if member.issym() else \
            (root / member.linkname).resolve() if member.islnk() else target
        if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
            raise MirrorError(f"{member.name} is not a file, directory or link")
        for path in (target, linked):
            if path != root and root not in path.parents:
                raise MirrorError(f"{member.name} would land outside {into}")
    tar.extractall(into, members=chosen)  # every member checked above


# --------------------------------------------------------------------------------------------
# Building


@dataclass(frozen=True, slots=True)
class BuildOptions:
    """Where the mirror goes and where downloads and scratch space are."""

    mirror_dir: Path
    cache: Path
    only: frozenset[str] = frozenset()

    def wants(self, name: str) -> bool:
        """Whether `--only` selects this component (everything when no `--only`)."""
        return not self.only or name in self.only


def kafka_recipe(component: Component) -> Recipe:
    """Recipe of the Kafka archive: catalog entry, Maven roots and the generated files."""
    files = kafka_layout(component).digest()
    inputs = {"component": asdict(component), "maven": kafka_roots(component), "files": files}
    return Recipe(component.dist_path, inputs)


def zookeeper_recipe(component: Component) -> Recipe:
    """Recipe of the ZooKeeper archive."""
    files = hashlib.sha256(
        json.dumps([ZOO_SAMPLE_CFG, ZOO_LOGBACK, ZK_ENV, ZK_SERVER, ZK_CLI, ZK_CLEANUP]).encode()
    ).hexdigest()
    inputs = {
        "component": asdict(component),
        "maven": zookeeper_roots(component),
        "bom": zookeeper_bom(component),
        "files": files,
    }
    return Recipe(component.dist_path, inputs)


def spark_recipe(component: Component) -> Recipe:
    """Recipe of the Spark archive: catalog entry and the pyspark sdist it is made from."""
    files = hashlib.sha256(
        json.dumps([SPARK_START_MASTER, SPARK_START_WORKER, SPARK_ENV_TEMPLATE,
                    SPARK_DEFAULTS_TEMPLATE]).encode()
    ).hexdigest()  # fmt: skip
    inputs = {
        "component": asdict(component),
        "pypi": f"pyspark=={component.version}",
        "files": files,
    }
    return Recipe(component.dist_path, inputs)


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


def build_connector(catalog: Catalog, options: BuildOptions, manifest: Manifest) -> int:
    """Publish the Spark Kafka connector jars; check their versions against Spark's POM."""
    spark = catalog.spark
    subject = f"spark {spark.version} connector"
    jars = catalog.spark_kafka_connector
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
                    f" {declared}; update spark_kafka_connector in kafkaform/catalog.py"
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


def copy_file(source: Path, out: BinaryIO) -> None:
    """Copy a file's bytes into an open stream."""
    with source.open("rb") as stream:
        shutil.copyfileobj(stream, out)


def resolved_version_of(artifact: str, jars: Sequence[Path]) -> Path | None:
    """The jar of `artifact` in Maven's output: `<artifact>-<version>.jar`, version digit-first."""
    prefix = f"{artifact}-"
    for jar in jars:
        rest = jar.name[len(prefix) :] if jar.name.startswith(prefix) else ""
        if rest[:1].isdigit() and rest.endswith(".jar"):
            return jar
    return None


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
        zk = catalog.zookeeper
        built += build_maven_component(
            zk, zookeeper_recipe(zk), zookeeper_roots(zk), zookeeper_bom(zk),
            zookeeper_members, options, manifest, "sha512sum",
        )  # fmt: skip
    if options.wants("kafka"):
        # Kafka's own releases are signed with `gpg --print-md`: keep that shape, so roles meet
        # both checksum formats end to end.
        for kf in (catalog.kafka, catalog.kafka_upgrade):
            built += build_maven_component(
                kf, kafka_recipe(kf), kafka_roots(kf), None, kafka_members, options, manifest,
                "gpg",
            )  # fmt: skip
    if options.wants("spark"):
        built += build_spark(catalog.spark, options, manifest)
        built += build_connector(catalog, options, manifest)
    if options.wants(JMX_EXPORTER):
        built += build_jar(catalog.jmx_exporter, options, manifest)
    return built


# --------------------------------------------------------------------------------------------
# Command line


def handle_build(args: argparse.Namespace) -> int:
    """`kafkaform mirror build`."""
    known = {c.name for c in CATALOG.components} | {JMX_EXPORTER}
    unknown = set(args.only) - known
    if unknown:
        print(f"error: unknown component(s) {sorted(unknown)}; choose from {sorted(known)}",
              file=sys.stderr)  # fmt: skip
        return 2
    options = BuildOptions(Path(args.dir), cache_root(), frozenset(args.only))
    started = time.monotonic()
    try:
        built = build(options)
    except MirrorError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"error: {error}; check free space and permissions of {options.mirror_dir} and "
              f"{options.cache}", file=sys.stderr)  # fmt: skip
        return 1
    elapsed = time.monotonic() - started
    print(f"mirror {options.mirror_dir}: {built} artifact(s) built, {elapsed:.1f} s",
          file=sys.stderr)  # fmt: skip
    return 0


def handle_serve(args: argparse.Namespace) -> int:
    """`kafkaform mirror serve`: a threaded static HTTP server over the mirror directory."""
    directory = Path(args.dir)
    if not (directory / MANIFEST).is_file():
        print(f"error: {directory} holds no mirror; run `kafkaform mirror build --dir {directory}`",
              file=sys.stderr)  # fmt: skip
        return 1
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(directory))
    try:
        server = http.server.ThreadingHTTPServer((args.bind, args.port), handler)
    except OSError as error:
        print(f"error: cannot listen on {args.bind}:{args.port}: {error}", file=sys.stderr)
        return 1
    with server:
        # The bound port, not args.port: `--port 0` picks a free one (tests use that).
        port = server.server_address[1]
        print(f"serving {directory} at http://{args.bind}:{port}/ (Ctrl-C stops)",
              file=sys.stderr, flush=True)  # fmt: skip
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()
    return 0


def add_commands(commands: Any) -> None:
    """Register `mirror build` and `mirror serve` on the CLI's subparsers object."""
    mirror = commands.add_parser("mirror", help="build and serve the artifact mirror")
    sub = mirror.add_subparsers(dest="mirror_command", required=True, metavar="SUBCOMMAND")
    default_dir = str(default_mirror_dir())

    build_parser = sub.add_parser("build", help="assemble the release archives of the catalog")
    build_parser.add_argument(
        "--dir", default=default_dir, help=f"mirror root (default {default_dir})"
    )
    build_parser.add_argument(
        "--only", action="append", default=[], metavar="NAME",
        help=f"build only this component (kafka, zookeeper, spark, {JMX_EXPORTER}); repeatable",
    )  # fmt: skip
    build_parser.set_defaults(handler=handle_build)

    serve = sub.add_parser("serve", help="serve the mirror over HTTP")
    serve.add_argument("--dir", default=default_dir, help=f"mirror root (default {default_dir})")
    serve.add_argument(
        "--bind", default="127.0.0.1", help="address to listen on (default loopback)"
    )
    serve.add_argument("--port", type=int, default=8000, help="TCP port (default 8000)")
    serve.set_defaults(handler=handle_serve)
