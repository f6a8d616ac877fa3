"""The os_tuning role's kernel settings and open-file limits, as pyinfra deploys.

Each deploy follows one task file of ``roles/os_tuning/tasks/`` with the same context
(:func:`kafkaform.contexts.os_tuning.os_tuning_context`) and templates, so a host either engine
converged is converged for the other: same files, bytes, paths, owners and modes.

    pyinfra @kafkaform/inventory/lab kafkaform.deploys.os_tuning.kernel_and_limits
    pyinfra @kafkaform/path/to/inventory kafkaform.deploys.os_tuning.disks
    pyinfra @kafkaform/path/to/inventory kafkaform.deploys.os_tuning.os_tuning
"""

from __future__ import annotations

import shlex
from typing import Any

from pyinfra import logger
from pyinfra.api.deploy import deploy
from pyinfra.api.exceptions import DeployError
from pyinfra.context import host
from pyinfra.operations import files, python, server

from ..contexts.os_tuning import os_tuning_context
from ..contexts.os_tuning_disks import device_problems, disk_plan
from ..contexts.os_tuning_mounts import disk_mounts, fstab_line, mount_problem
from ..contexts.os_tuning_probe import host_report
from ..contexts.os_tuning_sysctl import sysctl_plan
from ..defaults import setting
from ..model import KAFKA_BROKER, KAFKA_CONTROLLER, ZOOKEEPER
from .base import put_rendered, role_settings, run_on
from .facts import CommandOutput

ROLE = "os_tuning"
#: The groups playbooks/os_tuning.yml runs the role on.
GROUPS = (ZOOKEEPER, KAFKA_CONTROLLER, KAFKA_BROKER)


def context_if_enabled(switch: str) -> dict[str, Any] | None:
    """The current host's ``os_tuning`` context, or None when playbooks/os_tuning.yml does not
    target the host or the inventory turns ``switch`` (os_tuning_sysctl_enabled, ...) off."""
    if not any(group in host.groups for group in GROUPS):
        return None
    settings = role_settings(ROLE)
    return os_tuning_context(host.name, settings) if setting(settings, switch) else None


@deploy("os_tuning: kernel settings")
def sysctl() -> None:
    """``roles/os_tuning/tasks/sysctl.yml``: probe, plan, write the file, apply live values."""
    context = context_if_enabled("os_tuning_sysctl_enabled")
    if context is None:
        return
    plan = sysctl_plan(context, _report(context)["sysctl"])
    if plan["refusal"]:
        # In the prepare stage: the run stops before it changes anything on any host.
        raise DeployError(plan["refusal"])
    put_rendered("os_tuning/sysctl.conf.j2", {ROLE: context}, context["sysctl_file"])
    # The file holds every key already; only live values that differ change (plan["apply"]).
    for item in plan["apply"]:
        server.sysctl(name=f"Apply {item['key']}={item['value']} live", key=item["key"],
                      value=item["value"])
    if plan["in_container"]:
        logger.info(f"{host.print_prefix}{plan['report']}")


@deploy("os_tuning: open-file limits")
def limits() -> None:
    """``roles/os_tuning/tasks/limits.yml``: the service users' limits.d file. FD-01 FD-02"""
    context = context_if_enabled("os_tuning_limits_enabled")
    if context is None:
        return
    put_rendered("os_tuning/limits.conf.j2", {ROLE: context}, context["limits"]["file"])


@deploy("os_tuning: kernel settings and open-file limits")
def kernel_and_limits() -> None:
    """Both deploys above, in the role's order."""
    sysctl()
    limits()


FSTAB = "/etc/fstab"


def _report(context: dict[str, Any]) -> dict[str, Any]:
    """``roles/os_tuning/tasks/main.yml``'s one read of the host, read once at planning (the
    fact is cached per host), sorted as the role sorts it."""
    probed = host.get_fact(CommandOutput, argv=tuple(context["probe_argv"]))
    report = host_report(context, probed or "")
    if report["problem"]:
        raise DeployError(report["problem"])
    return report


def _plan(context: dict[str, Any]) -> dict[str, Any]:
    """``roles/os_tuning/tasks/disks_check.yml``: from the read alone; the run stops here, in
    the prepare stage before any host is changed, on anything the role refuses. DF-01 DF-03"""
    if context["disk_input_error"]:
        raise DeployError(context["disk_input_error"])
    report = _report(context)
    bad_nodes = device_problems(context, report["stat"])
    if bad_nodes:
        raise DeployError(bad_nodes)
    plan = disk_plan(context, report)
    if plan["refusal"]:
        raise DeployError(plan["refusal"])
    return plan


def _fstab_command(disk: dict[str, Any]) -> str:
    """Replace the line of the disk's mount point in /etc/fstab, or add it."""
    mount = disk["mount"]
    return (f"awk -v m={shlex.quote(mount)} -v l={shlex.quote(fstab_line(disk))} "
            "'$2 == m && !done {print l; done=1; next} {print} END {if (!done) print l}' "
            f"{FSTAB} > {FSTAB}.kafkaform && cat {FSTAB}.kafkaform > {FSTAB} "
            f"&& rm {FSTAB}.kafkaform")


def _mount_command(disk: dict[str, Any], mode: str) -> str:
    """Mount the disk now (the live mount uses the device path: a container has no
    /dev/disk/by-uuid), then give its root to the service user. DF-01 DF-02 DF-03"""
    mount, owner = shlex.quote(disk["mount"]), shlex.quote(disk["owner"])
    return (f"mkdir -p {mount} && mount -t xfs -o {shlex.quote(disk['opts'])} "
            f"{shlex.quote(disk['device'])} {mount} && chown {owner}:{owner} {mount} "
            f"&& chmod {shlex.quote(mode)} {mount}")


def _format_and_mount(formats: list[dict[str, Any]], mode: str) -> None:
    """At execution time: XFS on each blank (or force_format) device, its new UUID into
    /etc/fstab, then the mount. DF-01 DF-02"""
    for disk in formats:
        ran = run_on(host.name, ["mkfs.xfs", *(["-f"] if disk["force"] else []), disk["device"]])
        if ran.ok:
            ran = run_on(host.name, ["blkid", "-p", "-o", "value", "-s", "UUID", disk["device"]])
        if not ran.ok or not ran.stdout.strip():
            raise DeployError(f"{host.name}: formatting {disk['device']} failed: {ran.said}")
        formatted = {**disk, "uuid": ran.stdout.strip(), "opts": ",".join(disk["options"])}
        for command in (_fstab_command(formatted), _mount_command(formatted, mode)):
            ran = run_on(host.name, ["sh", "-c", command])
            if not ran.ok:
                raise DeployError(f"{host.name}: {disk['device']} at {disk['mount']}: {ran.said}")


def _verify_mounts(context: dict[str, Any], devices: list[dict[str, Any]]) -> None:
    """``roles/os_tuning/tasks/verify.yml``, once the run changed something. DF-01 DF-02"""
    findmnt = run_on(host.name, context["findmnt_argv"]).stdout
    problems = [p for p in (mount_problem(context, d, findmnt) for d in devices) if p]
    if problems:
        raise DeployError(" | ".join(problems))


@deploy("os_tuning: data disks")
def disks() -> None:
    """``roles/os_tuning/tasks/disks_check.yml``, ``disks.yml`` and ``verify.yml``: never formats
    a device that holds anything unless the inventory says force_format. DF-01 DF-02 DF-03"""
    context = context_if_enabled("os_tuning_disks_enabled")
    if context is None or not context["disks"]:
        return
    plan = _plan(context)
    mode = context["data_dir_mode"]
    users = _report(context)["users"]
    # The kafka_broker and zookeeper roles own these users; a disk is prepared before them, so a
    # missing owner is created here, minimal, and never changed afterwards.
    for owner in context["disk_owners"]:
        if owner not in users:
            server.group(name=f"Create the system group {owner}", group=owner, system=True)
            server.user(name=f"Create the system user {owner}", user=owner, group=owner,
                        system=True, create_home=False, ensure_home=False, home="/nonexistent",
                        shell="/usr/sbin/nologin")
    mounts = disk_mounts(plan, [])  # the disks formatted in this run have no UUID yet
    ops = []
    if plan["formats"]:
        ops.append(python.call(name="Create XFS on each blank data disk, record and mount it",
                               function=_format_and_mount, formats=plan["formats"], mode=mode))
    for disk in mounts["fstab"]:  # only the lines /etc/fstab lacks or has otherwise
        ops.append(server.shell(name=f"Record {disk['mount']} in /etc/fstab by UUID",
                                commands=[_fstab_command(disk)]))
    for disk in mounts["unmounted"]:
        ops.append(server.shell(name=f"Mount {disk['device']} at {disk['mount']}",
                                commands=[_mount_command(disk, mode)]))
    for disk in mounts["remount"]:
        ops.append(server.shell(name=f"Remount {disk['mount']} with {disk['opts']}", commands=[
            f"mount -o remount,{shlex.quote(disk['opts'])} {shlex.quote(disk['mount'])}"]))
    pending = {d["mount"] for d in [*plan["formats"], *mounts["unmounted"]]}
    for disk in mounts["owners"]:
        if disk["mount"] not in pending:  # those get their owner right after their mount
            ops.append(files.directory(name=f"Give {disk['mount']} to {disk['owner']}",
                                       path=disk["mount"], user=disk["owner"],
                                       group=disk["owner"], mode=mode))
    for disk in context["directories"]:
        logger.warning(f"{host.print_prefix}{disk['mount']} ({disk['purpose']}) is a directory "
                       "on an existing filesystem, not a dedicated XFS disk mounted with noatime "
                       "(DF-01, DF-02, DF-03). Fine for a test host; declare a device for "
                       "production.")
    if plan["devices"] and any(op.will_change for op in ops):
        python.call(name="Check that each data disk is mounted, XFS, with noatime",
                    function=_verify_mounts, context=context, devices=plan["devices"])


@deploy("os_tuning")
def os_tuning() -> None:
    """The whole role in its order: the disks' checks first, so a refused disk stops the run
    before any kernel setting is written."""
    context = context_if_enabled("os_tuning_disks_enabled")
    if context is not None and context["disks"]:
        _plan(context)
    sysctl()
    limits()
    disks()
