"""The memory a podman inventory's hosts use: each host's container and each service on it.

    .venv/bin/python benchmarks/footprint.py -i <inventory>

For every host of the cluster model (the lab: ``-i inventory/lab``), reached with ``podman exec``:
the container's memory (its cgroup's ``memory.current``, or ``memory.usage_in_bytes`` under
cgroup v1: processes, page cache and kernel memory charged to it) and, beside it, each running
service's resident memory (the processes of its control group), the largest first, and how much
of the container's memory is page cache (the kernel gives it back under pressure; it grows with
the files a host has read and written since it started). Prints one line per host, the total
without the page cache, then the total as ``footprint N MB``. One reading, taken now: run it on a
settled cluster (after a converge, with the pipeline running) to compare releases. Nothing is
asserted.
"""

from __future__ import annotations

import argparse
import sys

from _podman import sh

from kafkaform.inventory import load as load_inventory

MB = 1024 * 1024
#: Services below this are left out of a host's line (systemd's own, cron, D-Bus).
SMALL_MB = 10


#: The container's memory: cgroup v2's memory.current, else cgroup v1's usage (podman on a
#: cgroup v1 machine); both count the page cache charged to the container.
CONTAINER_MEMORY = ("cat /sys/fs/cgroup/memory.current 2>/dev/null "
                    "|| cat /sys/fs/cgroup/memory/memory.usage_in_bytes")
#: Each running service and the resident memory (KiB) of the processes of its control group;
#: systemd's MemoryCurrent is not set under cgroup v1.
SERVICE_RSS = r"""
for unit in $(systemctl list-units --type=service --state=running --no-legend --plain \
              | cut -d' ' -f1); do
  group=$(systemctl show -p ControlGroup --value "$unit")
  procs=/sys/fs/cgroup$group/cgroup.procs
  [ -r "$procs" ] || procs=/sys/fs/cgroup/systemd$group/cgroup.procs
  pids=$(paste -sd, "$procs" 2>/dev/null)
  [ -n "$pids" ] && echo "$unit $(ps -o rss= -p "$pids" | awk '{s += $1} END {print s}')"
done
"""


#: The page cache charged to the container: cgroup v2's `file`, else cgroup v1's `total_cache`.
CONTAINER_CACHE = ("awk '$1 == \"file\" {print $2}' /sys/fs/cgroup/memory.stat 2>/dev/null "
                   "| grep . "
                   "|| awk '$1 == \"total_cache\" {print $2}' /sys/fs/cgroup/memory/memory.stat")


def container_bytes(container: str) -> int:
    return int(sh(container, CONTAINER_MEMORY).strip())


def cache_bytes(container: str) -> int:
    return int(sh(container, CONTAINER_CACHE).strip() or 0)


def service_bytes(container: str) -> dict[str, int]:
    """Each running service's resident memory, from the processes of its control group."""
    found = {}
    for line in sh(container, SERVICE_RSS).splitlines():
        unit, _, kib = line.partition(" ")
        if kib.strip().isdigit():
            found[unit.removesuffix(".service")] = int(kib) * 1024
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-i", "--inventory", required=True)
    args = parser.parse_args()
    hosts = load_inventory(args.inventory).cluster_hosts()
    if not hosts:
        print(f"error: no host of the cluster model in {args.inventory}", file=sys.stderr)
        return 2
    total = cached = 0
    for host in hosts:
        used, cache = container_bytes(host), cache_bytes(host)
        total += used
        cached += cache
        services = sorted(service_bytes(host).items(), key=lambda item: -item[1])
        shown = ", ".join(f"{unit} {value / MB:.0f}" for unit, value in services
                          if value >= SMALL_MB * MB)
        print(f"{host}: {used / MB:.0f} MB, page cache {cache / MB:.0f} "
              f"({shown or 'no service above 10 MB'})", flush=True)
    print(f"without the page cache {(total - cached) / MB:.0f} MB")
    print(f"footprint {total / MB:.0f} MB on {len(hosts)} hosts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
