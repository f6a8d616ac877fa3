"""The artifact role's plan for one release: whether it is already in place behind its stable
symlink, and if not, where its archive, versioned directory, marker and link go
(roles/artifact, deploys/artifact.py).

Fetching the published sha512, downloading, checking the signature and unpacking stay the
engines' own steps, in the role's order: nothing is touched before the download is verified.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ..defaults import as_bool, assemble
from ..release_marker import MARKER, archive_name, release_marker
from . import hostread

ROLE = "artifact"
#: The label of the release marker's line in an including role's host read.
RELEASE_LABEL = "release_marker"


def _settings(given: Mapping[str, Any]) -> dict[str, Any]:
    """The role's inputs by their short names, each given or else the role's default, templated
    as the role templates them (an internal role: kafkaform.defaults.setting knows only the
    cluster's roles)."""
    return {name.removeprefix(f"{ROLE}_"): value
            for name, value in assemble((ROLE,), given).items()}


def in_place(name: str, version: str, url: str, marker: str | None) -> bool:
    """The release is in place when the marker read through its link names this artifact,
    version and archive (its digest was verified when it was unpacked)."""
    return marker is not None and set(release_marker(name, version, url)) <= set(
        marker.splitlines())


@dataclass(frozen=True)
class Release:
    """A release a role installs through this one, behind the role's own stable path: the
    including role asks for its marker in its own host read, and includes the artifact role only
    when the release is not in place (a run with nothing to change then asks nothing more)."""

    name: str
    version: str
    url: str
    #: The role's install directory: the stable symlink to the versioned directory.
    link: str

    def question(self) -> hostread.Question:
        """The marker through the link, a line of the including role's host read."""
        return hostread.file_lines(RELEASE_LABEL, f"{self.link}/{MARKER}")

    def found_in_place(self, marker: str | None) -> bool:
        """``marker``: the answer to :meth:`question` (:func:`read_marker`)."""
        return in_place(self.name, self.version, self.url, marker)

    def as_vars(self) -> dict[str, str]:
        """The artifact role's inputs, by their names (both engines pass these)."""
        return {"artifact_name": self.name, "artifact_version": self.version,
                "artifact_url": self.url,
                "artifact_install_root": posixpath.dirname(self.link.rstrip("/")),
                "artifact_link": self.link}


def read_marker(found: Mapping[str, str]) -> str | None:
    """The marker :meth:`Release.question` read, from the including role's answers."""
    return hostread.decoded(found.get(RELEASE_LABEL))


def release(name: str, version: Any, url: Any, link: Any) -> Release:
    return Release(name, str(version), str(url), str(link).rstrip("/"))


@dataclass(frozen=True)
class ArtifactHost:
    """What the role needs to know of a host before it fetches anything."""

    #: The marker read through the stable symlink, None when the link or the marker is missing.
    marker: str | None = None
    #: The versioned directory holds the marker of a complete unpack (the link may lead elsewhere).
    unpacked: bool = False


def host_read(settings: Mapping[str, Any]) -> list[str]:
    """The one command that reads a host (its answers: :func:`parse_host`)."""
    s = _settings(settings)
    return hostread.command([
        hostread.file_lines("marker", f"{s['link']}/{MARKER}"),
        hostread.ask("unpacked", "echo yes", present=f"{s['dir']}/{MARKER}"),
    ])


def parse_host(stdout: str) -> ArtifactHost:
    """:func:`host_read`'s answers."""
    found = hostread.answers(stdout)
    return ArtifactHost(marker=hostread.decoded(found.get("marker")),
                        unpacked=found.get("unpacked") == "yes")


@dataclass(frozen=True)
class ArtifactPlan:
    """Everything the role does for one release, decided; the paths as both engines use them."""

    name: str
    version: str
    url: str
    checksum_url: str
    #: Verify the archive's detached OpenPGP signature against its project's KEYS (SE-19).
    verify_signature: bool
    signature_url: str
    keys_url: str
    #: The archive's file name, as the published sha512 names it.
    archive: str
    #: False when the release is in place behind the link: then nothing is fetched or touched.
    install: bool
    #: The versioned directory lacks a complete unpack (its marker): unpack the archive.
    unpack: bool
    cache_dir: str
    #: The archive in the cache, its signature and its project's KEYS beside it.
    cached: str
    signature_file: str
    keys_file: str
    dir: str
    link: str
    #: The marker in the versioned directory, written last (kafkaform.release_marker).
    marker: str
    owner: str
    group: str
    timeout: int
    validate_certs: bool

    def marker_content(self, sha512: str) -> str:
        """The marker's text once the archive's digest is verified, one line each."""
        return "".join(f"{line}\n" for line in release_marker(self.name, self.version, self.url,
                                                              sha512))

    def as_vars(self) -> dict[str, Any]:
        """The plan as the role reads it: plain data."""
        return asdict(self)


def artifact_plan(settings: Mapping[str, Any], read: ArtifactHost) -> ArtifactPlan:
    """The plan for the release the settings name, from the read: in place when the marker read
    through the link names this artifact, version and archive (its digest was verified when it
    was unpacked, so nothing is fetched or checked again)."""
    s = _settings(settings)
    name, version, url = str(s["name"]), str(s["version"]), str(s["url"])
    directory, cache_dir, archive = str(s["dir"]), str(s["cache_dir"]), archive_name(url)
    return ArtifactPlan(
        name=name, version=version, url=url,
        checksum_url=str(s["checksum_url"]),
        verify_signature=as_bool(s["verify_signature"]),
        signature_url=str(s["signature_url"]),
        keys_url=str(s["keys_url"]),
        archive=archive,
        install=not in_place(name, version, url, read.marker),
        unpack=not read.unpacked,
        cache_dir=cache_dir,
        cached=f"{cache_dir}/{archive}",
        signature_file=f"{cache_dir}/{archive}.asc",
        keys_file=f"{cache_dir}/{name}-KEYS",
        dir=directory,
        link=str(s["link"]),
        marker=f"{directory}/{MARKER}",
        owner=str(s["owner"]),
        group=str(s["group"]),
        timeout=int(s["download_timeout"]),
        validate_certs=as_bool(s["validate_certs"]),
    )
