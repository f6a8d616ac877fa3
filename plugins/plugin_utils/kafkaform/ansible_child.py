"""This environment's Ansible run as a child process (`kafkaform drift`, `kafkaform status`).

The child is the Ansible this package reads inventories with, and it gets the vault secrets the
command was given: identities with a file or script through ``ANSIBLE_VAULT_IDENTITY_LIST``, as
the operator's own configuration passes them; secrets typed at a prompt (``--ask-vault-pass``,
``--vault-id LABEL@prompt``) through pipes the child inherits, never a file, so that the operator
is asked once, by this command.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from . import inventory
from .cli import InputError


def executable(name: str) -> str:
    """Ansible's command ``name`` (``ansible``, ``ansible-playbook``) of this environment: beside
    this Python first, else on PATH."""
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise InputError(f"{name} is not on PATH. Fix: install ansible-core in this environment "
                         "(pip install 'kafkaform')")
    return found


def prompts(identity: str) -> bool:
    """Whether a vault identity (``[LABEL@]SOURCE``) asks its secret at a prompt."""
    return identity.rpartition("@")[2] in ("prompt", "prompt_ask_vault_pass")


def asks_at_prompt(sources: inventory.Sources) -> bool:
    """Whether any vault secret the command was given (or Ansible is configured with) is typed
    at a prompt."""
    from ansible import constants as C

    identities = [*C.DEFAULT_VAULT_IDENTITY_LIST, *sources.vault_ids]
    return sources.ask_vault_pass or any(prompts(item) for item in identities)


def environment(sources: inventory.Sources) -> dict[str, str]:
    """This process's environment with the vault identities given to the command, but those
    asked at a prompt (:class:`Prompted` hands them over)."""
    env = dict(os.environ)
    env.update(sources.environment())
    identities = env.get("ANSIBLE_VAULT_IDENTITY_LIST")
    if identities:
        kept = [item for item in identities.split(",") if not prompts(item)]
        env["ANSIBLE_VAULT_IDENTITY_LIST"] = ",".join(kept)
    return env


@dataclass
class Prompted:
    """Vault secrets typed at a prompt, as ``--vault-id LABEL@/dev/fd/N`` arguments whose pipes
    (``fds``) the child must inherit (``subprocess``'s ``pass_fds``)."""

    argv: list[str] = field(default_factory=list)
    fds: list[int] = field(default_factory=list)

    @classmethod
    def of(cls, sources: inventory.Sources) -> Prompted:
        from ansible.parsing.vault import PromptVaultSecret

        prompted = cls()
        if not asks_at_prompt(sources):
            return prompted

        for vault_id, secret in sources.secrets(None):  # read while the inventory was
            if isinstance(secret, PromptVaultSecret):
                read, write = os.pipe()
                os.write(write, bytes(secret.bytes) + b"\n")
                os.close(write)
                prompted.fds.append(read)
                prompted.argv += ["--vault-id", f"{vault_id}@/dev/fd/{read}"]
        return prompted

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
