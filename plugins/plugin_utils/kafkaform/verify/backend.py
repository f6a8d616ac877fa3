"""testinfra's ``podman://`` hosts, reached through the project's exec channel.

testinfra's own podman backend runs one ``podman exec`` per command; a check runs several. This
one sends them through plugin_utils/kafkaform/exec_channel.py (one long-lived ``podman exec`` per
container), with the same host spec, user and result. conftest.py registers it for ``podman://``.
"""

from __future__ import annotations

from typing import Any

from testinfra.backend import base, podman  # type: ignore[import-untyped]

from kafkaform import exec_channel


class PodmanChannelBackend(podman.PodmanBackend):  # type: ignore[misc]  # untyped base
    """``podman://CONTAINER`` or ``podman://USER@CONTAINER``, as testinfra's, over the channel."""

    def run(self, command: str, *args: str, **kwargs: Any) -> base.CommandResult:
        cmd = self.get_command(command, *args)
        result = exec_channel.run(self.name, ["/bin/sh", "-c", cmd], user=self.user)
        return self.result(result.returncode, self.encode(cmd), result.stdout, result.stderr)
