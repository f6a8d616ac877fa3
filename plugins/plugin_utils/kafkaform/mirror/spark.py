"""Spark's release layout, from the `pyspark` sdist (its jars/, bin/ and python/lib/)."""

from __future__ import annotations

import hashlib
import json
import re
import sys
import tarfile
from dataclasses import asdict
from pathlib import Path

from ..catalog import Component
from .archive import Member, Recipe, extract_safely, file_member, jar_entry, text_member
from .common import MirrorError, progress, release_text, run_tool

#: The scripts files/spark/ adds to sbin/ unless the sdist has them (pyspark ships no start
#: scripts): a master and a worker, started and stopped through the sdist's spark-daemon.sh.
SBIN = (
    "sbin/start-master.sh",
    "sbin/start-worker.sh",
    "sbin/stop-master.sh",
    "sbin/stop-worker.sh",
)
CONF = ("conf/spark-env.sh.template", "conf/spark-defaults.conf.template")

#: The files whose texts the recipe hashes. The stop scripts never were (they used to be made
#: from their main class in code): adding them would rebuild every mirror's Spark archive once.
HASHED = ("sbin/start-master.sh", "sbin/start-worker.sh", *CONF)


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
    for name in SBIN:
        if name not in have:
            members.append(text_member(name, release_text(f"spark/{name}"), executable=True))
    for name in CONF:
        members.append(text_member(name, release_text(f"spark/{name}")))
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


def spark_recipe(component: Component) -> Recipe:
    """Recipe of the Spark archive: catalog entry and the pyspark sdist it is made from."""
    texts = [release_text(f"spark/{name}") for name in HASHED]
    files = hashlib.sha256(json.dumps(texts).encode()).hexdigest()
    inputs = {
        "component": asdict(component),
        "pypi": f"pyspark=={component.version}",
        "files": files,
    }
    return Recipe(component.dist_path, inputs)
