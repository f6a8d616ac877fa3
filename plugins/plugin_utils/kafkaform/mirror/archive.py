"""Release archives: their members, reproducible tarballs, the manifest, atomic publishing.

Builds are deterministic (sorted members, fixed mtimes and owners, gzip without timestamp) and
atomic (temp file, then rename). `manifest.json` records, per archive, a digest of the recipe
(catalog entry + inputs) and the archive's sha512: a rebuild with nothing new re-hashes the
archives and stops there, without running Maven or pip.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from ..checksum import file_sha512, format_gpg_print_md, format_sha512sum, parse_sha512
from .common import MirrorError, progress

# --------------------------------------------------------------------------------------------
# Archive members and deterministic tarballs


#: mtime of every archive member (2025-01-01T00:00:00Z) unless SOURCE_DATE_EPOCH says otherwise:
#: equal inputs must give byte-identical archives.
DEFAULT_EPOCH = 1_735_689_600

#: gzip level of the archives: jars are already deflated, so higher levels only cost time.
GZIP_LEVEL = 6


def source_epoch() -> int:
    """Member mtime: SOURCE_DATE_EPOCH (the reproducible-builds convention) or DEFAULT_EPOCH."""
    value = os.environ.get("SOURCE_DATE_EPOCH", "")
    return int(value) if value.isdigit() else DEFAULT_EPOCH


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


#: Bump when the way archives are assembled changes: every archive is then rebuilt once.
RECIPE_VERSION = 1

MANIFEST = "manifest.json"


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
# Reading archives: jars and tarballs


def jar_entry(jar: Path, entry: str) -> bytes | None:
    """Bytes of `entry` inside a jar, or None if it is not there."""
    with zipfile.ZipFile(jar) as archive:
        try:
            return archive.read(entry)
        except KeyError:
            return None


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
