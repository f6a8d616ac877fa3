"""The cluster's PKI on the control node: its CA and one certificate per host. SE-02

Everything lives in ``<kafkaform_secrets_dir>/<kafka_cluster_name>/pki/`` (directories 0700,
private keys and keystores 0600, the rest 0644); the private keys are sealed with the run's vault
secret (``sealed.py``) unless the inventory opts into plain text::

    ca.crt, ca.key                    the current CA, generated once (unless the inventory gives
                                      its own with kafkaform_tls_ca_cert and kafkaform_tls_ca_key)
    ca-previous.crt, ca-previous.key  the CA before the last rotate_ca, until retire_previous_ca
    trust.pem                         what every host trusts: the current CA, then the previous one
    hosts/<host>/cert.pem             the host's certificate followed by its CA chain
    hosts/<host>/key.pem              its key (PKCS#8, sealed)
    hosts/<host>/keystore.p12         key, certificate and chain, under the keystore password

:func:`ensure_host` issues or renews a host's certificate and writes nothing when all is current,
so a second run copies nothing and restarts nothing. Ansible runs one fork per host at once:
every write happens under an ``flock`` of ``pki/.lock`` and replaces its file atomically.
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from cryptography.hazmat.primitives.asymmetric.types import (
    CertificateIssuerPrivateKeyTypes,
    PrivateKeyTypes,
)
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from . import sealed
from .defaults import CLUSTER_DEFAULTS
from .secrets import cluster_dir, secret
from .secrets import write_whole as _write

#: Clock skew between the control node and the hosts a new certificate tolerates.
BACKDATE = timedelta(minutes=5)
#: Java's own default for PKCS#12; the generated keystore password is 32 random characters, so
#: more rounds would only slow down the check every run makes.
KEYSTORE_KDF_ROUNDS = 10_000
#: The longest common name X.509 allows.
_CN_MAX = 64

_PUBLIC = 0o644
_PRIVATE = 0o600

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
class _Settings:
    cluster: str
    ca_cert: str
    ca_key: str
    ca_days: int
    cert_days: int
    renew_days: int
    plain: bool  # kafkaform_secrets_plaintext: keys stored unsealed

    @property
    def user_ca(self) -> bool:
        return bool(self.ca_cert or self.ca_key)


@dataclass(frozen=True)
class _CA:
    cert: x509.Certificate
    key: CertificateIssuerPrivateKeyTypes
    # The certificates a host presents after its own: the CA first, then any the user's file adds.
    chain: tuple[x509.Certificate, ...]


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


# Settings -----------------------------------------------------------------------------------


#: Cluster-wide variables :func:`ensure_host` reads besides every ``kafkaform_tls_*`` setting.
CLUSTER_SETTINGS = frozenset({"kafka_cluster_name", "kafkaform_secrets_dir", "kafkaform_secrets",
                              sealed.PLAINTEXT_SETTING})


def reads(name: str) -> bool:
    """Whether :func:`ensure_host` and :func:`rotate_ca` read the inventory variable ``name``."""
    return name in CLUSTER_SETTINGS or name.startswith("kafkaform_tls_")


def _setting(variables: Mapping[str, Any], name: str) -> Any:
    value = variables.get(name)
    return CLUSTER_DEFAULTS[name] if value is None or value == "" else value


def _days(variables: Mapping[str, Any], name: str) -> int:
    value = _setting(variables, name)
    # bool is an int to Python, and "yes" in YAML is a bool: refuse it rather than read 1 day.
    if isinstance(value, bool) or not str(value).strip().isdigit():
        raise ValueError(f"{name} must be a whole number of days, not {value!r}: "
                         f"set it to e.g. {CLUSTER_DEFAULTS[name]}")
    days = int(str(value))
    if days == 0 and name != "kafkaform_tls_renew_before_days":
        raise ValueError(f"{name} is 0: set it to a positive number of days")
    return days


def _settings(variables: Mapping[str, Any]) -> _Settings:
    cluster = str(variables.get("kafka_cluster_name") or CLUSTER_DEFAULTS["kafka_cluster_name"])
    if len(f"kafkaform CA {cluster}") > _CN_MAX:
        raise ValueError(f"kafka_cluster_name {cluster!r} is too long for the CA's common name: "
                         f"use at most {_CN_MAX - len('kafkaform CA ')} characters")
    found = _Settings(
        cluster=cluster,
        ca_cert=str(_setting(variables, "kafkaform_tls_ca_cert")),
        ca_key=str(_setting(variables, "kafkaform_tls_ca_key")),
        ca_days=_days(variables, "kafkaform_tls_ca_validity_days"),
        cert_days=_days(variables, "kafkaform_tls_cert_validity_days"),
        renew_days=_days(variables, "kafkaform_tls_renew_before_days"),
        plain=sealed.plaintext(variables),
    )
    # Otherwise every certificate would be due for renewal the moment it is issued.
    if found.renew_days >= found.cert_days:
        raise ValueError(f"kafkaform_tls_renew_before_days ({found.renew_days}) must be below "
                         f"kafkaform_tls_cert_validity_days ({found.cert_days}): lower it")
    if found.user_ca and not (found.ca_cert and found.ca_key):
        given, missing = (("kafkaform_tls_ca_cert", "kafkaform_tls_ca_key") if found.ca_cert
                          else ("kafkaform_tls_ca_key", "kafkaform_tls_ca_cert"))
        raise ValueError(f"{given} is set but {missing} is empty: set both to use your own CA, "
                         "or neither to let kafkaform generate one")
    return found


def _now(now: datetime | None) -> datetime:
    # Certificates carry whole seconds: compare and issue in those.
    moment = now or datetime.now(UTC)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).replace(microsecond=0)


def _pki_dir(variables: Mapping[str, Any], *, create: bool) -> Path:
    path = cluster_dir(variables, create=create) / "pki"
    if create:
        _mkdir(path)
    return path


def rotation_under_way(variables: Mapping[str, Any]) -> bool:
    """Whether a CA rotation has started (rotate_ca) and not finished (retire_previous_ca)."""
    return (_pki_dir(variables, create=False) / "ca-previous.crt").is_file()


def _keystore_password(variables: Mapping[str, Any], *, create: bool) -> str:
    """The keystore password, or "" in a dry run when it is yet to be generated: a secret is
    never empty, so "" opens no keystore and the dry run reports what the real run rewrites."""
    given = (variables.get("kafkaform_secrets") or {}).get("keystore")
    if create or given or (_pki_dir(variables, create=False).parent / "keystore").is_file():
        return secret("keystore", variables)
    return ""


# Files --------------------------------------------------------------------------------------


def _mkdir(path: Path) -> None:
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        return
    os.chmod(path, 0o700)  # mkdir's mode passes through the umask


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _read_private(path: Path, plain: bool, *, write: bool) -> bytes | None:
    """A private key's PEM, unsealed; one stored in plain text that should not be (an earlier
    release wrote it) is sealed in place when the run may write."""
    data = _read(path)
    if data is None:
        return None
    opened = sealed.unseal(data, str(path))
    if write and sealed.needs_sealing(data, plain=plain):
        _write_private(path, opened, plain)
    return opened


def _write_private(path: Path, pem: bytes, plain: bool) -> None:
    _write(path, sealed.seal(pem, str(path), plain=plain), _PRIVATE)


def read_material(path: str | Path) -> bytes:
    """A file :func:`ensure_host` names, as a host gets it: a private key unsealed."""
    return sealed.unseal(Path(path).read_bytes(), str(path))


@contextlib.contextmanager
def _locked(pki: Path, *, exclusive: bool) -> Iterator[None]:
    """Hold ``pki/.lock``: exclusively to write, shared to read (a dry run). A dry run before the
    first real one finds no lock file and creates none: there is nothing to read yet."""
    lock = pki / ".lock"
    if exclusive:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, _PRIVATE)
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


def _pem(*certs: x509.Certificate) -> bytes:
    return b"".join(cert.public_bytes(serialization.Encoding.PEM) for cert in certs)


def _key_pem(key: PrivateKeyTypes) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _spki(key: Any) -> bytes:
    der: bytes = key.public_bytes(serialization.Encoding.DER,
                                  serialization.PublicFormat.SubjectPublicKeyInfo)
    return der


# The CA -------------------------------------------------------------------------------------


def _generate_ca(cluster: str, days: int, now: datetime) -> _CA:
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
    return _CA(cert, key, (cert,))


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


def _user_ca(settings: _Settings, now: datetime) -> _CA:
    """The inventory's own CA, read where it lies and checked: it is never copied. SE-02"""
    cert_path = Path(settings.ca_cert).expanduser()
    key_path = Path(settings.ca_key).expanduser()
    cert_fix = "give the path of your CA's PEM certificate in kafkaform_tls_ca_cert"
    key_fix = "give the path of your CA's PEM private key in kafkaform_tls_ca_key"
    cert_data = _read(cert_path)
    if cert_data is None:
        raise ValueError(f"kafkaform_tls_ca_cert: {cert_path} does not exist on the control node: "
                         f"{cert_fix}")
    key_data = _read(key_path)  # the operator's own file: read sealed or not, never rewritten
    if key_data is None:
        raise ValueError(f"kafkaform_tls_ca_key: {key_path} does not exist on the control node: "
                         f"{key_fix}")
    key_data = sealed.unseal(key_data, f"kafkaform_tls_ca_key: {key_path}")
    certs = _certificates(cert_data, f"kafkaform_tls_ca_cert: {cert_path}", cert_fix)
    key = _issuer_key(key_data, f"kafkaform_tls_ca_key: {key_path}", key_fix)
    cert = certs[0]
    if _spki(cert.public_key()) != _spki(key.public_key()):
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
    return _CA(cert, key, tuple(certs))


def _generated_ca(pki: Path, stem: str, plain: bool, *, write: bool) -> _CA | None:
    """The CA stored as ``<stem>.crt`` and ``<stem>.key``, or ``None`` when neither exists."""
    cert_path, key_path = pki / f"{stem}.crt", pki / f"{stem}.key"
    cert_data, key_data = _read(cert_path), _read_private(key_path, plain, write=write)
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
    if _spki(cert.public_key()) != _spki(key.public_key()):
        raise ValueError(f"{key_path} does not match {cert_path.name}: restore both from your "
                         "backup of kafkaform_secrets_dir")
    return _CA(cert, key, (cert,))


def _current_ca(pki: Path, settings: _Settings, now: datetime, *, write: bool) -> _CA:
    """The CA that signs, generated (and stored when ``write``) the first time. SE-02"""
    if settings.user_ca:
        return _user_ca(settings, now)
    ca = _generated_ca(pki, "ca", settings.plain, write=write)
    if ca is None:
        ca = _generate_ca(settings.cluster, settings.ca_days, now)
        if write:
            _store_ca(pki, "ca", ca, settings.plain)
    elif ca.cert.not_valid_after_utc <= now:
        raise ValueError(f"the cluster CA {pki / 'ca.crt'} expired on "
                         f"{ca.cert.not_valid_after_utc.date()}: replace it with "
                         "kafkaform.pki.rotate_ca, or delete ca.crt and ca.key to start a new CA")
    return ca


def _store_ca(pki: Path, stem: str, ca: _CA, plain: bool) -> None:
    # Key first: a crash between the two leaves a key beside no certificate or a foreign one,
    # which the next run refuses with a fix instead of signing with a mismatched pair.
    _write_private(pki / f"{stem}.key", _key_pem(ca.key), plain)
    _write(pki / f"{stem}.crt", _pem(ca.cert), _PUBLIC)


def _trust(pki: Path, ca: _CA) -> bytes:
    """The trust bundle: the current CA, then the previous one while a rotation lasts."""
    previous = _read(pki / "ca-previous.crt") or b""
    return _pem(*ca.chain) + previous


def _sync_trust(pki: Path, ca: _CA, *, write: bool) -> bool:
    wanted = _trust(pki, ca)
    if _read(pki / "trust.pem") == wanted:
        return False
    if write:
        _write(pki / "trust.pem", wanted, _PUBLIC)
    return True


# Host certificates --------------------------------------------------------------------------


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


def _not_after(ca: _CA, settings: _Settings, now: datetime) -> datetime:
    # A certificate outliving its CA would fail anyway, at the CA's expiry.
    return min(now + timedelta(days=settings.cert_days), ca.cert.not_valid_after_utc)


def _hash_for(key: CertificateIssuerPrivateKeyTypes) -> hashes.SHA256 | None:
    # Ed25519 and Ed448 sign the message itself and take no separate digest.
    if isinstance(key, ed25519.Ed25519PrivateKey | ed448.Ed448PrivateKey):
        return None
    return hashes.SHA256()


def _issue(ca: _CA, host: str, names: list[str], ou: str, settings: _Settings,
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


def _keystore(host: str, key: _HostKey, cert: x509.Certificate, ca: _CA, password: str) -> bytes:
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
        data = _read(files.cert)
        if data is not None:
            with contextlib.suppress(ValueError):
                cert, *rest = x509.load_pem_x509_certificates(data)
                chain = tuple(rest)
        data = _read_private(files.key, plain, write=write)  # sealed.SealError: not opened
        if data is not None:
            with contextlib.suppress(ValueError, TypeError):
                loaded = serialization.load_pem_private_key(data, password=None)
                # Any other kind of key is as good as none: the host is reissued.
                key = loaded if isinstance(loaded, _HostKey) else None
        return cls(cert, chain, key, _read(files.keystore))


def _reissue_reason(current: _Current, ca: _CA, names: list[str], subject: x509.Name,
                    settings: _Settings, now: datetime) -> str:
    """Why the host needs a new certificate and key, or "" when the current ones do. SE-02"""
    cert = current.cert
    if cert is None:
        return "missing"
    if current.key is None:
        return "key missing"
    if _spki(current.key.public_key()) != _spki(cert.public_key()):
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
                     cert: x509.Certificate, ca: _CA, password: str) -> str:
    """Why keystore.p12 alone needs rewriting, or "" when it holds the current key and chain."""
    if data is None:
        return "keystore missing"
    try:
        stored = pkcs12.load_pkcs12(data, password.encode())
    except ValueError:
        return "keystore password changed"
    if (stored.key is None or stored.cert is None
            or _spki(stored.key.public_key()) != _spki(key.public_key())
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
    if len(host) > _CN_MAX:
        raise ValueError(f"inventory hostname {host!r} is longer than the {_CN_MAX} characters a "
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
    settings = _settings(variables)
    moment = _now(now)
    pki = _pki_dir(variables, create=not dry_run)
    files = _HostFiles(pki / "hosts" / host / service if service else pki / "hosts" / host)
    with_keystore = not service if keystore is None else keystore
    subject = _subject(host, ou, settings.cluster)
    with _locked(pki, exclusive=not dry_run):
        ca = _current_ca(pki, settings, moment, write=not dry_run)
        password = _keystore_password(variables, create=not dry_run)
        current = _Current.read(files, settings.plain, write=not dry_run)
        issuer = ca
        previous = (_generated_ca(pki, "ca-previous", settings.plain, write=not dry_run)
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
                _mkdir(pki / "hosts")
                _mkdir(files.dir.parent)
                _mkdir(files.dir)
                # Keystore first, certificate last: an interrupted run finds the old
                # certificate with a mismatching key, and reissues.
                if with_keystore:
                    _write(files.keystore, _keystore(host, key, cert, ca, password), _PRIVATE)
                _write_private(files.key, _key_pem(key), settings.plain)
                _write(files.cert, _pem(cert, *ca.chain), _PUBLIC)
        else:
            cert = current.cert
            reason = _keystore_reason(current.keystore, host, current.key, cert, issuer,
                                      password) if with_keystore else ""
            if reason and not dry_run:
                _write(files.keystore, _keystore(host, current.key, cert, issuer, password),
                       _PRIVATE)
        if _sync_trust(pki, ca, write=not dry_run):
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


# Rotation -----------------------------------------------------------------------------------


def rotate_ca(variables: Mapping[str, Any], *, now: datetime | None = None) -> None:
    """Replace the generated CA (SE-02): the current one becomes ``ca-previous.*`` and stays in
    trust.pem beside the new one until :func:`retire_previous_ca`, so hosts still presenting a
    certificate of the old CA are trusted while each next run reissues theirs."""
    settings = _settings(variables)
    if settings.user_ca:
        raise ValueError("kafkaform_tls_ca_cert is set, and kafkaform rotates only the CA it "
                         "generated: give your new CA in kafkaform_tls_ca_cert and "
                         "kafkaform_tls_ca_key instead")
    moment = _now(now)
    pki = _pki_dir(variables, create=True)
    with _locked(pki, exclusive=True):
        if (pki / "ca-previous.crt").exists() or (pki / "ca-previous.key").exists():
            raise ValueError(f"{pki / 'ca-previous.crt'} is still trusted from the last "
                             "rotation: retire it with retire_previous_ca once every host has "
                             "a certificate of the current CA, then rotate again")
        old = _generated_ca(pki, "ca", settings.plain, write=True)
        if old is not None:
            _store_ca(pki, "ca-previous", old, settings.plain)
        new = _generate_ca(settings.cluster, settings.ca_days, moment)
        _store_ca(pki, "ca", new, settings.plain)
        _sync_trust(pki, new, write=True)


def retire_previous_ca(variables: Mapping[str, Any]) -> bool:
    """End a rotation (SE-02): drop the previous CA from trust.pem and delete its files. Run it
    once every host has a certificate of the current CA. True when anything changed."""
    settings = _settings(variables)
    pki = _pki_dir(variables, create=True)
    with _locked(pki, exclusive=True):
        changed = False
        for name in ("ca-previous.crt", "ca-previous.key"):
            with contextlib.suppress(FileNotFoundError):
                (pki / name).unlink()
                changed = True
        ca = (_user_ca(settings, _now(None)) if settings.user_ca
              else _generated_ca(pki, "ca", settings.plain, write=True))
        if ca is not None and _sync_trust(pki, ca, write=True):
            changed = True
    return changed


def certificate_info(pem: bytes) -> dict[str, Any]:
    """Subject, issuer, expiry and subject alternative names of the first certificate in
    ``pem``, for the tests and the verifier."""
    cert = x509.load_pem_x509_certificates(pem)[0]
    try:
        sans = [name.value if isinstance(name, x509.DNSName) else str(name.value)
                for name in cert.extensions.get_extension_for_class(
                    x509.SubjectAlternativeName).value
                if isinstance(name, x509.DNSName | x509.IPAddress)]
    except x509.ExtensionNotFound:
        sans = []
    return {
        "subject": cert.subject.rfc4514_string(),
        "issuer": cert.issuer.rfc4514_string(),
        "not_after": cert.not_valid_after_utc.isoformat(),
        "sans": sans,
    }
