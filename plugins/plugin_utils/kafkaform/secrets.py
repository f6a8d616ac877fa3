"""The cluster's generated secrets and its PKI directory, on the control node, never on a host.

A secret the inventory does not give (``kafkaform_secrets: {name: value}``, from Ansible Vault in
a real inventory) is generated once, stored in ``<kafkaform_secrets_dir>/<kafka_cluster_name>/``
(directory 0700, files 0600) and read back on every later run, so a second run renders the same
files and restarts nothing. Ansible reads them through the lookup ``kafkaform.platform.secret``;
pyinfra and the verifier call :func:`secret` directly. Keep that directory out of the repository
and back it up: it holds the cluster CA's key too (``pki/``).
"""

from __future__ import annotations

import os
import secrets as random
import string
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .defaults import CLUSTER_DEFAULTS

#: Every secret kafkaform generates, and what it protects.
KNOWN: dict[str, str] = {
    "keystore": "password of every host's PKCS#12 keystore and its key",
    "zookeeper-kafka": "SASL DIGEST-MD5 password of the brokers' ZooKeeper user",
    "zookeeper-quorum": "SASL DIGEST-MD5 password between ZooKeeper members",
    "spark-authenticate": "spark.authenticate secret shared by the Spark daemons and the driver",
}

#: The inventory variables :func:`secret` reads (cluster-wide settings).
SETTINGS: tuple[str, ...] = ("kafkaform_secrets", "kafkaform_secrets_dir", "kafka_cluster_name")

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
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return _read(path)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write("".join(random.choice(_ALPHABET) for _position in range(_LENGTH)) + "\n")
    return _read(path)


def _read(path: Path) -> str:
    # A fork that lost the O_EXCL race may read before the winner wrote: wait for the line.
    for _attempt in range(100):
        value = path.read_text(encoding="utf-8").strip()
        if value:
            return value
        os.sched_yield()
    raise RuntimeError(f"{path} is empty: delete it and run again to generate a new secret")
