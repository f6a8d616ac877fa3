"""The os_tuning role's kernel settings and open-file limits, as pyinfra deploys.

Each deploy follows one task file of ``roles/os_tuning/tasks/`` with the same context
(:func:`kafkaform.contexts.os_tuning.os_tuning_context`) and templates, so a host either engine
converged is converged for the other: same files, bytes, paths, owners and modes.
The data disks (``disks_check.yml``, ``disks.yml``) are not ported yet.

    pyinfra @kafkaform/inventory/lab kafkaform.deploys.os_tuning.kernel_and_limits
"""

from __future__ import annotations

from typing import Any

from pyinfra import logger
from pyinfra.api.deploy import deploy
from pyinfra.api.exceptions import DeployError
from pyinfra.context import host
from pyinfra.operations import server

from ..contexts.os_tuning import os_tuning_context, sysctl_plan
from ..defaults import setting
from ..model import KAFKA_BROKER, ZOOKEEPER
from .base import put_rendered, role_settings
from .facts import CommandOutput

ROLE = "os_tuning"
#: The groups playbooks/os_tuning.yml runs the role on.
GROUPS = (ZOOKEEPER, KAFKA_BROKER)


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
    probe = host.get_fact(CommandOutput, argv=tuple(context["sysctl_probe_argv"]))
    plan = sysctl_plan(context, probe or "")
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
