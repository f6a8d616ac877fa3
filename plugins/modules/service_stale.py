#!/usr/bin/python
"""kafkaform.platform.service_stale: whether a running systemd service started before a file it
reads last changed, so it still runs an older configuration and needs a restart.

The answer lives on the host, in the files' change times and the service's start time: a run that
stops anywhere between writing a file and restarting the service leaves the service stale, and
the next run sees it. OP-03"""

from __future__ import annotations

DOCUMENTATION = r"""
module: service_stale
author: kafkaform (@kafkaform)
short_description: Tell whether a running service predates a file it reads
description:
  - Compares the start time of a systemd service's main process with the last modification of
    each given file, or of the files under a given directory (byte-code caches aside).
  - A service that runs and started before a path last changed is stale; one that does not run
    is not (its next start reads the files as they are).
  - Changes nothing.
options:
  name:
    description: The systemd unit, with or without C(.service).
    required: true
    type: str
  paths:
    description: The files and directories the service reads at start; missing ones are ignored.
    required: true
    type: list
    elements: path
attributes:
  check_mode:
    description: Reads only; answers the same in check mode.
    support: full
  diff_mode:
    description: Shows no diff.
    support: none
"""

EXAMPLES = r"""
- name: Find whether Kafka runs an older configuration than its files
  kafkaform.platform.service_stale:
    name: kafka
    paths: [/etc/kafka/server.properties, /etc/systemd/system/kafka.service]
  register: kafka_stale
"""

RETURN = r"""
stale:
  description: Whether the service runs and started before one of the paths last changed.
  returned: success
  type: bool
running:
  description: Whether the service's main process runs.
  returned: success
  type: bool
newer:
  description: The paths changed after the service started.
  returned: success
  type: list
  elements: str
"""

import os
import subprocess
from datetime import datetime, timezone

from ansible.module_utils.basic import AnsibleModule

#: systemctl's timestamps with microseconds, in UTC (systemd 248 and later).
TIMESTAMP_FORMAT = "%a %Y-%m-%d %H:%M:%S.%f UTC"


def started_at(module: AnsibleModule, unit: str) -> float | None:
    """When the unit's main process started, in seconds since the epoch; None when it is not
    running."""
    result = subprocess.run(
        ["systemctl", "show", "--timestamp=us+utc", "--property=MainPID,ExecMainStartTimestamp",
         unit], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        module.fail_json(msg=f"systemctl show {unit}: {result.stderr.strip()}")
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


def main() -> None:
    module = AnsibleModule(
        argument_spec={"name": {"type": "str", "required": True},
                       "paths": {"type": "list", "elements": "path", "required": True}},
        supports_check_mode=True)
    name = module.params["name"]
    unit = name if name.endswith(".service") else f"{name}.service"
    start = started_at(module, unit)
    newer = [] if start is None else [p for p in module.params["paths"] if last_change(p) > start]
    module.exit_json(changed=False, stale=bool(newer), running=start is not None, newer=newer)


if __name__ == "__main__":
    main()
