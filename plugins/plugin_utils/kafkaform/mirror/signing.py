"""The mirror's signatures: what it rebuilds is not the release managers' bytes, so it signs each
archive with a key of its own and publishes that key as the project's KEYS, where Apache's
distribution keeps it (``kafka/KEYS``). The roles then check every archive as they check Apache's
(SE-19). The key lives in the mirror's cache, made once; a mirror of Apache's own archives keeps
their ``.asc`` files and KEYS instead."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable
from pathlib import Path

from ..catalog import Component
from .archive import atomic_write_bytes
from .common import MirrorError, progress

#: The user id of the mirror's key: who made the archives a host checks.
SIGNER = "kafkaform mirror build <mirror@kafkaform.invalid>"


class Signer:
    """gpg with the mirror's own GnuPG home (``home``, 0700), its one signing key made there
    once."""

    def __init__(self, home: Path) -> None:
        self.home = home

    def gpg(self, *args: str) -> str:
        try:
            ran = subprocess.run(
                ["gpg", "--homedir", str(self.home), "--batch", "--pinentry-mode", "loopback",
                 "--passphrase", "", *args], capture_output=True, text=True, check=False,
                env={**os.environ, "LC_ALL": "C"})
        except OSError as error:
            raise MirrorError(f"cannot run gpg ({error}): install it (apt-get install gpg)") \
                from error
        if ran.returncode != 0:
            raise MirrorError(f"gpg {args[0]} failed: {ran.stderr.strip()[-600:]}")
        return ran.stdout

    def fingerprint(self) -> str:
        """The signing key's fingerprint, the key made first when there is none."""
        self.home.mkdir(mode=0o700, parents=True, exist_ok=True)
        listed = self.gpg("--with-colons", "--list-secret-keys")
        if "\nfpr:" not in "\n" + listed:
            progress("mirror", f"making its signing key in {self.home} ({SIGNER})")
            self.gpg("--quick-gen-key", SIGNER, "ed25519", "sign", "never")
            listed = self.gpg("--with-colons", "--list-secret-keys")
        return next(line.split(":")[9] for line in listed.splitlines()
                    if line.startswith("fpr:"))

    def keys_text(self) -> str:
        """A KEYS file as Apache's are written: who, then the armored public key."""
        fingerprint = self.fingerprint()
        return (f"The key `kafkaform mirror build` signs the archives it rebuilds with.\n\n"
                f"pub   {fingerprint}\nuid   {SIGNER}\n\n"
                + self.gpg("--armor", "--export", fingerprint))

    def close(self) -> None:
        """Stop the gpg-agent signing started for this home: no daemon outlives the build."""
        subprocess.run(["gpgconf", "--homedir", str(self.home), "--kill", "all"],
                       capture_output=True, check=False)

    def sign(self, path: Path) -> None:
        """``path.asc``: a detached, armored signature of ``path``, in place only once gpg wrote
        it whole (a signature newer than its archive is never made again)."""
        signature = path.with_name(path.name + ".asc")
        partial = signature.with_name(signature.name + ".part")
        try:
            self.gpg("--yes", "--local-user", self.fingerprint(), "--armor", "--detach-sign",
                     "--output", str(partial), str(path))
            partial.replace(signature)
        finally:
            partial.unlink(missing_ok=True)


def sign_releases(mirror_dir: Path, components: Iterable[Component], signer: Signer) -> int:
    """Sign each component's archive in the mirror that has no signature newer than it, and
    write each project's KEYS; returns how many archives were signed."""
    try:
        return _sign_each(mirror_dir, components, signer)
    finally:
        signer.close()


def _sign_each(mirror_dir: Path, components: Iterable[Component], signer: Signer) -> int:
    keys = signer.keys_text()
    signed = 0
    for component in components:
        archive = mirror_dir / component.dist_path
        if not archive.is_file():
            continue
        project_keys = mirror_dir / component.keys_path
        if not project_keys.is_file() or project_keys.read_text() != keys:
            atomic_write_bytes(project_keys, keys.encode())
        signature = archive.with_name(archive.name + ".asc")
        if signature.is_file() and signature.stat().st_mtime >= archive.stat().st_mtime \
                and project_keys.stat().st_mtime <= signature.stat().st_mtime:
            continue
        signer.sign(archive)
        progress(f"{component.name} {component.version}", f"signed ({component.dist_path}.asc)")
        signed += 1
    return signed
