"""Facts the deploys read from hosts: the same probes the roles run, as pyinfra facts.

https://docs.pyinfra.com/en/3.x/api/facts.html
"""

from __future__ import annotations

import shlex

from pyinfra.api.facts import FactBase


class CommandOutput(FactBase[str]):
    """What a command prints on stdout, lines joined by newlines: a role's registered ``stdout``
    for a probe that only reads (the os_tuning role's sysctl probe, for one)."""

    def command(self, argv: tuple[str, ...]) -> str:
        return shlex.join(argv)
