"""The cluster's CA: generated once or given by the inventory, stored, and spread as trust.pem."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from cryptography.hazmat.primitives.asymmetric.types import (
    CertificateIssuerPrivateKeyTypes,
)
from cryptography.x509.oid import NameOID

from .. import sealed
from ..secrets import write_whole as _write
from .files import (
    PUBLIC,
    certificates_pem,
    key_pem,
    read_if_present,
    read_private,
    write_private,
)
from .settings import BACKDATE, Settings


@dataclass(frozen=True)
class Authority:
    cert: x509.Certificate
    key: CertificateIssuerPrivateKeyTypes
    # The certificates a host presents after its own: the CA first, then any the user's file adds.
    chain: tuple[x509.Certificate, ...]


def spki(key: Any) -> bytes:
    der: bytes = key.public_bytes(serialization.Encoding.DER,
                                  serialization.PublicFormat.SubjectPublicKeyInfo)
    return der


def generate_ca(cluster: str, days: int, now: datetime) -> Authority:
    key = ec.generate_private_key(ec.SECP256R1())
    serial = x509.random_serial_number()
    # Each CA's subject is its own (serialNumber): during a rotation the trust bundle holds two,
    # and ZooKeeper's PEM trust store keeps one certificate per subject, the last one read.
    name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, cluster),
                      x509.NameAttribute(NameOID.COMMON_NAME, f"kafkaform CA {cluster}"),
                      x509.NameAttribute(NameOID.SERIAL_NUMBER, f"{serial:x}")])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(serial)
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + timedelta(days=days))
        # pathlen 0: the CA signs hosts only, never another CA.
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False,
                                     key_encipherment=False, data_encipherment=False,
                                     key_agreement=False, key_cert_sign=True, crl_sign=True,
                                     encipher_only=False, decipher_only=False), critical=True)
        # The key identifiers tell the two CAs of a rotation apart too (and those an earlier
        # release generated, which shared their subject).
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                       critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(key.public_key()),
                       critical=False)
        .sign(key, hashes.SHA256())
    )
    return Authority(cert, key, (cert,))


def _issuer_key(data: bytes, label: str, fix: str) -> CertificateIssuerPrivateKeyTypes:
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except TypeError:
        raise ValueError(f"{label} is encrypted: {fix} without a passphrase") from None
    except ValueError:
        raise ValueError(f"{label} holds no PEM private key: {fix}") from None
    if not isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
                      | ed25519.Ed25519PrivateKey | ed448.Ed448PrivateKey):
        raise ValueError(f"{label} is a {type(key).__name__}, which cannot sign certificates: "
                         f"{fix} (RSA, ECDSA or EdDSA)")
    return key


def _certificates(data: bytes, label: str, fix: str) -> list[x509.Certificate]:
    try:
        return x509.load_pem_x509_certificates(data)
    except ValueError:
        raise ValueError(f"{label} holds no PEM certificate: {fix}") from None


def load_user_ca(settings: Settings, now: datetime) -> Authority:
    """The inventory's own CA, read where it lies and checked: it is never copied. SE-02"""
    cert_path = Path(settings.ca_cert).expanduser()
    key_path = Path(settings.ca_key).expanduser()
    cert_fix = "give the path of your CA's PEM certificate in kafkaform_tls_ca_cert"
    key_fix = "give the path of your CA's PEM private key in kafkaform_tls_ca_key"
    cert_data = read_if_present(cert_path)
    if cert_data is None:
        raise ValueError(f"kafkaform_tls_ca_cert: {cert_path} does not exist on the control node: "
                         f"{cert_fix}")
    # The operator's own file: read sealed or not, never rewritten.
    key_data = read_if_present(key_path)
    if key_data is None:
        raise ValueError(f"kafkaform_tls_ca_key: {key_path} does not exist on the control node: "
                         f"{key_fix}")
    key_data = sealed.unseal(key_data, f"kafkaform_tls_ca_key: {key_path}")
    certs = _certificates(cert_data, f"kafkaform_tls_ca_cert: {cert_path}", cert_fix)
    key = _issuer_key(key_data, f"kafkaform_tls_ca_key: {key_path}", key_fix)
    cert = certs[0]
    if spki(cert.public_key()) != spki(key.public_key()):
        raise ValueError(f"kafkaform_tls_ca_key: {key_path} is not the key of {cert_path}: give "
                         "the key that belongs to the certificate in kafkaform_tls_ca_cert")
    try:
        is_ca = cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    except x509.ExtensionNotFound:
        is_ca = False
    if not is_ca:
        raise ValueError(f"kafkaform_tls_ca_cert: {cert_path} is not a CA certificate (no "
                         "basicConstraints CA:TRUE): give a CA's certificate, not a host's")
    with contextlib.suppress(x509.ExtensionNotFound):
        if not cert.extensions.get_extension_for_class(x509.KeyUsage).value.key_cert_sign:
            raise ValueError(f"kafkaform_tls_ca_cert: {cert_path} may not sign certificates "
                             "(its keyUsage lacks keyCertSign): give a CA that may")
    if cert.not_valid_after_utc <= now:
        raise ValueError(f"kafkaform_tls_ca_cert: {cert_path} expired on "
                         f"{cert.not_valid_after_utc.date()}: give your CA's renewed certificate")
    return Authority(cert, key, tuple(certs))


def generated_ca(pki: Path, stem: str, plain: bool, *, write: bool) -> Authority | None:
    """The CA stored as ``<stem>.crt`` and ``<stem>.key``, or ``None`` when neither exists."""
    cert_path, key_path = pki / f"{stem}.crt", pki / f"{stem}.key"
    cert_data, key_data = read_if_present(cert_path), read_private(key_path, plain, write=write)
    if cert_data is None and key_data is None:
        return None
    restore = "restore it from your backup of kafkaform_secrets_dir"
    if key_data is None:
        raise ValueError(f"{key_path} is missing beside {cert_path.name}: {restore}, or delete "
                         f"{cert_path.name} to generate a new CA (every host is then reissued)")
    if cert_data is None:
        raise ValueError(f"{cert_path} is missing beside {key_path.name}: {restore}, or delete "
                         f"{key_path.name} to generate a new CA (every host is then reissued)")
    cert = _certificates(cert_data, str(cert_path), restore)[0]
    key = _issuer_key(key_data, str(key_path), restore)
    if spki(cert.public_key()) != spki(key.public_key()):
        raise ValueError(f"{key_path} does not match {cert_path.name}: restore both from your "
                         "backup of kafkaform_secrets_dir")
    return Authority(cert, key, (cert,))


def current_ca(pki: Path, settings: Settings, now: datetime, *, write: bool) -> Authority:
    """The CA that signs, generated (and stored when ``write``) the first time. SE-02"""
    if settings.user_ca:
        return load_user_ca(settings, now)
    ca = generated_ca(pki, "ca", settings.plain, write=write)
    if ca is None:
        ca = generate_ca(settings.cluster, settings.ca_days, now)
        if write:
            store_ca(pki, "ca", ca, settings.plain)
    elif ca.cert.not_valid_after_utc <= now:
        raise ValueError(f"the cluster CA {pki / 'ca.crt'} expired on "
                         f"{ca.cert.not_valid_after_utc.date()}: replace it with "
                         "kafkaform.pki.rotate_ca, or delete ca.crt and ca.key to start a new CA")
    return ca


def store_ca(pki: Path, stem: str, ca: Authority, plain: bool) -> None:
    # Key first: a crash between the two leaves a key beside no certificate or a foreign one,
    # which the next run refuses with a fix instead of signing with a mismatched pair.
    write_private(pki / f"{stem}.key", key_pem(ca.key), plain)
    _write(pki / f"{stem}.crt", certificates_pem(ca.cert), PUBLIC)


def _trust(pki: Path, ca: Authority) -> bytes:
    """The trust bundle: the current CA, then the previous one while a rotation lasts."""
    previous = read_if_present(pki / "ca-previous.crt") or b""
    return certificates_pem(*ca.chain) + previous


def sync_trust(pki: Path, ca: Authority, *, write: bool) -> bool:
    wanted = _trust(pki, ca)
    if read_if_present(pki / "trust.pem") == wanted:
        return False
    if write:
        _write(pki / "trust.pem", wanted, PUBLIC)
    return True
