"""What every part of a mirror build shares: its error, its files, its progress lines, its tools."""

from __future__ import annotations

import collections
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

#: The texts of the files the mirror writes into archives itself (scripts, configuration), under
#: files/<release>/ at the paths they have in the release.
FILES = Path(__file__).parent / "files"


class MirrorError(Exception):
    """A build step failed; the message says what happened and what to do next."""


def release_text(path: str) -> str:
    """The text of `path` under FILES, read when a layout is made rather than at import, so the
    file is the one place it is kept and a test can point FILES at edited copies."""
    return (FILES / path).read_text(encoding="utf-8")


def progress(subject: str, message: str) -> None:
    """One progress line on stderr, prefixed with what it is about (`kafka 3.9.2: ...`)."""
    print(f"{subject}: {message}", file=sys.stderr, flush=True)


#: The lines of a tool's output shown as it runs: the resolver's and pip's own progress
#: (what they download, with sizes) and their warnings; everything else only on failure.
SHOWN = re.compile(r"Download|Saved|Collecting|WARN|ERROR", re.IGNORECASE)


def run_tool(command: Sequence[str], what: str, hint: str, cwd: Path | None = None) -> None:
    """Run an external tool, showing its progress lines as they come (indented under the
    artifact's own); on failure raise MirrorError with its output's tail and a hint."""
    if shutil.which(command[0]) is None and not Path(command[0]).is_file():
        raise MirrorError(f"{command[0]} is not installed; {hint}")
    tail: collections.deque[str] = collections.deque(maxlen=25)
    with subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True) as process:
        for line in process.stdout or ():
            tail.append(line.rstrip())
            if SHOWN.search(line):
                print(f"    {line.rstrip()}", file=sys.stderr, flush=True)
    if process.returncode != 0:
        lines = "\n".join(tail)
        raise MirrorError(f"{what} failed (exit {process.returncode}):\n{lines}\n{hint}")
