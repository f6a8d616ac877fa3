"""The host's certificate from the cluster CA, as the action ``kafkaform.platform.host_certificate``
and the roles' copy tasks install it (SE-02): issued on the control node by :mod:`kafkaform.pki`
when the run executes, planned without writing anything, so ``--dry`` leaves the control node as
it is too."""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Mapping
from io import BytesIO
from pathlib import Path
from typing import Any

from pyinfra.api.exceptions import DeployError
from pyinfra.context import host
from pyinfra.operations import python

from .. import pki
from .base import host_variables, run_on
from .facts import Sha512File


def _pki_settings() -> dict[str, Any]:
    return {k: v for k, v in host_variables(host).items() if pki.reads(k)}


def _issue(names: list[str], ou: str, service: str, rotation: str, targets: Mapping[str, str],
           *, dry_run: bool) -> pki.HostCertificate:
    # A service's own certificate comes with a keystore when one is installed (a Java service).
    return pki.ensure_host(_pki_settings(), host.name, names, ou, service=service,
                           keystore=("keystore" in targets) if service else None,
                           dry_run=dry_run,
                           keep_previous_ca=rotation == "trust", renew=rotation == "renew")


def _files(issued: pki.HostCertificate) -> dict[str, str]:
    return {"trust": issued.trust, "cert": issued.cert, "key": issued.key,
            "keystore": issued.keystore}


def _install(names: list[str], ou: str, service: str, rotation: str,
             targets: Mapping[str, str], group: str) -> None:
    """At execution time: issue the certificate, then copy the files whose content differs
    (root:<group> 0640)."""
    issued = _issue(names, ou, service, rotation, targets, dry_run=False)
    _copy(_files(issued), targets, group)


def _copy(sources: Mapping[str, str], targets: Mapping[str, str], group: str) -> None:
    for kind, dest in targets.items():
        content = pki.read_material(sources[kind])
        remote = run_on(host.name, ["sh", "-c", f"sha512sum {shlex.quote(dest)} || true"])
        if remote.stdout.split(" ")[0] == hashlib.sha512(content).hexdigest():
            continue
        if not host.put_file(BytesIO(content), dest):
            raise DeployError(f"{host.name}: could not copy {sources[kind]} to {dest}")
        ran = run_on(host.name, ["sh", "-c", f"chown root:{shlex.quote(group)} {shlex.quote(dest)}"
                                             f" && chmod 640 {shlex.quote(dest)}"])
        if not ran.ok:
            raise DeployError(f"{host.name}: {dest}: {ran.said}")


def certificate(names: list[str], ou: str, group: str, *, service: str = "",
                **targets: str) -> bool:
    """Install the host's files, each kind at the path given for it (``trust``, ``cert``,
    ``key``, ``keystore``; their directory must exist), from the certificate of the host or of
    one of its ``service`` (``host_certificate``'s option); returns whether any changes in this
    run."""
    rotation = str(host.data.get("kafkaform_tls_rotation_step") or "")
    issued = _issue(names, ou, service, rotation, targets, dry_run=True)
    planned = _files(issued)
    changes = issued.changed or any(
        not Path(planned[kind]).is_file()
        or host.get_fact(Sha512File, path=dest)
        != hashlib.sha512(pki.read_material(planned[kind])).hexdigest()
        for kind, dest in targets.items())
    if changes:
        python.call(name=f"Issue the {ou} certificate of the host and install it with the "
                         "cluster CA", function=_install, names=names, ou=ou, service=service,
                    rotation=rotation, targets=targets, group=group)
    return changes
