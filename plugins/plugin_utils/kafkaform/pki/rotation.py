"""Replacing the generated CA and retiring the previous one (SE-02); what a certificate says."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from cryptography import x509

from .authority import generate_ca, generated_ca, load_user_ca, store_ca, sync_trust
from .files import locked
from .settings import current_time, pki_dir, read_settings


def rotate_ca(variables: Mapping[str, Any], *, now: datetime | None = None) -> None:
    """Replace the generated CA (SE-02): the current one becomes ``ca-previous.*`` and stays in
    trust.pem beside the new one until :func:`retire_previous_ca`, so hosts still presenting a
    certificate of the old CA are trusted while each next run reissues theirs."""
    settings = read_settings(variables)
    if settings.user_ca:
        raise ValueError("kafkaform_tls_ca_cert is set, and kafkaform rotates only the CA it "
                         "generated: give your new CA in kafkaform_tls_ca_cert and "
                         "kafkaform_tls_ca_key instead")
    moment = current_time(now)
    pki = pki_dir(variables, create=True)
    with locked(pki, exclusive=True):
        if (pki / "ca-previous.crt").exists() or (pki / "ca-previous.key").exists():
            raise ValueError(f"{pki / 'ca-previous.crt'} is still trusted from the last "
                             "rotation: retire it with retire_previous_ca once every host has "
                             "a certificate of the current CA, then rotate again")
        old = generated_ca(pki, "ca", settings.plain, write=True)
        if old is not None:
            store_ca(pki, "ca-previous", old, settings.plain)
        new = generate_ca(settings.cluster, settings.ca_days, moment)
        store_ca(pki, "ca", new, settings.plain)
        sync_trust(pki, new, write=True)


def retire_previous_ca(variables: Mapping[str, Any]) -> bool:
    """End a rotation (SE-02): drop the previous CA from trust.pem and delete its files. Run it
    once every host has a certificate of the current CA. True when anything changed."""
    settings = read_settings(variables)
    pki = pki_dir(variables, create=True)
    with locked(pki, exclusive=True):
        changed = False
        for name in ("ca-previous.crt", "ca-previous.key"):
            with contextlib.suppress(FileNotFoundError):
                (pki / name).unlink()
                changed = True
        ca = (load_user_ca(settings, current_time(None)) if settings.user_ca
              else generated_ca(pki, "ca", settings.plain, write=True))
        if ca is not None and sync_trust(pki, ca, write=True):
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
