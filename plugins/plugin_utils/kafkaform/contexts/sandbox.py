"""The sandbox every kafkaform systemd unit runs its service in, written once.

The units of ZooKeeper (and its purge job), the Kafka brokers, the Spark daemons and the pipeline
share these lines; each unit adds only what differs: ReadWritePaths=, RestrictAddressFamilies= and,
for the purge job, no network at all. Each context hands them to its templates as ``sandbox``: a
Jinja include cannot serve both renderers, since Ansible's template module looks for included files
beside the template and in its own role's ``templates/``, never in another role's.

With them every unit scores an exposure of 2.0 or less in ``systemd-analyze security``
(``tests/unit/test_unit_hardening.py``). SE-04
"""

from __future__ import annotations

#: Lines of the [Service] section, comments included (systemd.exec(5)).
SANDBOX: tuple[str, ...] = (
    "# The sandbox of every kafkaform unit (systemd.exec(5)): a compromised service touches",
    "# only its own files (SE-04). No capabilities, no privilege gained through exec.",
    "NoNewPrivileges=yes",
    "CapabilityBoundingSet=",
    "AmbientCapabilities=",
    "UMask=0027",
    "# Read-only system, no homes; a private /tmp holds the JVM's hsperfdata and temporary files.",
    "ProtectSystem=strict",
    "ProtectHome=yes",
    "PrivateTmp=yes",
    "PrivateMounts=yes",
    "PrivateDevices=yes",
    "DevicePolicy=closed",
    "PrivateUsers=yes",
    "# No ProtectProc=: with PrivateUsers= systemd cannot mount the service's own /proc and the",
    "# service fails at start (217/USER) wherever it may try (hosts, containers with SYS_ADMIN).",
    "# No ProcSubset=pid: without /proc/cgroups the JVM ignores its cgroup's memory and CPU",
    "# limits, without /proc/stat it reports no CPU load.",
    "ProtectHostname=yes",
    "ProtectClock=yes",
    "ProtectKernelTunables=yes",
    "ProtectKernelModules=yes",
    "ProtectKernelLogs=yes",
    "ProtectControlGroups=yes",
    "KeyringMode=private",
    "RemoveIPC=yes",
    "RestrictSUIDSGID=yes",
    "RestrictRealtime=yes",
    "RestrictNamespaces=yes",
    "LockPersonality=yes",
    "# No MemoryDenyWriteExecute=: the JIT compilers write the code they then run.",
    "# An ordinary service's system calls, less those that need privileges or change limits,",
    "# priorities or CPU and memory placement; a refused one fails with EPERM, killing nothing.",
    "SystemCallArchitectures=native",
    "SystemCallFilter=@system-service",
    "SystemCallFilter=~@privileged @resources",
    "SystemCallErrorNumber=EPERM",
)


def sandbox() -> list[str]:
    """The shared sandbox lines, a fresh list for a template context."""
    return list(SANDBOX)


#: What a root job that reads the services' /proc entries and data changes in the shared sandbox:
#: the capability to read any file and directory (another user's /proc/PID/fd, ZooKeeper's data
#: directory). It may not run in a user namespace of its own: root inspects the services' /proc
#: entries as the creator of their user namespaces, which a namespace of its own would hide.
ROOT_READER: dict[str, list[str]] = {
    "# only its own files (SE-04). No capabilities, no privilege gained through exec.": [
        "# only its own files (SE-04). No privilege gained through exec."],
    "CapabilityBoundingSet=": [
        "# Root only to read the services' files. CAP_DAC_OVERRIDE where a container withholds",
        "# CAP_DAC_READ_SEARCH (podman's default set); ProtectSystem=strict leaves it nothing",
        "# but the output's directory to write.",
        "CapabilityBoundingSet=CAP_DAC_READ_SEARCH CAP_DAC_OVERRIDE"],
    "PrivateUsers=yes": [],
}


def root_reader_sandbox() -> list[str]:
    """The shared sandbox for a root job that only reads the services' files (ROOT_READER); it
    still scores an exposure of 2.0 or less."""
    lines: list[str] = []
    for line in SANDBOX:
        lines += ROOT_READER.get(line, [line])
    return lines
