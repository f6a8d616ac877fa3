"""Where the machine's CPU goes while something runs: each podman container, its services, the rest.

    .venv/bin/python benchmarks/cpu_shares.py [--interval S] [--top N] (--pid PID | -- COMMAND...)

Samples every ``--interval`` seconds (15 by default) until the process ``--pid`` or the command
after ``--`` ends (or on SIGINT/SIGTERM), then prints:

+ the machine: wall time, CPU time busy (``/proc/stat``) and its share of the cores;
+ each container (podman's cgroupfs layout, ``libpod_parent/libpod-<id>``): its CPU time (cgroup
  v1 ``cpuacct.usage``, every process ever in it), split into its systemd units (the processes of
  each unit's control group, from ``/proc/<pid>/stat``) and the rest: what ``podman exec`` ran in
  it (Ansible's modules, the tools the checks start);
+ the same units summed over every container, largest first;
+ outside the containers: the machine's busy time less the containers' (Ansible, molecule, pyinfra,
  podman, conmon, the tests themselves);
+ every process that ended meanwhile, in and out of containers, summed by command name and user
  (the kernel's process accounting, ``acct(2)``, switched on for the run: it sees the tool JVMs and
  modules that live a second, which no sampling does).

Counters are cumulative, so a sample lost only shortens the last interval of a container or process
removed before the next one: a unit's figure misses at most ``--interval`` seconds of each process
that ended. Reads ``/proc`` and ``/sys/fs/cgroup`` only (root, cgroup v1 with podman's cgroupfs
manager, as on the project's machines). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

CPUACCT = Path("/sys/fs/cgroup/cpuacct/libpod_parent")
SYSTEMD = Path("/sys/fs/cgroup/systemd/libpod_parent")
TICK = os.sysconf("SC_CLK_TCK")


def machine_busy() -> float:
    """CPU seconds the machine spent not idle since boot (every core)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields[:8]) - idle) / TICK


def process_cpu(pid: str) -> float:
    """CPU seconds of a process and of its children it has waited for."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat.rsplit(")", 1)[1].split()
    return sum(int(v) for v in fields[11:15]) / TICK  # utime, stime, cutime, cstime


#: One record of the kernel's process accounting (struct acct_v3, linux/acct.h): flag, version,
#: tty, exit code, uid, gid, pid, ppid, start time, elapsed time (float), then comp_t user time,
#: system time and six more, and the command name.
ACCT_V3 = struct.Struct("=BBHIIIIIIf8H16s")
#: Process accounting counts time in AHZ ticks (100 a second on Linux).
AHZ = 100


def comp_t(value: int) -> int:
    """acct(2)'s comp_t: 13 bits of mantissa, 3 of base-8 exponent."""
    return (value & 0x1FFF) << (3 * (value >> 13))


class Accounting:
    """The kernel's process accounting into a temporary file while the run lasts (root only)."""

    def __init__(self) -> None:
        self.libc = ctypes.CDLL(None, use_errno=True)
        handle, self.path = tempfile.mkstemp(prefix="kafkaform-acct-")
        os.close(handle)
        if self.libc.acct(self.path.encode()) != 0:
            error = os.strerror(ctypes.get_errno())
            os.unlink(self.path)
            raise SystemExit(f"cannot switch process accounting on ({error}): run as root")

    def stop(self) -> dict[str, float]:
        """Switch accounting off; CPU seconds of the processes that ended, by command and user."""
        self.libc.acct(None)
        data = Path(self.path).read_bytes()
        os.unlink(self.path)
        totals: dict[str, float] = defaultdict(float)
        for offset in range(0, len(data) - ACCT_V3.size + 1, ACCT_V3.size):
            record = ACCT_V3.unpack_from(data, offset)
            uid, utime, stime, comm = record[4], record[10], record[11], record[-1]
            name = comm.split(b"\0", 1)[0].decode(errors="replace")
            totals[f"{name} (uid {uid})"] += (comp_t(utime) + comp_t(stime)) / AHZ
        return totals


def read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def largest(values: dict[str, float]) -> list[tuple[str, float]]:
    return sorted(values.items(), key=lambda item: -item[1])


class Samples:
    """Each container's and each unit process's CPU time since the first sample.

    The counters run from a container's or process's start: what they held at the first sample is
    subtracted (podman's cgroupfs manager also leaves the groups of removed containers behind).
    """

    def __init__(self) -> None:
        self.names: dict[str, str] = {}  # container id -> name
        self.containers: dict[str, float] = {}  # container id -> CPU s
        self.units: dict[tuple[str, str, str], float] = {}  # (id, unit, pid) -> CPU s
        self.baseline: dict[object, float] = {}
        self.started = False

    def since_start(self, key: object, value: float) -> float:
        if key not in self.baseline:
            self.baseline[key] = 0.0 if self.started else value
        return value - self.baseline[key]

    def name(self, cid: str) -> str:
        if cid not in self.names:
            out = subprocess.run(["podman", "ps", "-a", "--no-trunc", "--format",
                                  "{{.ID}} {{.Names}}"],
                                 capture_output=True, text=True, check=False).stdout
            for line in out.splitlines():
                ident, _, name = line.partition(" ")
                self.names[ident] = name
        return self.names.get(cid, cid[:12])

    def take(self) -> None:
        for group in CPUACCT.glob("libpod-*"):
            cid = group.name.removeprefix("libpod-")
            usage = read(group / "cpuacct.usage").strip()
            if not usage:
                continue
            cpu = self.since_start(cid, int(usage) / 1e9)
            if cpu <= 0:
                continue
            self.name(cid)
            self.containers[cid] = max(self.containers.get(cid, 0.0), cpu)
            for procs in (SYSTEMD / group.name).glob("**/*.service/cgroup.procs"):
                unit = procs.parent.name
                for pid in read(procs).split():
                    key = (cid, unit, pid)
                    self.units[key] = max(self.units.get(key, 0.0),
                                          self.since_start(key, process_cpu(pid)))
        self.started = True

    def report(self, wall: float, busy: float, top: int, ended: dict[str, float]) -> str:
        lines = [f"wall {wall:.0f} s, machine busy {busy:.0f} CPU s "
                 f"({busy / wall / (os.cpu_count() or 1):.0%} of {os.cpu_count()} cores)"]
        per_unit: dict[str, float] = defaultdict(float)
        units_of: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        for (cid, unit, _pid), cpu in self.units.items():
            units_of[cid][unit] += cpu
            per_unit[unit] += cpu
        per_container = self.containers
        in_containers = sum(per_container.values())
        lines.append(f"containers {in_containers:.0f} CPU s ({in_containers / busy:.0%}); "
                     f"outside them {busy - in_containers:.0f} CPU s "
                     f"({(busy - in_containers) / busy:.0%}): Ansible, molecule, pyinfra, podman")
        lines.append("per container: CPU s, its units, the rest (podman exec)")
        for cid, cpu in largest(per_container):
            units = units_of[cid]
            shown = ", ".join(f"{u.removesuffix('.service')} {c:.0f}"
                              for u, c in largest(units)[:top] if c >= 1)
            lines.append(f"  {self.names.get(cid, cid[:12])}: {cpu:.0f}; {shown or '-'}; "
                         f"rest {max(cpu - sum(units.values()), 0):.0f}")
        lines.append("per unit over every container: CPU s")
        lines.extend(f"  {unit.removesuffix('.service')}: {cpu:.0f}"
                     for unit, cpu in largest(per_unit)[:top * 3] if cpu >= 1)
        exec_rest = in_containers - sum(per_unit.values())
        lines.append(f"  (podman exec and other processes in containers: {exec_rest:.0f})")
        lines.append(f"processes that ended, by command and user: CPU s (all: "
                     f"{sum(ended.values()):.0f})")
        lines.extend(f"  {name}: {cpu:.0f}" for name, cpu in largest(ended)[:top * 3] if cpu >= 1)
        return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--interval", type=float, default=15.0)
    parser.add_argument("--top", type=int, default=6, help="units shown per container")
    parser.add_argument("--pid", type=int, help="sample until this process ends")
    parser.add_argument("command", nargs="*", help="or run this command and sample until it ends")
    args = parser.parse_args(argv)
    if bool(args.pid) == bool(args.command):
        parser.error("give --pid or a command after --")
    stop = False

    def finish(signum: int, frame: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, finish)
    signal.signal(signal.SIGINT, finish)
    samples = Samples()
    accounting = Accounting()
    child = subprocess.Popen(args.command) if args.command else None
    start, busy0 = time.monotonic(), machine_busy()
    while not stop:
        samples.take()
        if child is not None and child.poll() is not None:
            break
        if args.pid and not Path(f"/proc/{args.pid}").exists():
            break
        time.sleep(args.interval)
    samples.take()
    wall, busy = time.monotonic() - start, machine_busy() - busy0
    print(samples.report(wall, busy, args.top, accounting.stop()), flush=True)
    return child.returncode if child is not None and child.returncode is not None else 0


if __name__ == "__main__":
    sys.exit(main())
