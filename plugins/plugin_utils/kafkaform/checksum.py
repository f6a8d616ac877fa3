"""Apache `.sha512` files: parse both shapes Apache projects publish, and hash files.

Apache projects publish sha512 checksums in different shapes (TOOLS-FACTS section 5):

* Kafka uses `gpg --print-md sha512 FILE`: `FILE: 0E3E7523 4ABC68F4 ...`, upper-case, 8-hex
  groups, wrapped at 79 columns with continuation lines indented under the first group (or by
  one space when the file name is longer than 40 characters and the digest starts on line 2).
* ZooKeeper and Spark use `sha512sum`/`shasum -a 512`: `<lower-case hex>  FILE` (`*FILE` in
  binary mode).

This module also accepts BSD-style `SHA512 (FILE) = hex` and a bare digest, because mirrors
re-publish files in those shapes too. Whatever the shape, the result is the 128-digit lower-case
digest, and anything doubtful (no digest, two different digests, a different file) is an error:
a checksum we cannot trust must stop an install, not be skipped.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

SHA512_HEX_DIGITS = 128

# Reading in 1 MiB chunks keeps memory flat for the 450 MB Spark archive and is as fast as
# larger chunks (hashing, not I/O, is the bottleneck).
_CHUNK_BYTES = 1 << 20

_BSD = re.compile(r"^SHA-?512\s*\((?P<name>.+)\)\s*=\s*(?P<hex>[0-9A-Fa-f]+)$", re.IGNORECASE)
# The name part of the gpg shape cannot hold a colon; the digest part is hex and whitespace only
# (optionally after `SHA512 = ` as `gpg --print-mds` writes it).
_GPG = re.compile(
    r"^(?P<name>[^:\s][^:]*?)\s*:\s*(?:SHA-?512\s*=\s*)?(?P<hex>[0-9A-Fa-f][0-9A-Fa-f\s]*)$",
    re.IGNORECASE | re.DOTALL,
)
_SUM = re.compile(r"^\\?(?P<hex>[0-9A-Fa-f]+)[ \t]+\*?(?P<name>\S.*)$")
_BARE = re.compile(r"^[0-9A-Fa-f][0-9A-Fa-f\s]*$")


@dataclass(frozen=True, slots=True)
class _Entry:
    """One digest found in a checksum file; `name` is None for a bare digest."""

    name: str | None
    digest: str
    line: int


def parse_sha512(text: str, filename: str | None = None, *, source: str | None = None) -> str:
    """Return the lower-case sha512 digest that `text` (a `.sha512` file) gives for `filename`.

    Args:
        text: content of the checksum file, in any of the shapes described in the module doc.
        filename: the archive the checksum is for. Only its base name is compared, since the
            files name the archive without a directory. None skips the name check.
        source: how to call the checksum file in errors (default `<filename>.sha512`).

    Raises:
        ValueError: naming the checksum file, when it holds no sha512 digest, a digest of the
            wrong length, different digests for the same file, or only digests of other files.
    """
    label = source or (f"{_base(filename)}.sha512" if filename else "checksum file")
    entries = _entries(text, label)
    if not entries:
        raise ValueError(f"{label}: holds no sha512 digest (the file is empty)")
    wanted = _base(filename) if filename else None
    matching = [e for e in entries if wanted is None or e.name is None or e.name == wanted]
    if not matching:
        named = ", ".join(sorted({e.name for e in entries if e.name}))
        raise ValueError(
            f"{label}: names {named}, not {wanted}; the checksum URL points at the wrong file"
        )
    digests = sorted({e.digest for e in matching})
    if len(digests) > 1:
        lines = ", ".join(str(e.line) for e in matching)
        raise ValueError(
            f"{label}: ambiguous, {len(digests)} different sha512 digests"
            f" for {wanted or 'the file'} (lines {lines})"
        )
    return digests[0]


def _entries(text: str, label: str) -> list[_Entry]:
    """Split the file into records and parse each one into an _Entry."""
    return [_parse_record(record, start, label) for start, record in _records(text)]


def _records(text: str) -> list[tuple[int, str]]:
    """Group lines into records: an unindented line plus the indented lines that continue it.

    gpg wraps one digest over several indented lines, and after a name longer than 40 columns it
    starts the digest unindented on the next line (`NAME:` alone, then hex): a record ending in
    a colon therefore always continues. Every other shape is one line per record. Blank lines
    and `#` comments are dropped. Returns (1-based first line number, record text).
    """
    records: list[tuple[int, list[str]]] = []
    for number, raw in enumerate(text.lstrip("\ufeff").splitlines(), start=1):
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if records and (line[0].isspace() or records[-1][1][-1].endswith(":")):
            records[-1][1].append(line.strip())
        else:
            records.append((number, [line.strip()]))
    return [(number, "\n".join(parts)) for number, parts in records]


def _parse_record(record: str, line: int, label: str) -> _Entry:
    """Parse one record in whichever shape it is; raise ValueError if it is none of them."""
    for pattern in (_BSD, _GPG, _SUM):
        found = pattern.match(record)
        if found:
            name = _base(found.group("name"))
            return _Entry(name, _digest(found.group("hex"), name, line, label), line)
    if _BARE.match(record):
        return _Entry(None, _digest(record, None, line, label), line)
    first = record.splitlines()[0]
    raise ValueError(
        f"{label}: line {line} is not a checksum line: {first[:80]!r}"
        " (expected `NAME: HEX HEX ...` or `hex  NAME`)"
    )


def _digest(hex_text: str, name: str | None, line: int, label: str) -> str:
    """Remove gpg's grouping whitespace, lower-case, and insist on exactly 128 hex digits."""
    digest = "".join(hex_text.split()).lower()
    if len(digest) != SHA512_HEX_DIGITS:
        what = f"the digest for {name}" if name else "the digest"
        hint = {32: "an md5", 40: "a sha1", 64: "a sha256"}.get(len(digest), "not a sha512")
        raise ValueError(
            f"{label}: line {line}: {what} has {len(digest)} hex digits ({hint}),"
            f" a sha512 has {SHA512_HEX_DIGITS}"
        )
    return digest


def _base(name: str) -> str:
    """Base name of a file as checksum files write it (`*` binary marker, directories dropped)."""
    return PurePosixPath(name.strip().lstrip("*")).name


def file_sha512(path: Path | str) -> str:
    """Lower-case hex sha512 of a file, read in chunks so memory stays flat on large archives."""
    digest = hashlib.sha512()
    with open(path, "rb") as stream:
        while chunk := stream.read(_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def format_sha512sum(digest: str, filename: str) -> str:
    """Format a digest the way `sha512sum FILE` (and `shasum -a 512`) print it."""
    return f"{_checked(digest)}  {filename}\n"


def format_gpg_print_md(digest: str, filename: str) -> str:
    """Format a digest exactly like `gpg --print-md sha512 FILE` (Kafka's release script).

    Mirrors gpg's print_hex(): `FILE: ` then 4-byte upper-case groups; before a group that
    would pass column 79 it breaks the line and indents to the first group's column. A name
    longer than 40 columns makes gpg start the digest on the next line with no indent (gpg's
    `%*s` still prints one space on continuation lines then).
    """
    raw = bytes.fromhex(_checked(digest))
    prefix = f"{filename}: "
    indent = len(prefix)
    parts = [prefix]
    if indent > 40:
        parts.append("\n")
        indent = 0
    count = indent
    for index, byte in enumerate(raw):
        if index and index % 4 == 0:
            if count + 8 > 79:
                parts.append("\n" + " " * max(indent, 1))
                count = indent
            else:
                parts.append(" ")
                count += 1
        parts.append(f"{byte:02X}")
        count += 2
    parts.append("\n")
    return "".join(parts)


def _checked(digest: str) -> str:
    """Validate and lower-case a digest passed to a formatter."""
    value = digest.strip().lower()
    if len(value) != SHA512_HEX_DIGITS or not re.fullmatch(r"[0-9a-f]+", value):
        raise ValueError(f"not a sha512 digest: {digest!r}")
    return value
