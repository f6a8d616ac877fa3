"""Secrets at rest on the control node: sealed in Ansible Vault's format with the operator's secret.

Every secret kafkaform generates (``secrets.py``) and every private key it keeps (``pki``: the
CA's and each host's) is written encrypted with the vault secret the run was given, as
``ansible-playbook`` takes it (``--vault-id``, ``--vault-password-file``, ``--ask-vault-pass``,
``ANSIBLE_VAULT_PASSWORD_FILE``, ``ANSIBLE_VAULT_IDENTITY_LIST``, ansible.cfg), with the identity
``ANSIBLE_VAULT_ENCRYPT_IDENTITY`` names (else the first). Ansible's own tools read the files
(``ansible-vault view``, ``copy``'s ``decrypt``) and re-key them (``ansible-vault rekey``).

Plain text only by explicit opt-in: ``kafkaform_secrets_plaintext: true``. A file written in plain
text by an earlier release (or under the opt-in) is sealed the next time it is read without it.
A sealed file that no given secret opens is an error, never a reason to generate anew: the CA and
the hosts' keys would change under a running cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .cli import InputError
from .inventory import Sources

#: The cluster-wide opt-in to keep the control node's secrets in plain text.
PLAINTEXT_SETTING = "kafkaform_secrets_plaintext"
#: Files of the secrets directory that stay as they are: the certificates and the trust bundle
#: (public), the keystores (PKCS#12 under the sealed keystore password), pki's lock.
UNSEALED_SUFFIXES = (".crt", "cert.pem", "trust.pem", ".p12", ".lock")
#: How every file in Ansible Vault's format starts.
VAULT_HEADER = b"$ANSIBLE_VAULT;"

NO_SECRET_FIX = (
    "pass the run a vault secret as for ansible-playbook (--vault-password-file FILE, --vault-id "
    "[LABEL@]FILE, --ask-vault-pass, or ANSIBLE_VAULT_PASSWORD_FILE / ANSIBLE_VAULT_IDENTITY_LIST "
    f"for pyinfra and scripts), or set {PLAINTEXT_SETTING}: true to keep them in plain text")


class SealError(ValueError):
    """A secret cannot be sealed or unsealed: no vault secret given, or none opens the file."""


def plaintext(variables: Mapping[str, Any]) -> bool:
    """Whether the inventory opted into plain text (``kafkaform_secrets_plaintext: true``)."""
    value = variables.get(PLAINTEXT_SETTING)
    return value is True or str(value).lower() in ("true", "yes", "1")


def vault_secrets() -> list[tuple[str, Any]]:
    """The run's vault secrets: ansible-playbook's (or kafkaform's inventory loader's), else the
    identities Ansible's configuration names, read without prompting."""
    from ansible.parsing.vault import VaultSecretsContext

    current = VaultSecretsContext.current(optional=True)
    if current is not None and current.secrets:
        return list(current.secrets)
    return _configured()


#: No command-line options: the identities Ansible's configuration names (the secrets are read
#: once, by the inventory loader's own setup).
_CONFIGURED = Sources()


def _configured() -> list[tuple[str, Any]]:
    from ansible.parsing.dataloader import DataLoader

    try:
        return _CONFIGURED.secrets(DataLoader())
    except InputError as error:  # a password file named but unreadable
        raise SealError(str(error)) from error


def problem(variables: Mapping[str, Any]) -> str:
    """Why this run cannot keep the control node's secrets as the inventory wants ("" if it can):
    checked before any host is touched."""
    if plaintext(variables):
        return ""
    try:
        if vault_secrets():
            return ""
    except SealError as error:
        return str(error)
    return ("kafkaform keeps the cluster's generated secrets and private keys on the control "
            "node encrypted with your Ansible Vault secret, and this run has none. Fix: "
            f"{NO_SECRET_FIX}")


def is_sealed(data: bytes) -> bool:
    return data.lstrip().startswith(VAULT_HEADER)


def seal(data: bytes, what: str, *, plain: bool) -> bytes:
    """``data`` as it is stored: in Ansible Vault's format, or as it is under the opt-in
    (``plain``, :func:`plaintext` of the inventory)."""
    if plain:
        return data
    from ansible import constants as C
    from ansible.errors import AnsibleError
    from ansible.parsing.vault import VaultLib, match_encrypt_secret

    secrets = vault_secrets()
    if not secrets:
        raise SealError(f"{what}: {problem({})}")
    try:
        vault_id, secret = match_encrypt_secret(secrets, C.DEFAULT_VAULT_ENCRYPT_IDENTITY)
        sealed: bytes = VaultLib(secrets).encrypt(data, secret, vault_id)
    except AnsibleError as error:
        raise SealError(f"{what} cannot be sealed: {str(error).splitlines()[0]}. Fix: "
                        f"{NO_SECRET_FIX}") from error
    return sealed


def unseal(data: bytes, what: str) -> bytes:
    """The content of a stored file, decrypted when it is sealed."""
    if not is_sealed(data):
        return data
    from ansible.errors import AnsibleError
    from ansible.parsing.vault import VaultLib

    secrets = vault_secrets()
    if not secrets:
        raise SealError(f"{what} is encrypted with Ansible Vault and this run has no vault "
                        f"secret. Fix: {NO_SECRET_FIX}")
    try:
        opened: bytes = VaultLib(secrets).decrypt(data)
    except AnsibleError as error:
        raise SealError(f"{what}: no vault secret given opens it ({str(error).splitlines()[0]})."
                        " Fix: pass the vault secret it was sealed with (re-key with "
                        "ansible-vault rekey, README \"Secrets on the control node\")") from error
    return opened


def needs_sealing(data: bytes, *, plain: bool) -> bool:
    """Whether a stored file is plain text that the inventory wants sealed (written by an earlier
    release, or under the opt-in since withdrawn)."""
    return not plain and not is_sealed(data)
