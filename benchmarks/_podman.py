"""A shell command in a podman container, as the benchmarks run one on a host of their inventory.

Imported by the scripts beside it (run as ``.venv/bin/python benchmarks/<script>.py``, which puts
this folder first on the import path); not a benchmark itself.
"""

from __future__ import annotations

from kafkaform import exec_channel


def sh(container: str, command: str, *, timeout: float = 120, check: bool = True,
       tail: tuple[int, int] | None = None) -> str:
    """Run ``command`` with ``sh -c`` in ``container`` (``podman exec``, through the project's
    exec channel: one long-lived ``podman exec`` per container); return its stdout.

    ``timeout``: seconds before subprocess.TimeoutExpired. ``check``: a non-zero exit raises
    RuntimeError naming the container, the command and the output; when false, the stdout is
    returned whatever the exit. ``tail``: the output in that error, whole after ``: `` (None), or
    only the last (stdout, stderr) characters of each, on a line of their own.
    """
    result = exec_channel.run(container, ["sh", "-c", command], timeout=timeout)
    stdout, stderr = (data.decode("utf-8", "replace") for data in (result.stdout, result.stderr))
    if check and result.returncode != 0:
        if tail is None:
            raise RuntimeError(f"{container}: {command}: {stdout}{stderr}")
        out, err = tail
        raise RuntimeError(f"{container}: {command}\n{stdout[-out:]}{stderr[-err:]}")
    return stdout


def main_pids(hosts: list[str], unit: str = "kafka") -> dict[str, str]:
    """The main process of ``unit`` on each host (``0`` where it is not running): a pid that
    changed between two reads is a restart."""
    return {host: sh(host, f"systemctl show -p MainPID --value {unit}").strip() for host in hosts}
