"""Facts the deploys read from hosts: the same probes the roles run, as pyinfra facts.

https://docs.pyinfra.com/en/3.x/api/facts.html
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from typing import Any

from pyinfra.api.facts import FactBase

from ..plans.hostread import service_stale_argv

#: Reads a URL on the host and prints what it holds (:class:`Fetched`).
FETCH = ("import sys, urllib.request; "
         "sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=int(sys.argv[2]))"
         ".read().decode())")


class CommandOutput(FactBase[str]):
    """What a command prints on stdout, lines joined by newlines: a role's registered ``stdout``
    for a probe that only reads (the os_tuning role's sysctl probe, for one)."""

    def command(self, argv: tuple[str, ...]) -> str:
        return shlex.join(argv)

    @staticmethod
    def default() -> str:
        return ""  # no output at all, where pyinfra would give None

    def process(self, output: list[str]) -> str:
        return "\n".join(output)


class AdminAnswer(CommandOutput):
    """What the admin helper answers about the cluster (its JSON on stdout, "" when it cannot
    answer): a question to the cluster through the plan's ``admin_argv``, asked when the deploy is
    planned, not a read of the host."""


class Fetched(FactBase[str]):
    """What a URL holds, read on the host as ``ansible.builtin.uri`` does (the host reaches the
    mirror): a published checksum the deploys fetch, not a question about the host."""

    def command(self, url: str, timeout: int) -> str:
        return shlex.join(["python3", "-c", FETCH, url, str(timeout)])

    @staticmethod
    def default() -> str:
        return ""

    def process(self, output: list[str]) -> str:
        return "\n".join(output)


class Sha512File(FactBase[str]):
    """The sha512 of a file in hex, or "" when there is no such file (``get_url``'s check of a
    cached download)."""

    def command(self, path: str) -> str:
        return f"sha512sum {shlex.quote(path)} 2>/dev/null || true"

    @staticmethod
    def default() -> str:
        return ""

    def process(self, output: list[str]) -> str:
        return output[0].split()[0] if output[0].strip() else ""


#: The largest file FileStates hashes: the deploys write small configuration files; a large one
#: is left to files.put's own facts.
FILE_STATES_MAX_KIB = 1024


class FileStates(FactBase[dict[str, tuple[int, str, str, str]]]):
    """Mode, owner, group and sha1 of each regular file directly in a directory, by name (``{}``
    for a missing directory): one command for every file the deploys write there, where
    ``files.put`` asks two facts of each file."""

    def command(self, path: str) -> str:
        return (f"cd {shlex.quote(path)} 2>/dev/null || exit 0; "
                f"find . -maxdepth 1 -type f -size -{FILE_STATES_MAX_KIB + 1}k "
                "-printf 'stat %m %u %g %f\\n' -exec sha1sum {} + 2>/dev/null; true")

    @staticmethod
    def default() -> dict[str, tuple[int, str, str, str]]:
        return {}

    def process(self, output: list[str]) -> dict[str, tuple[int, str, str, str]]:
        return parse_file_states(output)


def parse_file_states(lines: Sequence[str]) -> dict[str, tuple[int, str, str, str]]:
    """FileStates' output: ``stat <octal mode> <owner> <group> <name>`` and sha1sum's
    ``<sha1>  ./<name>`` lines, in any order. A file missing either line is left out."""
    stats: dict[str, tuple[int, str, str]] = {}
    sums: dict[str, str] = {}
    for line in lines:
        if line.startswith("stat "):
            fields = line.split(" ", 4)
            if len(fields) == 5:
                stats[fields[4]] = (int(fields[1], 8), fields[2], fields[3])
        elif len(line) > 44 and line[40:44] == "  ./":
            sums[line[44:]] = line[:40]
    return {name: (*stat, sums[name]) for name, stat in stats.items() if name in sums}


class ServiceStale(FactBase[dict[str, Any]]):
    """Whether ``service`` runs and started before one of ``paths`` last changed (OP-03)."""

    def command(self, service: str, paths: tuple[str, ...]) -> str:
        return shlex.join(service_stale_argv(service, paths))

    def process(self, output: list[str]) -> dict[str, Any]:
        answer: dict[str, Any] = json.loads("\n".join(output))
        return answer
