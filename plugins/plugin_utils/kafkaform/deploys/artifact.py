"""``roles/artifact``: a release archive from the mirror, its sha512 checked, unpacked into a
versioned directory behind a stable symlink (ZK-01). Everything that can fail on a bad download
happens before the versioned directory or the symlink is touched."""

from __future__ import annotations

import shlex

from pyinfra.context import host
from pyinfra.operations import files, server

from ..checksum import parse_sha512
from ..defaults import assemble
from ..release_marker import MARKER, archive_name, release_marker
from .base import host_variables, put_content, will_change
from .facts import CommandOutput, Sha512File

#: Reads a URL on the host, as ``ansible.builtin.uri`` does: the host reaches the mirror.
FETCH = ("import sys, urllib.request; "
         "sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=int(sys.argv[2]))"
         ".read().decode())")
#: Downloads a URL to a file on the host, as ``ansible.builtin.get_url`` does.
DOWNLOAD = ("import shutil, sys, urllib.request; shutil.copyfileobj(urllib.request.urlopen("
            "sys.argv[1], timeout=int(sys.argv[2])), open(sys.argv[3], 'wb'))")


def download(url: str, checksum_url: str, dest: str, timeout: int) -> str:
    """``ansible.builtin.get_url`` with ``checksum: sha512:<checksum_url>`` (root:root 0644): the
    published sha512 is read on the host, and a file already holding it is left alone; a new
    download lands beside ``dest`` and replaces it only once verified. Returns the sha512."""
    archive = url.rsplit("/", 1)[-1].split("?", 1)[0]
    published = host.get_fact(CommandOutput, argv=("python3", "-c", FETCH, checksum_url,
                                                   str(timeout)))
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


def _in_place(link: str, lines: list[str]) -> bool:
    """Whether the release is already in place behind ``link``, as the role reads it in one call:
    the marker a complete unpack writes, read through the link, holds these lines. Its digest
    was verified when it was unpacked, so nothing is fetched or checked again."""
    marker = shlex.quote(f"{link}/{MARKER}")
    found = host.get_fact(CommandOutput, argv=("sh", "-c", f"cat {marker} 2>/dev/null || true"))
    return set(lines) <= set(found.splitlines())


def install(name: str, version: str, url: str, install_root: str | None = None,
            link: str | None = None) -> bool:
    """The artifact role with these inputs (its other inputs from the inventory or its defaults);
    returns whether the release behind the link changes in this run."""
    given = {"artifact_name": name, "artifact_version": version, "artifact_url": url}
    if install_root is not None:
        given["artifact_install_root"] = install_root
    if link is not None:
        given["artifact_link"] = link
    a = assemble(("artifact",), {**host_variables(host), **given})
    archive = archive_name(url)
    link_path = str(a["artifact_link"])
    if _in_place(link_path, release_marker(name, version, url)):
        return False
    timeout = int(a["artifact_download_timeout"])
    cache_dir = str(a["artifact_cache_dir"])
    files.directory(name=f"Create the download cache directory {cache_dir}", path=cache_dir,
                    user="root", group="root", mode="755")
    cached = f"{cache_dir}/{archive}"
    digest = download(url, str(a["artifact_checksum_url"]), cached, timeout)
    owner, group = str(a["artifact_owner"]), str(a["artifact_group"])
    directory = str(a["artifact_dir"])
    files.directory(name=f"Create the versioned directory {directory}", path=directory,
                    user=owner, group=group, mode="755")
    marker = f"{directory}/{MARKER}"
    unpacked = bool(host.get_fact(CommandOutput, argv=(
        "sh", "-c", f"test -e {shlex.quote(marker)} && echo yes || true")))
    if not unpacked:
        # Release archives hold one top-level directory; the versioned directory replaces it.
        server.shell(name=f"Unpack {archive} into {directory}", commands=[
            f"tar --extract --gzip --file {shlex.quote(cached)} --directory "
            f"{shlex.quote(directory)} --strip-components=1",
            f"chown -R {shlex.quote(owner)}:{shlex.quote(group)} {shlex.quote(directory)}",
        ])
    # Written after a complete unpack, so an interrupted one is redone next run.
    put_content("\n".join(release_marker(name, version, url, digest)) + "\n", marker,
                user=owner, group=group, mode="644")
    linked = files.link(name=f"Point {link_path} at {directory}", path=link_path,
                        target=directory, user=owner, group=group)
    return not unpacked or will_change(linked)
