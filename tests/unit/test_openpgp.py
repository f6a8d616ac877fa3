"""A release's OpenPGP signature against its project's KEYS file (plugins/module_utils/openpgp.py,
the module release_signature and the pyinfra deploys): with real keys made by gpg and checked by
gpgv, as on the hosts."""

from __future__ import annotations

import importlib.util
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest


def _module_utils() -> ModuleType:
    """The module_utils file by its path (test_install_files.py says why not by its package)."""
    path = Path(__file__).resolve().parents[2] / "plugins" / "module_utils" / "openpgp.py"
    spec = importlib.util.spec_from_file_location("kafkaform_openpgp", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


openpgp = _module_utils()


def gpg(home: Path, *args: str) -> str:
    return subprocess.run(["gpg", "--homedir", str(home), "--batch", "--pinentry-mode",
                           "loopback", "--passphrase", "", *args], capture_output=True,
                          text=True, check=True, env={**os.environ, "LC_ALL": "C"}).stdout


@pytest.fixture(scope="module")
def signers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """Two keys, each in a GnuPG home of its own: a release manager's and a stranger's."""
    homes = {}
    for name in ("manager", "stranger"):
        home = tmp_path_factory.mktemp(name)
        home.chmod(0o700)
        gpg(home, "--quick-gen-key", f"{name} <{name}@example.org>", "ed25519", "sign", "never")
        homes[name] = home
    yield homes
    for home in homes.values():  # the agents signing started
        subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "all"], check=False)


def release(tmp_path: Path, signers: dict[str, Path], signer: str = "manager") -> Path:
    archive = tmp_path / "demo-1.0.0.tgz"
    archive.write_bytes(b"an archive\n" * 100)
    gpg(signers[signer], "--armor", "--detach-sign", "--output", f"{archive}.asc", str(archive))
    return archive


def keys_file(tmp_path: Path, signers: dict[str, Path], *names: str) -> Path:
    """A KEYS file as Apache writes one: text, then each signer's listing and armored key."""
    parts = ["This file contains the PGP keys of the project's release managers.\n\n"]
    for name in names:
        parts.append(f"pub   ed25519 2026-12-06 [SC]\nuid   {name} <{name}@example.org>\n\n")
        parts.append(gpg(signers[name], "--armor", "--export"))
    path = tmp_path / "KEYS"
    path.write_text("\n".join(parts))
    return path


def test_a_signature_by_a_key_of_the_keys_file_verifies(tmp_path: Path,
                                                       signers: dict[str, Path]) -> None:
    archive = release(tmp_path, signers)
    answer = openpgp.verify(str(archive), f"{archive}.asc",
                            str(keys_file(tmp_path, signers, "stranger", "manager")))
    assert answer["signer"] == "manager <manager@example.org>"
    assert answer["fingerprint"] in gpg(signers["manager"], "--with-colons", "--fingerprint")


@pytest.mark.parametrize(("case", "said"), [
    ("tampered", "BAD signature"),
    ("stranger", "No public key"),
])
def test_a_bad_or_unknown_signature_is_refused_naming_archive_signature_and_keys(
        tmp_path: Path, signers: dict[str, Path], case: str, said: str) -> None:
    archive = release(tmp_path, signers, "stranger" if case == "stranger" else "manager")
    if case == "tampered":
        archive.write_bytes(archive.read_bytes() + b"one more line\n")
    keys = keys_file(tmp_path, signers, "manager")
    with pytest.raises(openpgp.SignatureError) as error:
        openpgp.verify(str(archive), f"{archive}.asc", str(keys))
    assert str(error.value).startswith(f"demo-1.0.0.tgz: the signature {archive}.asc does not "
                                       f"verify against {keys}: ")
    assert said in str(error.value)


def test_a_keys_file_without_a_key_is_refused(tmp_path: Path, signers: dict[str, Path]) -> None:
    archive = release(tmp_path, signers)
    keys = tmp_path / "KEYS"
    keys.write_text("<html>Not found</html>\n")
    with pytest.raises(openpgp.SignatureError, match="holds no public key block"):
        openpgp.verify(str(archive), f"{archive}.asc", str(keys))


def test_dearmor_skips_the_armor_headers_and_the_checksum_line() -> None:
    body = "Comment: a header\nVersion: 1\n\naGVsbG8g\nd29ybGQ=\n=abcd\n"
    text = f"text\n-----BEGIN PGP PUBLIC KEY BLOCK-----\n{body}-----END PGP PUBLIC KEY BLOCK-----\n"
    assert openpgp.dearmor(text + text) == b"hello worldhello world"


def test_the_mirror_signs_each_release_once_and_again_when_rebuilt(tmp_path: Path) -> None:
    """kafkaform.mirror.signing: what the mirror signs verifies as the hosts check it, against the
    KEYS it publishes where Apache's distribution keeps the project's."""
    from kafkaform.catalog import kafka
    from kafkaform.mirror.signing import Signer, sign_releases

    component = kafka("3.9.2")
    archive = tmp_path / "mirror" / component.dist_path
    archive.parent.mkdir(parents=True)
    archive.write_bytes(b"an archive")
    signer = Signer(tmp_path / "gnupg")
    try:
        assert sign_releases(tmp_path / "mirror", [component], signer) == 1
        keys = tmp_path / "mirror" / "kafka" / "KEYS"
        answer = openpgp.verify(str(archive), f"{archive}.asc", str(keys))
        assert answer["signer"] == "kafkaform mirror build <mirror@kafkaform.invalid>"
        assert sign_releases(tmp_path / "mirror", [component], signer) == 0
        archive.write_bytes(b"a rebuilt archive")
        os.utime(archive, (archive.stat().st_atime, archive.stat().st_mtime + 5))
        assert sign_releases(tmp_path / "mirror", [component], signer) == 1
        openpgp.verify(str(archive), f"{archive}.asc", str(keys))
    finally:
        signer.close()


def test_the_deploys_command_checks_as_the_module_does(tmp_path: Path,
                                                     signers: dict[str, Path]) -> None:
    """kafkaform.plans.hostread.signature_argv: the pyinfra deploys' check, run here as on a
    host; it passes and fails as :func:`openpgp.verify` does, saying why on stderr."""
    from kafkaform.plans.hostread import signature_argv

    archive = release(tmp_path, signers)
    keys = keys_file(tmp_path, signers, "manager")
    argv = signature_argv(str(archive), f"{archive}.asc", str(keys),
                          "http://mirror/demo/1.0.0/demo-1.0.0.tgz.asc", "http://mirror/demo/KEYS")
    assert subprocess.run(argv, capture_output=True, check=False).returncode == 0
    archive.write_bytes(b"another archive")
    ran = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert ran.returncode == 1 and ran.stderr.startswith(
        "demo-1.0.0.tgz: the signature http://mirror/demo/1.0.0/demo-1.0.0.tgz.asc does not "
        "verify against http://mirror/demo/KEYS: ")
    assert "BAD signature" in ran.stderr


def test_a_signature_gpg_could_not_write_whole_is_not_left_behind(tmp_path: Path) -> None:
    """A failed sign leaves no .asc (newer than its archive, it would never be made again): gpg
    writes a signature of what it read before a read error, and an empty file when stopped."""
    from kafkaform.mirror.common import MirrorError
    from kafkaform.mirror.signing import Signer

    unreadable = tmp_path / "unreadable.tgz"
    unreadable.mkdir()
    signer = Signer(tmp_path / "gnupg")
    try:
        with pytest.raises(MirrorError, match=r"unreadable\.tgz: read error"):
            signer.sign(unreadable)
    finally:
        signer.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gnupg", "unreadable.tgz"]
