"""``roles/os_tuning`` as pyinfra deploys: the host's plan (kafkaform.plans.os_tuning), carried out
as the role carries it out: the same refusals, files, live kernel settings and data disks, so a
host either engine converged is converged for the other (same files, bytes, paths, owners and
modes, same mounts and /etc/fstab lines).

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

from ..contexts.os_tuning_mounts import fstab_line, mount_problem
from ..model import KAFKA_BROKER, KAFKA_CONTROLLER, ZOOKEEPER
from ..plans.os_tuning import (
    ROLE,
    OsTuningPlan,
    host_read,
    os_tuning_plan,
    parse_host,
    planned_mounts,
)
from .base import Planned, install_planned, role_settings, run_on, will_change
from .facts import CommandOutput

#: The groups playbooks/os_tuning.yml runs the role on.
GROUPS = (ZOOKEEPER, KAFKA_CONTROLLER, KAFKA_BROKER)
FSTAB = "/etc/fstab"


def plan() -> OsTuningPlan | None:
    """The current host's plan, from its host read (one fact, cached per host, so the deploys
    below share it); None when playbooks/os_tuning.yml does not target the host."""
    if not any(group in host.groups for group in GROUPS):
        return None
    settings = role_settings(ROLE)
    read = parse_host(host.get_fact(CommandOutput, argv=tuple(host_read(settings))))
    return os_tuning_plan(host.name, settings, read)


def _stop_on(*refusals: str) -> None:
    """In the prepare stage: the run stops before it changes anything on any host."""
    found = next((refusal for refusal in refusals if refusal), "")
    if found:
        raise DeployError(found)


@deploy("os_tuning: kernel settings")
def sysctl() -> None:
    """``roles/os_tuning/tasks/sysctl.yml``: write the file, apply the live values that differ."""
    p = plan()
    if p is None or not p.sysctl_enabled:
        return
    _stop_on(p.read_problem, p.sysctl_refusal)
    install_planned([f.as_task_item() for f in p.sysctl_files], {ROLE: p.context})
    # The file holds every key already; only live values that differ change.
    for item in p.sysctl_apply:
        server.sysctl(name=f"Apply {item['key']}={item['value']} live", key=item["key"],
                      value=item["value"])
    if p.in_container:
        logger.info(f"{host.print_prefix}{p.sysctl_report}")


@deploy("os_tuning: open-file limits")
def limits() -> None:
    """``roles/os_tuning/tasks/limits.yml``: the service users' limits.d file. FD-01 FD-02"""
    p = plan()
    if p is None or not p.limits_enabled:
        return
    install_planned([f.as_task_item() for f in p.limits_files], {ROLE: p.context})


@deploy("os_tuning: kernel settings and open-file limits")
def kernel_and_limits() -> None:
    """Both deploys above, in the role's order."""
    sysctl()
    limits()


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
            ran = run_on(host.name, disk["uuid_argv"])
        if not ran.ok or not ran.stdout.strip():
            raise DeployError(f"{host.name}: formatting {disk['device']} failed: {ran.said}")
        formatted = {**disk, "uuid": ran.stdout.strip()}
        for command in (_fstab_command(formatted), _mount_command(formatted, mode)):
            ran = run_on(host.name, ["sh", "-c", command])
            if not ran.ok:
                raise DeployError(f"{host.name}: {disk['device']} at {disk['mount']}: {ran.said}")


def _verify_mounts(context: dict[str, Any], argv: list[str], devices: list[dict[str, Any]]) -> None:
    """``roles/os_tuning/tasks/verify.yml``, once the run changed something. DF-01 DF-02"""
    findmnt = run_on(host.name, argv).stdout
    problems = [problem for problem in (mount_problem(context, d, findmnt) for d in devices)
                if problem]
    if problems:
        raise DeployError(" | ".join(problems))


def _create_owners(owners: list[str]) -> None:
    """The kafka_broker and zookeeper roles own these users; a disk is prepared before them, so a
    missing owner is created here, minimal, and never changed afterwards."""
    for owner in owners:
        server.group(name=f"Create the system group {owner}", group=owner, system=True)
        server.user(name=f"Create the system user {owner}", user=owner, group=owner,
                    system=True, create_home=False, ensure_home=False, home="/nonexistent",
                    shell="/usr/sbin/nologin")


def _mounts(p: OsTuningPlan, mode: str) -> list[Planned]:
    """``roles/os_tuning/tasks/disks.yml`` from the formats on: the disks formatted in this run are
    recorded and mounted as they are formatted (their UUID exists only then), the others as the
    plan lists them."""
    ops: list[Planned] = []
    if p.formats:
        ops.append(python.call(name="Create XFS on each blank data disk, record and mount it",
                               function=_format_and_mount, formats=p.formats, mode=mode))
    mounts = planned_mounts(p.as_vars(), [])  # those formatted in this run are left out
    for disk in mounts["fstab"]:  # only the lines /etc/fstab lacks or has otherwise
        ops.append(server.shell(name=f"Record {disk['mount']} in /etc/fstab by UUID",
                                commands=[_fstab_command(disk)]))
    for disk in mounts["mount"]:
        ops.append(server.shell(name=f"Mount {disk['device']} at {disk['mount']}",
                                commands=[_mount_command(disk, mode)]))
    for disk in p.remount:
        ops.append(server.shell(name=f"Remount {disk['mount']} with {disk['opts']}", commands=[
            f"mount -o remount,{shlex.quote(disk['opts'])} {shlex.quote(disk['mount'])}"]))
    for disk in p.own_in_place:  # the others got their owner right after their mount
        ops.append(files.directory(name=f"Give {disk['mount']} to {disk['owner']}",
                                   path=disk["mount"], user=disk["owner"], group=disk["owner"],
                                   mode=mode))
    return ops


@deploy("os_tuning: data disks")
def disks() -> None:
    """``roles/os_tuning/tasks/disks_check.yml``, ``disks.yml`` and ``verify.yml``: never formats
    a device that holds anything unless the inventory says force_format. DF-01 DF-02 DF-03"""
    p = plan()
    if p is None or not p.disks_enabled:
        return
    _stop_on(p.read_problem, p.disks_refusal)
    _create_owners(p.create_owners)
    ops = _mounts(p, p.context["data_dir_mode"])
    for disk in p.directories:
        logger.warning(f"{host.print_prefix}{disk['warning']}")
    if p.verify and will_change(*ops):
        python.call(name="Check that each data disk is mounted, XFS, with noatime",
                    function=_verify_mounts, context=p.context, argv=p.findmnt_argv,
                    devices=p.verify)


@deploy("os_tuning")
def os_tuning() -> None:
    """The whole role in its order: the disks' checks first, so a refused disk stops the run
    before any kernel setting is written."""
    p = plan()
    if p is not None and p.disks_enabled:
        _stop_on(p.read_problem, p.disks_refusal)
    sysctl()
    limits()
    disks()
