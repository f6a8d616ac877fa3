"""What a command in a podman container costs, through the exec channel and with its own
``podman exec`` (plugins/plugin_utils/kafkaform/exec_channel.py).

    .venv/bin/python benchmarks/podman_exec_cost.py [--image IMAGE] [--commands N]

Starts one throwaway container of the lab's image (no network, removed at the end), then runs
``--commands`` times ``true`` and a small Python module's worth of work (``python3 -c`` with the
imports an Ansible module makes) each way: one ``podman exec`` per command
(KAFKAFORM_EXEC_CHANNEL=off), then through the channel, whose agent is started by the first
command and counted. Prints, per command, the wall time and the machine's CPU time (every process,
podman's client, conmon and runc included, from /proc/stat). One run; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time
import uuid

from kafkaform import exec_channel
from kafkaform.lab import prepare_environment

IMAGE = "localhost/kafkaform-debian12:latest"
COMMANDS = {
    "true": ["true"],
    "python3 module": ["python3", "-c", "import json, os, subprocess, shlex, tempfile"],
}


def machine_cpu_seconds() -> float:
    """Busy CPU time of the whole machine (user, nice, system, irq, softirq), in seconds."""
    with open("/proc/stat", encoding="ascii") as stat:
        fields = stat.readline().split()[1:]
    return sum(int(fields[i]) for i in (0, 1, 2, 5, 6)) / os.sysconf("SC_CLK_TCK")


def measure(container: str, argv: list[str], commands: int) -> tuple[float, float]:
    """Wall and CPU seconds per command, ``commands`` runs in a row."""
    wall, cpu = time.monotonic(), machine_cpu_seconds()
    for _ in range(commands):
        result = exec_channel.run(container, argv)
        if result.returncode != 0:
            raise SystemExit(f"{container}: {argv} failed: {result.stderr.decode()}")
    return (time.monotonic() - wall) / commands, (machine_cpu_seconds() - cpu) / commands


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--image", default=IMAGE)
    parser.add_argument("--commands", type=int, default=50)
    args = parser.parse_args()
    prepare_environment()  # the lab's containers.conf, as `kafkaform lab` uses it
    container = f"kf-exec-bench-{uuid.uuid4().hex[:8]}"
    subprocess.run(["podman", "run", "--detach", "--rm", "--network=none", "--name", container,
                    args.image, "sleep", "infinity"], check=True, capture_output=True)
    try:
        print(f"{args.commands} commands each, in {container} ({args.image})")
        for name, argv in COMMANDS.items():
            for way in ("off", "on"):
                os.environ[exec_channel.SWITCH] = way
                wall, cpu = measure(container, argv, args.commands)
                label = "own podman exec" if way == "off" else "exec channel"
                print(f"  {name:15} {label:16} {wall * 1000:7.1f} ms wall  "
                      f"{cpu * 1000:7.1f} ms CPU per command")
    finally:
        subprocess.run(["podman", "rm", "--force", "--time", "0", container],
                       check=False, capture_output=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
