"""A shell command in a podman container, as the benchmarks run one on a host of their inventory.

Imported by the scripts beside it (run as ``.venv/bin/python benchmarks/<script>.py``, which puts
this folder first on the import path); not a benchmark itself.
"""

from __future__ import annotations

import subprocess


def sh(container: str, command: str, *, timeout: float = 120, check: bool = True,
       tail: tuple[int, int] | None = None) -> str:
    """Run ``command`` with ``sh -c`` in ``container`` (``podman exec``); return its stdout.

    ``timeout``: seconds before subprocess.TimeoutExpired. ``check``: a non-zero exit raises
    RuntimeError naming the container, the command and the output; when false, the stdout is
    returned whatever the exit. ``tail``: the output in that error, whole after ``: `` (None), or
    only the last (stdout, stderr) characters of each, on a line of their own.
    """
    result = subprocess.run(["podman", "exec", container, "sh", "-c", command],
                            capture_output=True, text=True, timeout=timeout, check=False)
    if check and result.returncode != 0:
        if tail is None:
            raise RuntimeError(f"{container}: {command}: {result.stdout}{result.stderr}")
        out, err = tail
        raise RuntimeError(f"{container}: {command}\n{result.stdout[-out:]}{result.stderr[-err:]}")
    return result.stdout
