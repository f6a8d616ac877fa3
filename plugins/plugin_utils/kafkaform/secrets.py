"""The cluster's generated secrets and its PKI directory, on the control node, never on a host.

A secret the inventory does not give (``kafkaform_secrets: {name: value}``, from Ansible Vault in
a real inventory) is generated once, stored in ``<kafkaform_secrets_dir>/<kafka_cluster_name>/``
(directory 0700, files 0600, sealed with the run's vault secret: ``sealed.py``) and read back on
every later run, so a second run renders the same files and restarts nothing. Ansible reads them
through the lookup ``kafkaform.platform.secret``; pyinfra and the verifier call :func:`secret`
directly. Keep that directory out of the repository and back it up: it holds the cluster CA's
key too (``pki/``).
"""

from __future__ import annotations

import contextlib
import os
import secrets as random
import string
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import sealed
from .defaults import CLUSTER_DEFAULTS

#: Every secret kafkaform generates, and what it protects.
KNOWN: dict[str, str] = {
    "keystore": "password of every host's PKCS#12 keystore and its key",
    "zookeeper-kafka": "SASL DIGEST-MD5 password of the brokers' ZooKeeper user",
    "zookeeper-quorum": "SASL DIGEST-MD5 password between ZooKeeper members",
    "spark-authenticate": "spark.authenticate secret shared by the Spark daemons and the driver",
}

#: The inventory variables :func:`secret` reads (cluster-wide settings).
SETTINGS: tuple[str, ...] = ("kafkaform_secrets", "kafkaform_secrets_dir", "kafka_cluster_name",
                             sealed.PLAINTEXT_SETTING)

_ALPHABET = string.ascii_letters + string.digits
_LENGTH = 32

#: What a given secret may not hold: the JAAS files quote it (" and \ would end or escape the
#: string, ${ is expanded by Java) and the properties files hold one line.
UNSAFE = ('"', "\\", "${", "\n", "\r")
#: The shortest secret kafkaform accepts from the inventory.
MIN_LENGTH = 16


def given_problems(given: Any) -> list[str]:
    """Problems of the inventory's ``kafkaform_secrets``; a value is never repeated."""
    if given in (None, {}):
        return []
    if not isinstance(given, Mapping):
        return ["kafkaform_secrets must be a mapping of secret name to value"]
    problems = []
    for name, value in given.items():
        if name not in KNOWN:
            problems.append(f"kafkaform_secrets: {name} is not a secret kafkaform uses; known: "
                            f"{', '.join(sorted(KNOWN))}")
        elif not isinstance(value, str) or len(value) < MIN_LENGTH:
            problems.append(f"kafkaform_secrets: {name} must be a string of at least "
                            f"{MIN_LENGTH} characters")
        elif any(bad in value for bad in UNSAFE):
            problems.append(f"kafkaform_secrets: {name} may not contain a double quote, a "
                            "backslash, ${ or a line break")
    return problems


def cluster_dir(variables: Mapping[str, Any], *, create: bool = True) -> Path:
    """``<kafkaform_secrets_dir>/<kafka_cluster_name>``, absolute; created 0700 when missing
    unless ``create`` is false (a dry run leaves the disk alone)."""
    configured = variables.get("kafkaform_secrets_dir") or CLUSTER_DEFAULTS["kafkaform_secrets_dir"]
    name = variables.get("kafka_cluster_name") or CLUSTER_DEFAULTS["kafka_cluster_name"]
    path = (Path(str(configured)).expanduser() / str(name)).absolute()
    if create:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def secret(name: str, variables: Mapping[str, Any]) -> str:
    """The secret ``name``: the inventory's ``kafkaform_secrets[name]``, else the stored one, else
    a new random one stored for the next run. Safe when several forks ask at once."""
    if name not in KNOWN:
        raise KeyError(f"unknown secret {name!r}; kafkaform knows {', '.join(sorted(KNOWN))}")
    given = (variables.get("kafkaform_secrets") or {}).get(name)
    if given:
        problems = given_problems({name: given})
        if problems:
            raise ValueError(problems[0])
        return str(given)
    path = cluster_dir(variables) / name
    if not path.exists():
        value = "".join(random.choice(_ALPHABET) for _position in range(_LENGTH))
        # Linked into place whole: a fork that lost the race reads the winner's, never half.
        with contextlib.suppress(FileExistsError):
            store(path, (value + "\n").encode(), variables, replace=False)
    return _read(path, variables)


def store(path: Path, data: bytes, variables: Mapping[str, Any], *, replace: bool) -> None:
    """Write ``data`` sealed (``sealed.seal``) to ``path``, 0600 (see :func:`write_whole`)."""
    write_whole(path, sealed.seal(data, str(path), plain=sealed.plaintext(variables)), 0o600,
                replace=replace)


def write_whole(path: Path, data: bytes, mode: int, *, replace: bool = True) -> None:
    """Put ``data`` at ``path`` whole, already with its final mode: a fork reading it meanwhile
    sees the old file or the new one, never half of one, and a secret is never readable by
    others. Unless ``replace``, a file already there stays and FileExistsError is raised."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if replace:
            os.replace(temp, path)
        else:
            os.link(temp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)


def _read(path: Path, variables: Mapping[str, Any]) -> str:
    data = path.read_bytes()
    value = sealed.unseal(data, str(path)).decode("utf-8").strip()
    if not value:
        raise RuntimeError(f"{path} is empty: delete it and run again to generate a new secret")
    if sealed.needs_sealing(data, plain=sealed.plaintext(variables)):  # plain before: seal it
        store(path, data, variables, replace=True)
    return value
