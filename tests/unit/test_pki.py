"""kafkaform.pki: the cluster CA and the host certificates on the control node (SE-02)."""

from __future__ import annotations

import ipaddress
import stat
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from cryptography.x509.verification import PolicyBuilder, Store, VerificationError

from kafkaform.paths import load_collections
from kafkaform.pki import (
    HostCertificate,
    certificate_info,
    ensure_host,
    read_material,
    retire_previous_ca,
    rotate_ca,
)
from kafkaform.secrets import secret

ROOT = Path(__file__).resolve().parents[2]
NOW = datetime(2031, 3, 1, 12, 0, tzinfo=UTC)
HOST = "broker-1"
NAMES = ["broker-1", "broker-1.example.com", "10.0.0.11", "fd00::11"]
OU = "kafka-broker"


def settings(tmp_path: Path, **extra: Any) -> dict[str, Any]:
    return {"kafkaform_secrets_dir": str(tmp_path / "secrets"), "kafka_cluster_name": "demo",
            **extra}


def pki(tmp_path: Path) -> Path:
    return tmp_path / "secrets" / "demo" / "pki"


def issue(variables: dict[str, Any], host: str = HOST, names: list[str] | None = None,
          ou: str = OU, **kwargs: Any) -> HostCertificate:
    kwargs.setdefault("now", NOW)
    return ensure_host(variables, host, NAMES if names is None else names, ou, **kwargs)


def snapshot(root: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every file under ``root``: its bytes, inode and modification time (a rewrite shows)."""
    return {str(path.relative_to(root)): (path.read_bytes(), path.stat().st_ino,
                                          path.stat().st_mtime_ns)
            for path in sorted(root.rglob("*")) if path.is_file()}


def certs(path: Path | str) -> list[x509.Certificate]:
    return x509.load_pem_x509_certificates(Path(path).read_bytes())


def password(tmp_path: Path) -> bytes:
    return secret("keystore", settings(tmp_path)).encode()


def verify(leaf: x509.Certificate, trust: list[x509.Certificate], name: str,
           at: datetime = NOW) -> None:
    try:
        subject: x509.DNSName | x509.IPAddress = x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        subject = x509.DNSName(name)
    verifier = PolicyBuilder().store(Store(trust)).time(at).build_server_verifier(subject)
    verifier.verify(leaf, [])


def make_ca(tmp_path: Path, *, ca: bool = True) -> tuple[Path, Path]:
    """A CA of the user's own (RSA, as many corporate CAs are), outside the secrets directory."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Corp Root")])
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(NOW - timedelta(days=1)).not_valid_after(NOW + timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False,
                                     key_encipherment=False, data_encipherment=False,
                                     key_agreement=False, key_cert_sign=ca, crl_sign=ca,
                                     encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                       critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / "corp-ca.crt", tmp_path / "corp-ca.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


# Generation ---------------------------------------------------------------------------------


def test_first_call_generates_the_ca_and_the_host_files(tmp_path: Path) -> None:
    result = issue(settings(tmp_path))
    assert (result.changed, result.reason) == (True, "missing")
    base = pki(tmp_path)
    host = base / "hosts" / HOST
    assert result.trust == str(base / "trust.pem")
    assert (result.cert, result.key, result.keystore) == (
        str(host / "cert.pem"), str(host / "key.pem"), str(host / "keystore.p12"))
    assert Path(result.trust).is_absolute()
    [ca] = certs(base / "ca.crt")
    assert certs(result.trust) == [ca]
    assert ca.subject.rfc4514_string().endswith(",CN=kafkaform CA demo,O=demo")
    # Its own subject, even beside another CA of the cluster (ZooKeeper's PEM trust store keeps
    # one certificate per subject).
    [serial] = ca.subject.get_attributes_for_oid(x509.NameOID.SERIAL_NUMBER)
    assert serial.value == f"{ca.serial_number:x}"
    assert ca.issuer == ca.subject
    constraints = ca.extensions.get_extension_for_class(x509.BasicConstraints)
    assert constraints.critical and constraints.value.ca and constraints.value.path_length == 0
    usage = ca.extensions.get_extension_for_class(x509.KeyUsage).value
    assert usage.key_cert_sign and usage.crl_sign and not usage.digital_signature
    assert isinstance(ca.public_key(), ec.EllipticCurvePublicKey)
    ca.verify_directly_issued_by(ca)


def test_modes(tmp_path: Path) -> None:
    issue(settings(tmp_path))
    modes = {str(path.relative_to(pki(tmp_path))): stat.S_IMODE(path.stat().st_mode)
             for path in pki(tmp_path).rglob("*")}
    modes["."] = stat.S_IMODE(pki(tmp_path).stat().st_mode)
    assert modes == {
        ".": 0o700, ".lock": 0o600, "ca.crt": 0o644, "ca.key": 0o600, "trust.pem": 0o644,
        "hosts": 0o700, f"hosts/{HOST}": 0o700, f"hosts/{HOST}/cert.pem": 0o644,
        f"hosts/{HOST}/key.pem": 0o600, f"hosts/{HOST}/keystore.p12": 0o600,
    }


def test_host_certificate_profile(tmp_path: Path) -> None:
    result = issue(settings(tmp_path))
    leaf, ca = certs(result.cert)
    assert ca == certs(pki(tmp_path) / "ca.crt")[0]
    assert result.subject == leaf.subject.rfc4514_string() == "CN=broker-1,OU=kafka-broker,O=demo"
    sans = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == ["broker-1", "broker-1.example.com"]
    addresses = [ipaddress.ip_address("10.0.0.11"), ipaddress.ip_address("fd00::11")]
    assert sans.get_values_for_type(x509.IPAddress) == addresses
    eku = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(eku) == [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
    usage = leaf.extensions.get_extension_for_class(x509.KeyUsage).value
    assert usage.digital_signature and usage.key_encipherment and not usage.key_cert_sign
    assert not leaf.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert leaf.not_valid_before_utc == NOW - timedelta(minutes=5)
    assert leaf.not_valid_after_utc == NOW + timedelta(days=365)
    assert result.not_after == (NOW + timedelta(days=365)).isoformat()
    assert Path(result.key).read_bytes().startswith(b"$ANSIBLE_VAULT;")  # sealed at rest, SE-16
    key_pem = read_material(result.key)
    assert key_pem.startswith(b"-----BEGIN PRIVATE KEY-----")  # PKCS#8, as the host gets it
    key = serialization.load_pem_private_key(key_pem, password=None)
    assert key.public_key() == leaf.public_key()


def test_certificate_info(tmp_path: Path) -> None:
    result = issue(settings(tmp_path))
    assert certificate_info(Path(result.cert).read_bytes()) == {
        "subject": "CN=broker-1,OU=kafka-broker,O=demo",
        "issuer": certs(Path(result.trust))[0].subject.rfc4514_string(),
        "not_after": result.not_after,
        "sans": NAMES,
    }


def test_chain_verifies_for_every_name_and_no_other(tmp_path: Path) -> None:
    result = issue(settings(tmp_path))
    leaf = certs(result.cert)[0]
    for name in NAMES:
        verify(leaf, certs(result.trust), name)
    with pytest.raises(VerificationError):
        verify(leaf, certs(result.trust), "broker-2.example.com")
    with pytest.raises(VerificationError):
        verify(leaf, certs(result.trust), "10.0.0.12")


def test_keystore_holds_key_certificate_and_chain(tmp_path: Path) -> None:
    result = issue(settings(tmp_path))
    stored = pkcs12.load_pkcs12(Path(result.keystore).read_bytes(), password(tmp_path))
    leaf, ca = certs(result.cert)
    assert stored.cert is not None and stored.key is not None
    assert stored.cert.certificate == leaf and stored.cert.friendly_name == HOST.encode()
    assert [extra.certificate for extra in stored.additional_certs] == [ca]
    assert stored.key.public_key() == leaf.public_key()


def test_each_host_gets_its_own_key_from_the_same_ca(tmp_path: Path) -> None:
    one = issue(settings(tmp_path))
    two = issue(settings(tmp_path), "broker-2", ["broker-2", "10.0.0.12"])
    assert two.changed
    assert certs(one.cert)[1] == certs(two.cert)[1]
    assert certs(one.cert)[0].public_key() != certs(two.cert)[0].public_key()


# Idempotence --------------------------------------------------------------------------------


def test_second_call_changes_nothing(tmp_path: Path) -> None:
    first = issue(settings(tmp_path))
    before = snapshot(tmp_path)
    again = issue(settings(tmp_path), names=list(reversed(NAMES)), now=NOW + timedelta(days=1))
    assert (again.changed, again.reason) == (False, "")
    assert snapshot(tmp_path) == before
    assert (again.not_after, again.subject) == (first.not_after, first.subject)


def test_names_change_reissues(tmp_path: Path) -> None:
    first = certs(issue(settings(tmp_path)).cert)[0]
    again = issue(settings(tmp_path), names=[*NAMES, "kafka.example.com"])
    assert (again.changed, again.reason) == (True, "names changed")
    leaf = certs(again.cert)[0]
    assert leaf.public_key() != first.public_key()  # a new key as well
    assert "kafka.example.com" in certificate_info(Path(again.cert).read_bytes())["sans"]
    verify(leaf, certs(again.trust), "kafka.example.com")
    assert not issue(settings(tmp_path), names=[*NAMES, "kafka.example.com"]).changed


def test_ou_change_reissues(tmp_path: Path) -> None:
    issue(settings(tmp_path))
    again = issue(settings(tmp_path), ou="zookeeper")
    assert (again.changed, again.reason) == (True, "OU changed")
    assert again.subject == "CN=broker-1,OU=zookeeper,O=demo"


def test_renewal_before_expiry(tmp_path: Path) -> None:
    first = issue(settings(tmp_path))
    assert not issue(settings(tmp_path), now=NOW + timedelta(days=334)).changed
    later = NOW + timedelta(days=340)
    renewed = issue(settings(tmp_path), now=later)
    assert (renewed.changed, renewed.reason) == (True, "expires within 30 days")
    assert renewed.not_after == (later + timedelta(days=365)).isoformat() != first.not_after
    assert not issue(settings(tmp_path), now=later).changed


def test_renewal_setting_is_honoured(tmp_path: Path) -> None:
    variables = settings(tmp_path, kafkaform_tls_cert_validity_days=90,
                         kafkaform_tls_renew_before_days="20")
    assert issue(variables).not_after == (NOW + timedelta(days=90)).isoformat()
    assert not issue(variables, now=NOW + timedelta(days=69)).changed
    assert issue(variables, now=NOW + timedelta(days=71)).reason == "expires within 20 days"


def test_certificates_never_outlive_the_ca_nor_renew_in_a_loop(tmp_path: Path) -> None:
    variables = settings(tmp_path, kafkaform_tls_ca_validity_days=100)
    result = issue(variables)
    ca = certs(pki(tmp_path) / "ca.crt")[0]
    assert result.not_after == ca.not_valid_after_utc.isoformat()
    # Within the renewal window of the CA's own expiry a new certificate would expire no later.
    assert not issue(variables, now=NOW + timedelta(days=90)).changed


def test_keystore_password_change_rewrites_only_the_keystore(tmp_path: Path) -> None:
    issue(settings(tmp_path))
    before = snapshot(tmp_path)
    variables = settings(tmp_path, kafkaform_secrets={"keystore": "a-new-keystore-password"})
    result = issue(variables)
    assert (result.changed, result.reason) == (True, "keystore password changed")
    after = snapshot(tmp_path)
    keystore = f"secrets/demo/pki/hosts/{HOST}/keystore.p12"
    assert {name for name in after if after[name] != before.get(name)} == {keystore}
    data = (tmp_path / keystore).read_bytes()
    key, cert, cas = pkcs12.load_key_and_certificates(data, b"a-new-keystore-password")
    assert key is not None and cert == certs(result.cert)[0] and cas == certs(result.trust)
    with pytest.raises(ValueError):
        pkcs12.load_key_and_certificates(data, password(tmp_path))
    assert not issue(variables).changed


def test_missing_keystore_is_rewritten_alone(tmp_path: Path) -> None:
    result = issue(settings(tmp_path))
    Path(result.keystore).unlink()
    before = snapshot(tmp_path)
    again = issue(settings(tmp_path))
    assert (again.changed, again.reason) == (True, "keystore missing")
    assert snapshot(tmp_path).items() >= before.items()


def test_a_lost_key_reissues(tmp_path: Path) -> None:
    result = issue(settings(tmp_path))
    Path(result.key).unlink()
    assert issue(settings(tmp_path)).reason == "key missing"


def test_a_lost_trust_bundle_is_rewritten(tmp_path: Path) -> None:
    result = issue(settings(tmp_path))
    Path(result.trust).unlink()
    again = issue(settings(tmp_path))
    assert (again.changed, again.reason) == (True, "trust bundle changed")
    assert certs(again.trust) == certs(pki(tmp_path) / "ca.crt")


def test_an_expired_ca_is_refused_with_the_fix(tmp_path: Path) -> None:
    issue(settings(tmp_path))
    with pytest.raises(ValueError, match=r"expired on .*: replace it with kafkaform.pki.rotate_ca"):
        issue(settings(tmp_path), now=NOW + timedelta(days=3651))


# Dry run (check mode) -----------------------------------------------------------------------


def test_dry_run_on_a_new_control_node_writes_nothing(tmp_path: Path) -> None:
    result = issue(settings(tmp_path), dry_run=True)
    assert (result.changed, result.reason) == (True, "missing")
    assert result.subject == "CN=broker-1,OU=kafka-broker,O=demo"
    assert list(tmp_path.iterdir()) == []


def test_dry_run_reports_without_writing(tmp_path: Path) -> None:
    issue(settings(tmp_path))
    before = snapshot(tmp_path)
    assert not issue(settings(tmp_path), dry_run=True).changed
    renamed = issue(settings(tmp_path), names=NAMES[:2], dry_run=True)
    assert (renamed.changed, renamed.reason) == (True, "names changed")
    expiring = issue(settings(tmp_path), dry_run=True, now=NOW + timedelta(days=350))
    assert (expiring.changed, expiring.reason) == (True, "expires within 30 days")
    rekeyed = issue(settings(tmp_path, kafkaform_secrets={"keystore": "another-keystore-pw"}),
                    dry_run=True)
    assert (rekeyed.changed, rekeyed.reason) == (True, "keystore password changed")
    other = issue(settings(tmp_path), "broker-2", ["broker-2"], dry_run=True)
    assert (other.changed, other.reason) == (True, "missing")
    assert snapshot(tmp_path) == before


# A CA of the user's own ---------------------------------------------------------------------


def test_user_ca_signs_and_stays_where_it_is(tmp_path: Path) -> None:
    cert_path, key_path = make_ca(tmp_path)
    variables = settings(tmp_path, kafkaform_tls_ca_cert=str(cert_path),
                         kafkaform_tls_ca_key=str(key_path))
    result = issue(variables)
    assert result.changed
    leaf, ca = certs(result.cert)
    assert ca == certs(cert_path)[0] and certs(result.trust) == [ca]
    assert leaf.issuer.rfc4514_string() == "CN=Corp Root"
    verify(leaf, [ca], "broker-1.example.com")
    assert not (pki(tmp_path) / "ca.key").exists()
    assert not (pki(tmp_path) / "ca.crt").exists()
    assert not issue(variables).changed


def test_switching_to_a_user_ca_reissues(tmp_path: Path) -> None:
    issue(settings(tmp_path))
    cert_path, key_path = make_ca(tmp_path)
    result = issue(settings(tmp_path, kafkaform_tls_ca_cert=str(cert_path),
                            kafkaform_tls_ca_key=str(key_path)))
    assert result.reason == "issued by another CA"
    assert certs(result.trust) == certs(cert_path)


def test_user_ca_with_a_mismatched_key_is_refused(tmp_path: Path) -> None:
    cert_path = make_ca(tmp_path)[0]
    other = tmp_path / "other"
    other.mkdir()
    other_key = make_ca(other)[1]
    variables = settings(tmp_path, kafkaform_tls_ca_cert=str(cert_path),
                         kafkaform_tls_ca_key=str(other_key))
    with pytest.raises(ValueError, match=r"kafkaform_tls_ca_key: .* is not the key of .*: give "
                                         r"the key that belongs to the certificate"):
        issue(variables)
    assert not (pki(tmp_path) / "hosts").exists()


@pytest.mark.parametrize(("extra", "message"), [
    ({"kafkaform_tls_ca_cert": "/nonexistent/ca.crt", "kafkaform_tls_ca_key": "/x"},
     r"kafkaform_tls_ca_cert: /nonexistent/ca.crt does not exist"),
    ({"kafkaform_tls_ca_cert": "/nonexistent/ca.crt"},
     r"kafkaform_tls_ca_cert is set but kafkaform_tls_ca_key is empty"),
    ({"kafkaform_tls_renew_before_days": 365},
     r"kafkaform_tls_renew_before_days \(365\) must be below kafkaform_tls_cert_validity_days"),
    ({"kafkaform_tls_cert_validity_days": "a year"},
     r"kafkaform_tls_cert_validity_days must be a whole number of days"),
    ({"kafkaform_tls_ca_validity_days": True},
     r"kafkaform_tls_ca_validity_days must be a whole number of days"),
])
def test_bad_settings_are_refused(tmp_path: Path, extra: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        issue(settings(tmp_path, **extra))


def test_user_certificate_that_is_no_ca_is_refused(tmp_path: Path) -> None:
    cert_path, key_path = make_ca(tmp_path, ca=False)
    with pytest.raises(ValueError, match=r"kafkaform_tls_ca_cert: .* is not a CA certificate"):
        issue(settings(tmp_path, kafkaform_tls_ca_cert=str(cert_path),
                       kafkaform_tls_ca_key=str(key_path)))


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="names"):
        issue(settings(tmp_path), names=[])
    with pytest.raises(ValueError, match="ou is empty"):
        issue(settings(tmp_path), ou="")
    with pytest.raises(ValueError, match="xn--"):
        issue(settings(tmp_path), names=["bröker.example.com"])


# Rotation -----------------------------------------------------------------------------------


def test_the_trust_run_of_a_rotation_keeps_the_previous_cas_certificates(
        tmp_path: Path) -> None:
    """Every host must trust the new CA before any host presents one of its certificates: the
    run that spreads the new trust bundle keeps the certificates and keystores as they are."""
    old = issue(settings(tmp_path))
    before = snapshot(pki(tmp_path) / "hosts")
    rotate_ca(settings(tmp_path), now=NOW + timedelta(days=1))
    kept = issue(settings(tmp_path), now=NOW + timedelta(days=1), keep_previous_ca=True)
    # rotate_ca rewrote trust.pem already: the hosts' copies change, this host's material not.
    assert not kept.changed
    assert snapshot(pki(tmp_path) / "hosts") == before
    assert len(certs(kept.trust)) == 2
    assert certs(old.cert) == certs(kept.cert)
    # A certificate that needs renewing anyway comes from the new CA, even in that run.
    renamed = issue(settings(tmp_path), names=[*NAMES, "extra.example.com"],
                    now=NOW + timedelta(days=1), keep_previous_ca=True)
    assert renamed.changed
    certs(renamed.cert)[0].verify_directly_issued_by(certs(pki(tmp_path) / "ca.crt")[0])


def test_rotation_trusts_both_cas_until_the_previous_one_is_retired(tmp_path: Path) -> None:
    old = issue(settings(tmp_path))
    old_leaf, old_ca = certs(old.cert)
    rotate_ca(settings(tmp_path), now=NOW + timedelta(days=1))
    new_ca = certs(pki(tmp_path) / "ca.crt")[0]
    # Subjects of their own: a trust store keyed by subject (ZooKeeper's PEM one) keeps both.
    assert new_ca != old_ca and new_ca.subject != old_ca.subject
    assert certs(pki(tmp_path) / "ca-previous.crt") == [old_ca]
    assert certs(old.trust) == [new_ca, old_ca]
    # Hosts not yet reissued stay trusted during the overlap.
    verify(old_leaf, certs(old.trust), "broker-1.example.com", NOW + timedelta(days=1))

    result = issue(settings(tmp_path), now=NOW + timedelta(days=1))
    assert (result.changed, result.reason) == (True, "issued by another CA")
    leaf, chain_ca = certs(result.cert)
    assert chain_ca == new_ca
    leaf.verify_directly_issued_by(new_ca)
    verify(leaf, certs(result.trust), "broker-1.example.com", NOW + timedelta(days=1))
    assert not issue(settings(tmp_path), now=NOW + timedelta(days=1)).changed

    with pytest.raises(ValueError, match="retire it with retire_previous_ca"):
        rotate_ca(settings(tmp_path))

    assert retire_previous_ca(settings(tmp_path)) is True
    assert certs(result.trust) == [new_ca]
    assert not (pki(tmp_path) / "ca-previous.crt").exists()
    assert not (pki(tmp_path) / "ca-previous.key").exists()
    assert retire_previous_ca(settings(tmp_path)) is False
    assert not issue(settings(tmp_path), now=NOW + timedelta(days=1)).changed


def test_rotation_of_a_user_ca_is_refused(tmp_path: Path) -> None:
    cert_path, key_path = make_ca(tmp_path)
    with pytest.raises(ValueError, match="give your new CA in kafkaform_tls_ca_cert"):
        rotate_ca(settings(tmp_path, kafkaform_tls_ca_cert=str(cert_path),
                           kafkaform_tls_ca_key=str(key_path)))


# Concurrency --------------------------------------------------------------------------------


def _fork(args: tuple[str, str]) -> str:
    secrets_dir, host = args
    variables = {"kafkaform_secrets_dir": secrets_dir, "kafka_cluster_name": "demo"}
    return ensure_host(variables, host, [host, f"{host}.example.com"], OU, now=NOW).cert


def test_concurrent_forks_share_one_ca(tmp_path: Path) -> None:
    hosts = [f"broker-{n}" for n in range(8)]
    with ProcessPoolExecutor(max_workers=8) as pool:
        paths = list(pool.map(_fork, [(str(tmp_path / "secrets"), host) for host in hosts]))
    [ca] = certs(pki(tmp_path) / "ca.crt")
    for host, path in zip(hosts, paths, strict=True):
        leaf, chain_ca = certs(path)
        assert chain_ca == ca
        verify(leaf, [ca], f"{host}.example.com")
    assert len(list((tmp_path / "secrets" / "demo").glob("keystore"))) == 1


# The action plugin --------------------------------------------------------------------------


def test_action_plugin_imports_and_matches_its_documentation() -> None:
    # The plugin imports the package as the collection's plugin_utils, through Ansible's own
    # collection loader (`./dev install` links the checkout as kafkaform.platform there).
    load_collections()
    from ansible_collections.kafkaform.platform.plugins.action import host_certificate
    from ansible_collections.kafkaform.platform.plugins.modules import (
        host_certificate as stub,
    )

    options = yaml.safe_load(stub.DOCUMENTATION)["options"]
    assert {name: {key: spec[key] for key in ("type", "required", "elements", "default")
                   if key in spec}
            for name, spec in options.items()} == host_certificate.ARGUMENT_SPEC


def test_a_service_certificate_has_its_own_key_and_leaves_the_host_certificate(
        tmp_path: Path) -> None:
    """Node exporter beside a broker: its own certificate and key, under the host's directory,
    issued and kept current without touching the broker's."""
    variables = settings(tmp_path)
    broker = issue(variables)
    before = snapshot(pki(tmp_path) / "hosts" / HOST)
    dry = issue(variables, ou="monitoring", service="monitoring", dry_run=True)
    assert dry.changed and not Path(dry.cert).exists()  # check mode writes nothing
    exporter = issue(variables, ou="monitoring", service="monitoring")
    assert exporter.changed
    assert Path(exporter.cert).parent == pki(tmp_path) / "hosts" / HOST / "monitoring"
    assert read_material(exporter.key) != read_material(broker.key)
    assert exporter.subject == f"CN={HOST},OU=monitoring,O=demo"
    assert exporter.trust == broker.trust
    assert oct(Path(exporter.key).stat().st_mode & 0o777) == oct(0o600)
    assert exporter.keystore == ""  # it reads PEM files
    assert sorted(p.name for p in Path(exporter.cert).parent.iterdir()) == ["cert.pem", "key.pem"]
    assert oct(Path(exporter.cert).parent.stat().st_mode & 0o777) == oct(0o700)
    assert {k: v for k, v in snapshot(pki(tmp_path) / "hosts" / HOST).items()
            if not k.startswith("monitoring/")} == before
    assert issue(variables, ou="monitoring", service="monitoring").changed is False
    assert issue(variables).changed is False


def test_a_java_service_asks_its_certificate_with_a_keystore(tmp_path: Path) -> None:
    """A ZooKeeper member beside a broker: its own key in a PKCS12 keystore (the keystore
    secret's password), the broker's untouched."""
    variables = settings(tmp_path)
    broker = issue(variables)
    member = issue(variables, ou="zookeeper", service="zookeeper", keystore=True)
    assert Path(member.keystore).parent == pki(tmp_path) / "hosts" / HOST / "zookeeper"
    assert read_material(member.keystore) != read_material(broker.keystore)
    assert issue(variables, ou="zookeeper", service="zookeeper", keystore=True).changed is False


@pytest.mark.parametrize("service", ["a/b", "..", "."])
def test_a_service_that_cannot_name_a_directory_is_refused(tmp_path: Path, service: str) -> None:
    with pytest.raises(ValueError, match="cannot name a directory"):
        issue(settings(tmp_path), service=service)
