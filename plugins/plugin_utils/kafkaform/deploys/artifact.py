"""``roles/artifact``: a release archive from the mirror, its sha512 checked, unpacked into a
versioned directory behind a stable symlink (ZK-01), once its signature verifies against the
project's KEYS (SE-19). Everything that can fail on a bad download happens before the versioned
directory or the symlink is touched. The decisions are the role's
plan (kafkaform.plans.artifact), from the same host read."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from pyinfra.context import host
from pyinfra.operations import files, server

from ..checksum import parse_sha512
from ..defaults import assemble
from ..plans.artifact import ROLE, ArtifactPlan, artifact_plan, host_read, parse_host
from ..plans.hostread import signature_argv
from .base import host_variables, put_content, will_change
from .facts import CommandOutput, Fetched, Sha512File

#: Downloads a URL to a file on the host, as ``ansible.builtin.get_url`` does.
DOWNLOAD = ("import shutil, sys, urllib.request; shutil.copyfileobj(urllib.request.urlopen("
            "sys.argv[1], timeout=int(sys.argv[2])), open(sys.argv[3], 'wb'))")


def download(url: str, checksum_url: str, dest: str, timeout: int) -> str:
    """``ansible.builtin.get_url`` with ``checksum: sha512:<checksum_url>`` (root:root 0644): the
    published sha512 is read on the host, and a file already holding it is left alone; a new
    download lands beside ``dest`` and replaces it only once verified. Returns the sha512."""
    archive = url.rsplit("/", 1)[-1].split("?", 1)[0]
    published = host.get_fact(Fetched, url=checksum_url, timeout=timeout)
    digest = parse_sha512(published or "", archive, source=checksum_url)
    if host.get_fact(Sha512File, path=dest) != digest:
        partial = f"{dest}.part"
        server.shell(
            name=f"Download {archive} and verify its sha512",
            commands=[
                shlex.join(["python3", "-c", DOWNLOAD, url, str(timeout), partial]),
                f"echo {digest}' '{shlex.quote(partial)} | sha512sum --check --quiet "
                f"|| {{ rm -f {shlex.quote(partial)}; echo 'sha512 of {archive} does not match "
                f"{digest}' >&2; exit 1; }}",
                f"chmod 644 {shlex.quote(partial)}",
                f"mv {shlex.quote(partial)} {shlex.quote(dest)}",
            ])
    return digest


def plan(given: Mapping[str, Any]) -> ArtifactPlan:
    """The plan of the release ``given`` names on the current host (its other inputs from the
    inventory or the role's defaults), from the role's host read: the one question asked here."""
    settings = assemble((ROLE,), {**host_variables(host), **given})
    read = parse_host(host.get_fact(CommandOutput, argv=tuple(host_read(settings))))
    return artifact_plan(settings, read)


def install(release: Mapping[str, str], needed: bool) -> bool:
    """The artifact role with ``release``, its inputs by name (a plan's ``release``, its other
    inputs from the inventory or its defaults), when the including role's host read found it
    ``needed``; returns whether the release behind the link changes in this run."""
    if not needed:
        return False
    given = dict(release)
    p = plan(given)
    if not p.install:
        return False
    files.directory(name=f"Create the download cache directory {p.cache_dir}", path=p.cache_dir,
                    user="root", group="root", mode="755")
    digest = download(p.url, p.checksum_url, p.cached, p.timeout)
    if p.verify_signature:
        fetch = [shlex.join(["python3", "-c", DOWNLOAD, url, str(p.timeout), dest])
                 for url, dest in ((p.signature_url, p.signature_file), (p.keys_url, p.keys_file))]
        server.shell(name=f"Verify the signature of {p.archive} against {p.keys_url} [SE-19]",
                     commands=[*fetch, shlex.join(signature_argv(
                         p.cached, p.signature_file, p.keys_file, p.signature_url, p.keys_url))])
    files.directory(name=f"Create the versioned directory {p.dir}", path=p.dir,
                    user=p.owner, group=p.group, mode="755")
    if p.unpack:
        # Release archives hold one top-level directory; the versioned directory replaces it.
        server.shell(name=f"Unpack {p.archive} into {p.dir}", commands=[
            f"tar --extract --gzip --file {shlex.quote(p.cached)} --directory "
            f"{shlex.quote(p.dir)} --strip-components=1",
            f"chown -R {shlex.quote(p.owner)}:{shlex.quote(p.group)} {shlex.quote(p.dir)}",
        ])
    # Written after a complete unpack, so an interrupted one is redone next run.
    put_content(p.marker_content(digest), p.marker, user=p.owner, group=p.group, mode="644")
    linked = files.link(name=f"Point {p.link} at {p.dir}", path=p.link, target=p.dir,
                        user=p.owner, group=p.group)
    return p.unpack or will_change(linked)
