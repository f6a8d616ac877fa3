"""The marker a complete unpack of a release writes into its versioned directory.

Both engines write it last, after the archive is unpacked, and read it through the stable
symlink: when it names the artifact, version and archive asked for, the release is in place and
nothing is fetched or checked again (its digest was verified when it was unpacked). The roles
reach this module through the ``kafkaform.platform.release_marker`` filter, pyinfra's deploys
directly, so the two read and write the same lines.
"""

from __future__ import annotations

from urllib.parse import urlsplit

#: The marker's file name in the versioned directory.
MARKER = ".kafkaform-artifact"


def archive_name(url: str) -> str:
    """The archive's file name: the last segment of the URL's path, without query."""
    return urlsplit(url).path.rsplit("/", 1)[-1]


def release_marker(name: str, version: str, url: str, sha512: str = "") -> list[str]:
    """The marker's lines for this release; with ``sha512``, all of them (what the unpack
    writes), without it the lines that identify the release (what the read compares)."""
    lines = [f"name={name}", f"version={version}", f"archive={archive_name(url)}"]
    return [*lines, f"sha512={sha512}"] if sha512 else lines


def marker_version(marker: str | None) -> str:
    """The version a marker's lines name ("" without a marker)."""
    lines = (marker or "").splitlines()
    return next((line.removeprefix("version=") for line in lines
                 if line.startswith("version=")), "")
