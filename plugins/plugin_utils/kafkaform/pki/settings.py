"""The PKI's settings from the inventory's variables, and where its files live."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from .. import sealed
from ..defaults import CLUSTER_DEFAULTS
from ..secrets import cluster_dir, secret
from .files import make_dir

#: Clock skew between the control node and the hosts a new certificate tolerates.
BACKDATE = timedelta(minutes=5)

#: Java's own default for PKCS#12; the generated keystore password is 32 random characters, so
#: more rounds would only slow down the check every run makes.
KEYSTORE_KDF_ROUNDS = 10_000

#: The longest common name X.509 allows.
CN_MAX = 64


@dataclass(frozen=True)
class Settings:
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


def read_settings(variables: Mapping[str, Any]) -> Settings:
    cluster = str(variables.get("kafka_cluster_name") or CLUSTER_DEFAULTS["kafka_cluster_name"])
    if len(f"kafkaform CA {cluster}") > CN_MAX:
        raise ValueError(f"kafka_cluster_name {cluster!r} is too long for the CA's common name: "
                         f"use at most {CN_MAX - len('kafkaform CA ')} characters")
    found = Settings(
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


def current_time(now: datetime | None) -> datetime:
    # Certificates carry whole seconds: compare and issue in those.
    moment = now or datetime.now(UTC)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).replace(microsecond=0)


def pki_dir(variables: Mapping[str, Any], *, create: bool) -> Path:
    path = cluster_dir(variables, create=create) / "pki"
    if create:
        make_dir(path)
    return path


def rotation_under_way(variables: Mapping[str, Any]) -> bool:
    """Whether a CA rotation has started (rotate_ca) and not finished (retire_previous_ca)."""
    return (pki_dir(variables, create=False) / "ca-previous.crt").is_file()


def keystore_password(variables: Mapping[str, Any], *, create: bool) -> str:
    """The keystore password, or "" in a dry run when it is yet to be generated: a secret is
    never empty, so "" opens no keystore and the dry run reports what the real run rewrites."""
    given = (variables.get("kafkaform_secrets") or {}).get("keystore")
    if create or given or (pki_dir(variables, create=False).parent / "keystore").is_file():
        return secret("keystore", variables)
    return ""
