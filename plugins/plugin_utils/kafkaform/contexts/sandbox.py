"""The sandbox every kafkaform systemd unit runs its service in, written once.

The units of ZooKeeper (and its purge job), the Kafka brokers, the Spark daemons and the pipeline
share these lines; each unit adds only what differs: ReadWritePaths=, RestrictAddressFamilies= and,
for the purge job, no network at all. Each context hands them to its templates as ``sandbox``: a
Jinja include cannot serve both renderers, since Ansible's template module looks for included files
beside the template and in the role, never in the collection's ``templates/``.

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
