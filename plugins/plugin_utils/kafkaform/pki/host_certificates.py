"""One certificate per host (and per service that needs its own), issued or renewed only when
it is not current."""

from __future__ import annotations

import contextlib
import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from cryptography.hazmat.primitives.asymmetric.types import (
    CertificateIssuerPrivateKeyTypes,
)
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from ..secrets import write_whole as _write
from .authority import Authority, current_ca, generated_ca, spki, sync_trust
from .files import (
    PRIVATE,
    PUBLIC,
    certificates_pem,
    key_pem,
    locked,
    make_dir,
    read_if_present,
    read_private,
    write_private,
)
from .settings import (
    BACKDATE,
    CN_MAX,
    KEYSTORE_KDF_ROUNDS,
    Settings,
    current_time,
    keystore_password,
    pki_dir,
    read_settings,
)

#: Keys a host's keystore can hold (kafkaform issues ECDSA ones).
_HostKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey


@dataclass(frozen=True)
class HostCertificate:
    """What :func:`ensure_host` did (or would do, in a dry run) and where the files are."""

    changed: bool
    reason: str
    trust: str
    cert: str
    key: str
    keystore: str
    not_after: str
    subject: str


@dataclass(frozen=True)
class _HostFiles:
    dir: Path

    @property
    def cert(self) -> Path:
        return self.dir / "cert.pem"

    @property
    def key(self) -> Path:
        return self.dir / "key.pem"

    @property
    def keystore(self) -> Path:
        return self.dir / "keystore.p12"


def _host_names(names: Sequence[str]) -> list[str]:
    """``names`` normalised (DNS names lower case, addresses in their compact form), in order."""
    if isinstance(names, str) or not names:
        raise ValueError("names must list the host's DNS names and addresses: give at least one")
    found: list[str] = []
    for raw in names:
        name = str(raw).strip()
        try:
            found.append(str(ipaddress.ip_address(name)))
            continue
        except ValueError:
            pass
        if not name or not name.isascii():
            raise ValueError(f"names holds {raw!r}, which is no DNS name or IP address: give "
                             "DNS names (an internationalised one in its xn-- form) and addresses")
        found.append(name.lower())
    return list(dict.fromkeys(found))


def _general_name(name: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def _san_names(cert: x509.Certificate) -> set[str]:
    try:
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return set()
    return ({name.lower() for name in sans.get_values_for_type(x509.DNSName)}
            | {str(address) for address in sans.get_values_for_type(x509.IPAddress)})


def _subject(host: str, ou: str, cluster: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, cluster),
                      x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, ou),
                      x509.NameAttribute(NameOID.COMMON_NAME, host)])


def _not_after(ca: Authority, settings: Settings, now: datetime) -> datetime:
    # A certificate outliving its CA would fail anyway, at the CA's expiry.
    return min(now + timedelta(days=settings.cert_days), ca.cert.not_valid_after_utc)


def _hash_for(key: CertificateIssuerPrivateKeyTypes) -> hashes.SHA256 | None:
    # Ed25519 and Ed448 sign the message itself and take no separate digest.
    if isinstance(key, ed25519.Ed25519PrivateKey | ed448.Ed448PrivateKey):
        return None
    return hashes.SHA256()


def _issue(ca: Authority, host: str, names: list[str], ou: str, settings: Settings,
           now: datetime) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    try:
        ca_ski = ca.cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
        aki = x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski)
    except x509.ExtensionNotFound:
        aki = x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.key.public_key())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_subject(host, ou, settings.cluster))
        .issuer_name(ca.cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(_not_after(ca, settings, now))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False,
                                     key_encipherment=True, data_encipherment=False,
                                     key_agreement=False, key_cert_sign=False, crl_sign=False,
                                     encipher_only=False, decipher_only=False), critical=True)
        # Both: a broker is a server to clients and a client of the other brokers.
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH,
                                              ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName([_general_name(n) for n in names]),
                       critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                       critical=False)
        .add_extension(aki, critical=False)
        .sign(ca.key, _hash_for(ca.key))
    )
    return cert, key


def _keystore(host: str, key: _HostKey, cert: x509.Certificate, ca: Authority,
              password: str) -> bytes:
    # PBES2 with AES-256 and an HMAC-SHA256 MAC: what Java 17's PKCS12 KeyStore reads.
    encryption = (
        serialization.PrivateFormat.PKCS12.encryption_builder()
        .kdf_rounds(KEYSTORE_KDF_ROUNDS)
        .key_cert_algorithm(pkcs12.PBES.PBESv2SHA256AndAES256CBC)
        .hmac_hash(hashes.SHA256())
        .build(password.encode())
    )
    return pkcs12.serialize_key_and_certificates(host.encode(), key, cert, ca.chain, encryption)


@dataclass(frozen=True)
class _Current:
    """A host's files as they are, parsed; ``None`` where missing or unreadable."""

    cert: x509.Certificate | None
    chain: tuple[x509.Certificate, ...]
    key: _HostKey | None
    keystore: bytes | None

    @classmethod
    def read(cls, files: _HostFiles, plain: bool, *, write: bool) -> _Current:
        cert: x509.Certificate | None = None
        chain: tuple[x509.Certificate, ...] = ()
        key: _HostKey | None = None
        data = read_if_present(files.cert)
        if data is not None:
            with contextlib.suppress(ValueError):
                cert, *rest = x509.load_pem_x509_certificates(data)
                chain = tuple(rest)
        data = read_private(files.key, plain, write=write)  # sealed.SealError: not opened
        if data is not None:
            with contextlib.suppress(ValueError, TypeError):
                loaded = serialization.load_pem_private_key(data, password=None)
                # Any other kind of key is as good as none: the host is reissued.
                key = loaded if isinstance(loaded, _HostKey) else None
        return cls(cert, chain, key, read_if_present(files.keystore))


def _reissue_reason(current: _Current, ca: Authority, names: list[str], subject: x509.Name,
                    settings: Settings, now: datetime) -> str:
    """Why the host needs a new certificate and key, or "" when the current ones do. SE-02"""
    cert = current.cert
    if cert is None:
        return "missing"
    if current.key is None:
        return "key missing"
    if spki(current.key.public_key()) != spki(cert.public_key()):
        return "key does not match the certificate"
    try:
        cert.verify_directly_issued_by(ca.cert)
    except (ValueError, TypeError, InvalidSignature):
        return "issued by another CA"
    if current.chain != ca.chain:
        return "CA certificate changed"
    if _san_names(cert) != set(names):
        return "names changed"
    if cert.subject != subject:
        ou = NameOID.ORGANIZATIONAL_UNIT_NAME
        if cert.subject.get_attributes_for_oid(ou) != subject.get_attributes_for_oid(ou):
            return "OU changed"
        return "subject changed"
    left = cert.not_valid_after_utc - now
    # Renewing gains nothing once the CA's own expiry caps the certificate already.
    if left < timedelta(days=settings.renew_days) \
            and _not_after(ca, settings, now) > cert.not_valid_after_utc:
        return "expired" if left <= timedelta(0) else f"expires within {settings.renew_days} days"
    return ""


def _keystore_reason(data: bytes | None, host: str, key: _HostKey,
                     cert: x509.Certificate, ca: Authority, password: str) -> str:
    """Why keystore.p12 alone needs rewriting, or "" when it holds the current key and chain."""
    if data is None:
        return "keystore missing"
    try:
        stored = pkcs12.load_pkcs12(data, password.encode())
    except ValueError:
        return "keystore password changed"
    if (stored.key is None or stored.cert is None
            or spki(stored.key.public_key()) != spki(key.public_key())
            or stored.cert.certificate != cert
            or stored.cert.friendly_name != host.encode()
            or tuple(extra.certificate for extra in stored.additional_certs) != ca.chain):
        return "keystore out of date"
    return ""


def _plain_name(name: str) -> bool:
    return bool(name) and "/" not in name and name not in {".", ".."}


def _check_host(host: str, ou: str, service: str) -> None:
    if not _plain_name(host):
        raise ValueError(f"host {host!r} cannot name a directory: use a plain inventory hostname")
    if service and not _plain_name(service):
        raise ValueError(f"service {service!r} cannot name a directory: use a plain name, e.g. "
                         "monitoring")
    if len(host) > CN_MAX:
        raise ValueError(f"inventory hostname {host!r} is longer than the {CN_MAX} characters a "
                         "certificate's common name allows: use a shorter inventory name (the "
                         "long one can stay in names)")
    if not ou.strip():
        raise ValueError("ou is empty: give the role of the host's service, e.g. kafka-broker")


def ensure_host(variables: Mapping[str, Any], host: str, names: Sequence[str], ou: str, *,
                service: str = "", keystore: bool | None = None, dry_run: bool = False,
                now: datetime | None = None, keep_previous_ca: bool = False,
                renew: bool = False) -> HostCertificate:
    """Make ``host``'s certificate current (SE-02): issue it, with a new key, when it is missing,
    when its names or OU differ, when another CA issued it or when it expires within
    kafkaform_tls_renew_before_days; rewrite only the keystore when its password changed; write
    nothing otherwise. ``dry_run`` (check mode) reports the same and writes nothing at all.

    ``service``: a certificate and key of their own for one service of the host, kept apart
    from the host's (``hosts/<host>/<service>/``), for a service that runs as another user and
    must not hold the key of the host's main service (node exporter beside a broker). Such a
    service reads PEM files: it gets no keystore (``keystore`` is "") unless ``keystore`` asks
    for one (a Java service, such as a ZooKeeper member beside a broker).

    ``keep_previous_ca``: during a CA rotation, a certificate the previous CA issued is kept as
    long as it is otherwise current, so the run that spreads the new trust bundle reissues
    nothing (every host must trust the new CA before any host presents its certificates).
    ``renew``: issue a new certificate and key now, whatever the current one's expiry."""
    _check_host(host, ou, service)
    wanted = _host_names(names)
    settings = read_settings(variables)
    moment = current_time(now)
    pki = pki_dir(variables, create=not dry_run)
    files = _HostFiles(pki / "hosts" / host / service if service else pki / "hosts" / host)
    with_keystore = not service if keystore is None else keystore
    subject = _subject(host, ou, settings.cluster)
    with locked(pki, exclusive=not dry_run):
        ca = current_ca(pki, settings, moment, write=not dry_run)
        password = keystore_password(variables, create=not dry_run)
        current = _Current.read(files, settings.plain, write=not dry_run)
        issuer = ca
        previous = (generated_ca(pki, "ca-previous", settings.plain, write=not dry_run)
                    if keep_previous_ca else None)
        if previous is not None and current.cert is not None \
                and _reissue_reason(current, previous, wanted, subject, settings, moment) == "":
            issuer = previous
        reason = _reissue_reason(current, issuer, wanted, subject, settings, moment) \
            or ("renewal requested" if renew else "")
        # The reason already covers a missing certificate or key; the test narrows the types.
        if reason or current.cert is None or current.key is None:
            cert, key = _issue(ca, host, wanted, ou, settings, moment)
            if not dry_run:
                make_dir(pki / "hosts")
                make_dir(files.dir.parent)
                make_dir(files.dir)
                # Keystore first, certificate last: an interrupted run finds the old
                # certificate with a mismatching key, and reissues.
                if with_keystore:
                    _write(files.keystore, _keystore(host, key, cert, ca, password), PRIVATE)
                write_private(files.key, key_pem(key), settings.plain)
                _write(files.cert, certificates_pem(cert, *ca.chain), PUBLIC)
        else:
            cert = current.cert
            reason = _keystore_reason(current.keystore, host, current.key, cert, issuer,
                                      password) if with_keystore else ""
            if reason and not dry_run:
                _write(files.keystore, _keystore(host, current.key, cert, issuer, password),
                       PRIVATE)
        if sync_trust(pki, ca, write=not dry_run):
            reason = reason or "trust bundle changed"
    return HostCertificate(
        changed=bool(reason),
        reason=reason,
        trust=str(pki / "trust.pem"),
        cert=str(files.cert),
        key=str(files.key),
        keystore=str(files.keystore) if with_keystore else "",
        not_after=cert.not_valid_after_utc.isoformat(),
        subject=cert.subject.rfc4514_string(),
    )
