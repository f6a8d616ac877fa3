"""The memory a podman inventory's hosts use: each host's container and each service on it.

    .venv/bin/python benchmarks/footprint.py -i <inventory>

For every host of the cluster model (the lab: ``-i inventory/lab``), reached with ``podman exec``:
the container's memory (its cgroup's ``memory.current``: processes, page cache and kernel
memory charged to it) and, beside it, each running service's share as systemd accounts it
(``MemoryCurrent``), the largest first. Prints one line per host, then the total as
``footprint N MB``. One reading, taken now: run it on a settled cluster (after a converge, with
the pipeline running) to compare releases. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import sys

from _podman import sh

from kafkaform.inventory import load as load_inventory

MB = 1024 * 1024
#: Services below this are left out of a host's line (systemd's own, cron, D-Bus).
SMALL_MB = 10


def container_bytes(container: str) -> int:
    return int(sh(container, "cat /sys/fs/cgroup/memory.current").strip())


def service_bytes(container: str) -> dict[str, int]:
    """Each running service's MemoryCurrent; services systemd does not account are left out."""
    units = sh(container, "systemctl list-units --type=service --state=running --no-legend "
                          "--plain | cut -d' ' -f1").split()
    if not units:
        return {}
    shown = sh(container, "systemctl show -p MemoryCurrent --value " + " ".join(units))
    values = [line for line in shown.splitlines() if line.strip()]  # one block per unit
    return {unit.removesuffix(".service"): int(value)
            for unit, value in zip(units, values, strict=True) if value.isdigit()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-i", "--inventory", required=True)
    args = parser.parse_args()
    hosts = load_inventory(args.inventory).cluster_hosts()
    if not hosts:
        print(f"error: no host of the cluster model in {args.inventory}", file=sys.stderr)
        return 2
    total = 0
    for host in hosts:
        used = container_bytes(host)
        total += used
        services = sorted(service_bytes(host).items(), key=lambda item: -item[1])
        shown = ", ".join(f"{unit} {value / MB:.0f}" for unit, value in services
                          if value >= SMALL_MB * MB)
        print(f"{host}: {used / MB:.0f} MB ({shown or 'no service above 10 MB'})", flush=True)
    print(f"footprint {total / MB:.0f} MB on {len(hosts)} hosts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
