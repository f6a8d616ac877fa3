"""Whether a running systemd service started before a file it reads last changed: the answer lives
on the host, in the files' change times and the service's start time, so a run that stops anywhere
between writing a file and restarting the service leaves the service stale and the next run sees
it. OP-03

Plain Python 3 with no import beyond the standard library: the module service_stale runs it under
Ansible, and the pyinfra deploys send this file's source to the host as it is
(``kafkaform.deploys.facts.ServiceStale``).
"""

from __future__ import annotations

import os
import subprocess
from datetime import datetime, timezone

TIMESTAMP_FORMAT = "%a %Y-%m-%d %H:%M:%S.%f UTC"


def started_at(unit: str) -> float | None:
    """When the unit's main process started, in seconds since the epoch; None when it is not
    running. Raises RuntimeError when systemctl cannot tell."""
    result = subprocess.run(
        ["systemctl", "show", "--timestamp=us+utc", "--property=MainPID,ExecMainStartTimestamp",
         unit], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"systemctl show {unit}: {result.stderr.strip()}")
    values = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
    if values.get("MainPID", "0") in ("", "0") or not values.get("ExecMainStartTimestamp"):
        return None
    stamp = datetime.strptime(values["ExecMainStartTimestamp"], TIMESTAMP_FORMAT)
    return stamp.replace(tzinfo=timezone.utc).timestamp()  # noqa: UP017 - hosts may run Python < 3.11


def last_change(path: str) -> float:
    """When the content last changed: the file's mtime (Ansible writes a new file and renames it
    into place), or for a directory the latest of the files under it, byte-code caches aside;
    0 when there is none."""
    if not os.path.isdir(path):
        return os.stat(path).st_mtime if os.path.exists(path) else 0.0
    times = [0.0]
    for root, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        times += [os.lstat(os.path.join(root, name)).st_mtime for name in files]
    return max(times)


def service_stale(name: str, paths: list[str]) -> dict[str, object]:
    """``stale``, ``running`` and the ``newer`` paths of the service ``name``."""
    unit = name if name.endswith(".service") else f"{name}.service"
    start = started_at(unit)
    newer = [] if start is None else [p for p in paths if last_change(p) > start]
    return {"stale": bool(newer), "running": start is not None, "newer": newer}
