"""The PKI's files: written whole under an flock, private keys sealed unless the inventory
opts into plain text."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes

from .. import sealed
from ..secrets import write_whole as _write

PUBLIC = 0o644

PRIVATE = 0o600


def make_dir(path: Path) -> None:
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        return
    os.chmod(path, 0o700)  # mkdir's mode passes through the umask


def read_if_present(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def read_private(path: Path, plain: bool, *, write: bool) -> bytes | None:
    """A private key's PEM, unsealed; one stored in plain text that should not be (an earlier
    release wrote it) is sealed in place when the run may write."""
    data = read_if_present(path)
    if data is None:
        return None
    opened = sealed.unseal(data, str(path))
    if write and sealed.needs_sealing(data, plain=plain):
        write_private(path, opened, plain)
    return opened


def write_private(path: Path, pem: bytes, plain: bool) -> None:
    _write(path, sealed.seal(pem, str(path), plain=plain), PRIVATE)


def read_material(path: str | Path) -> bytes:
    """A file :func:`ensure_host` names, as a host gets it: a private key unsealed."""
    return sealed.unseal(Path(path).read_bytes(), str(path))


@contextlib.contextmanager
def locked(pki: Path, *, exclusive: bool) -> Iterator[None]:
    """Hold ``pki/.lock``: exclusively to write, shared to read (a dry run). A dry run before the
    first real one finds no lock file and creates none: there is nothing to read yet."""
    lock = pki / ".lock"
    if exclusive:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, PRIVATE)
    else:
        try:
            fd = os.open(lock, os.O_RDONLY)
        except FileNotFoundError:
            fd = -1
    try:
        if fd >= 0:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        if fd >= 0:
            os.close(fd)  # releases the lock


def certificates_pem(*certs: x509.Certificate) -> bytes:
    return b"".join(cert.public_bytes(serialization.Encoding.PEM) for cert in certs)


def key_pem(key: PrivateKeyTypes) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())
