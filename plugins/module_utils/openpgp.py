"""A release's detached OpenPGP signature, verified against its project's KEYS file with gpgv
(Debian's ``gpgv`` package, which apt itself needs, so every Debian host has it). SE-19

Apache publishes each release's ``.asc`` beside the archive and the keys of everyone who signs
the project's releases in one ``KEYS`` file (https://www.apache.org/info/verification.html).
gpgv reads binary keyrings only, and a KEYS file is text with one ASCII-armored key block per
signer: :func:`dearmor` turns it into a keyring (RFC 4880, section 6.2, "Forming ASCII
Armor").

Plain Python 3 with no import beyond the standard library: the module release_signature runs it
under Ansible, and the pyinfra deploys send this file's source to the host as it is
(``kafkaform.plans.hostread.signature_argv``).
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import subprocess
import tempfile

_BLOCK = re.compile(r"-----BEGIN PGP PUBLIC KEY BLOCK-----\r?\n(.*?)"
                    r"-----END PGP PUBLIC KEY BLOCK-----", re.S)


class SignatureError(Exception):
    """The signature does not verify, or cannot be checked."""


def dearmor(text: str) -> bytes:
    """Every public key block of a KEYS file, decoded and concatenated: a keyring gpgv reads.
    Raises SignatureError when the text holds no key block or a block does not decode."""
    blocks = []
    for body in _BLOCK.findall(text):
        lines = [line.strip() for line in body.splitlines()]
        if "" in lines:  # armor headers (Comment:, Version:) end at the first empty line
            lines = lines[lines.index("") + 1:]
        data = "".join(line for line in lines if line and not line.startswith("="))
        try:
            blocks.append(base64.b64decode(data, validate=True))
        except (binascii.Error, ValueError) as error:
            raise SignatureError(f"a public key block does not decode: {error}") from error
    if not blocks:
        raise SignatureError("it holds no public key block (-----BEGIN PGP PUBLIC KEY BLOCK-----)")
    return b"".join(blocks)


def verify(archive: str, signature: str, keys: str, signature_source: str = "",
           keys_source: str = "") -> dict[str, str]:
    """Check ``signature`` (a detached ``.asc``) of ``archive`` against the KEYS file ``keys``;
    return the signing key's fingerprint and user id. Raises SignatureError saying why not,
    naming the signature and KEYS by where they came from (``*_source``, their URLs) if given."""
    try:
        with open(keys, encoding="utf-8", errors="replace") as handle:
            keyring = dearmor(handle.read())
    except OSError as error:
        raise SignatureError(f"cannot read the KEYS file {keys_source or keys}: {error}") \
            from error
    except SignatureError as error:
        raise SignatureError(f"the KEYS file {keys_source or keys}: {error}") from error
    with tempfile.TemporaryDirectory() as home:
        path = os.path.join(home, "keyring.gpg")
        with open(path, "wb") as handle:
            handle.write(keyring)
        try:
            ran = subprocess.run(
                ["gpgv", "--homedir", home, "--status-fd", "1", "--keyring", path, signature,
                 archive], capture_output=True, text=True, check=False,
                env={**os.environ, "LC_ALL": "C"})
        except OSError as error:
            raise SignatureError(f"cannot run gpgv (install Debian's gpgv package): {error}") \
                from error
    status = [line.split()[1:] for line in ran.stdout.splitlines()
              if line.startswith("[GNUPG:] ")]
    valid = next((fields for fields in status if fields[:1] == ["VALIDSIG"]), None)
    good = next((fields for fields in status if fields[:1] == ["GOODSIG"]), None)
    if ran.returncode != 0 or valid is None or len(valid) < 2:
        said = " ".join(line.strip() for line in ran.stderr.splitlines() if line.strip())
        raise SignatureError(f"{os.path.basename(archive)}: the signature "
                             f"{signature_source or signature} does not verify against "
                             f"{keys_source or keys}: {said or f'gpgv exited {ran.returncode}'}")
    return {"fingerprint": valid[1], "signer": " ".join(good[2:]) if good else ""}
