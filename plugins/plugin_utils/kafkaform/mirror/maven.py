"""Maven: the jars of a release, resolved with their runtime dependency closure.

Maven runs as this machine configures it, through the repositories it is configured for (Maven
Central by default): see maven_settings_args.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from .archive import jar_entry
from .common import MirrorError, run_tool

#: Pinned so the resolution does not depend on whichever plugin version Maven picks by default.
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"


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


def resolved_version_of(artifact: str, jars: Sequence[Path]) -> Path | None:
    """The jar of `artifact` in Maven's output: `<artifact>-<version>.jar`, version digit-first."""
    prefix = f"{artifact}-"
    for jar in jars:
        rest = jar.name[len(prefix) :] if jar.name.startswith(prefix) else ""
        if rest[:1].isdigit() and rest.endswith(".jar"):
            return jar
    return None
