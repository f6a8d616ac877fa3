"""Filter `kafkaform.platform.sha512_digest`: the digest an Apache `.sha512` file gives for a file.

Usage: `{{ response.content | kafkaform.platform.sha512_digest('kafka_2.13-3.9.2.tgz') }}`.
Both shapes Apache publishes (gpg --print-md, sha512sum) are accepted; see kafkaform.checksum.
"""

from __future__ import annotations

from typing import Any

try:
    from ansible.errors import AnsibleFilterError
except ImportError:  # only when imported outside Ansible, e.g. by a linter
    AnsibleFilterError = ValueError  # type: ignore[misc,assignment]

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.lazy import module


def sha512_digest(text: str, filename: str) -> str:
    """Return the 128-hex lower-case digest for `filename`; fail the task on a doubtful file.
    kafkaform.checksum is imported at the first call (kafkaform.lazy says why)."""
    try:
        return module("checksum").parse_sha512(str(text), filename)
    except ValueError as error:
        raise AnsibleFilterError(str(error)) from error


class FilterModule:
    """Ansible entry point."""

    def filters(self) -> dict[str, Any]:
        return {"sha512_digest": sha512_digest}
