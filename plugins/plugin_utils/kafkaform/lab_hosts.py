"""The lab's pure model: the inventory's hosts, and the container each becomes (devices, volumes,
labels, the spec hash that tells when to recreate it)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .defaults import role_default
from .model import SPARK_MASTER, SPARK_WORKER
from .podman import CommandError

NETWORK = "kafkaform-lab"

MIRROR = "kf-mirror"

MIRROR_PORT = 8000

LAB_LABEL = "org.kafkaform.lab"

SPEC_LABEL = "org.kafkaform.spec"

_DEVICE = re.compile(r"^/dev/[a-z][a-z0-9]*$")

_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_.-]*$")


@dataclass(frozen=True)
class LabHost:
    """One inventory host as the lab sees it: its container name, groups, rack and data disks."""

    name: str
    groups: tuple[str, ...]
    rack: str | None
    disks: tuple[str, ...]  # device paths inside the container, e.g. /dev/kfdata0
    # Spark nodes share one directory (spark_node_shared_dir): the lab mounts one volume there.
    shared_dir: str | None = None


def parse_hosts(
    host_vars: Mapping[str, Mapping[str, Any]], host_groups: Mapping[str, Sequence[str]]
) -> list[LabHost]:
    """Turn inventory data (variables and groups per host) into lab hosts, validated."""
    hosts = []
    for name in sorted(host_vars):
        if not _NAME.match(name):
            raise CommandError(f"inventory host {name!r} is not a valid container name")
        variables = host_vars[name]
        declared = variables.get("os_tuning_data_disks") or []
        disks = tuple(_disk_device(name, disk) for disk in declared)
        if len(set(disks)) != len(disks):
            raise CommandError(f"{name}: os_tuning_data_disks lists a device twice: {disks}")
        rack = variables.get("rack")
        groups = tuple(sorted(set(host_groups.get(name, ())) - {"all", "ungrouped"}))
        shared = variables.get("spark_node_shared_dir") or role_default("spark_node_shared_dir")
        is_spark = bool({SPARK_MASTER, SPARK_WORKER} & set(groups))
        hosts.append(LabHost(name, groups, str(rack) if rack is not None else None, disks,
                             str(shared) if is_spark else None))
    return hosts


def _disk_device(host: str, disk: Any) -> str:
    """The in-container device path of one `os_tuning_data_disks` entry."""
    device = disk.get("device") if isinstance(disk, Mapping) else None
    if not isinstance(device, str) or not _DEVICE.match(device):
        raise CommandError(
            f"{host}: os_tuning_data_disks entry {disk!r} needs a device like /dev/kfdata0"
        )
    return device


def disk_file(cache: Path, host: str, device: str) -> Path:
    """The sparse file backing one data disk of one host."""
    return cache / "lab" / "disks" / f"{host}-{Path(device).name}.img"


def device_args(loops: Mapping[str, str]) -> list[str]:
    """`--device` options handing each loop device in under its stable in-container name.

    The loop node is passed under its own name too: blkid (and so `mount UUID=...` and Ansible's
    mount facts) finds devices through /proc/partitions, which names the loop device.
    """
    args: list[str] = []
    for device, loop in sorted(loops.items()):
        args += ["--device", f"{loop}:{device}:rwm", "--device", f"{loop}:{loop}:rwm"]
    return args


def shared_volume(network: str) -> str:
    """The podman volume the lab's Spark nodes share (a stand-in for NFS)."""
    return f"{network}-shared"


def host_run_args(host: LabHost, loops: Mapping[str, str], network: str, image: str) -> list[str]:
    """The `podman run` arguments (after the label options) of one systemd lab host."""
    shared = ["--volume", f"{shared_volume(network)}:{host.shared_dir}"] if host.shared_dir else []
    return [
        "--name", host.name,
        "--hostname", host.name,
        "--network", network,
        "--systemd=always",
        # Needed to mount the XFS data disks; NOT --privileged, which could change global sysctls.
        "--cap-add", "SYS_ADMIN",
        *device_args(loops),
        *shared,
        image,
        "/sbin/init",
    ]  # fmt: skip


def mirror_run_args(name: str, network: str, image: str, directory: Path) -> list[str]:
    """The `podman run` arguments of the artifact mirror: a static HTTP server, read-only data."""
    return [
        "--name", name,
        "--hostname", name,
        "--network", network,
        # python as PID 1 would ignore the stop signal; catatonit forwards it.
        "--init",
        "--systemd=false",
        "--volume", f"{directory}:/srv/mirror:ro",
        image,
        "python3", "-m", "http.server", str(MIRROR_PORT), "--directory", "/srv/mirror",
    ]  # fmt: skip


def spec_hash(run_args: Sequence[str], image_id: str) -> str:
    """Fingerprint of a container's definition; a running container with another one is stale."""
    return hashlib.sha256("\0".join([image_id, *run_args]).encode()).hexdigest()[:16]


def load_inventory(path: Path) -> list[LabHost]:
    """Read the lab inventory with Ansible's own parser, so group_vars apply exactly as in a run."""
    if not path.exists():
        raise CommandError(f"inventory {path} not found: pass --inventory")
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader
    from ansible.vars.manager import VariableManager

    loader = DataLoader()
    inventory = InventoryManager(loader=loader, sources=[str(path)])
    variables = VariableManager(loader=loader, inventory=inventory)
    host_vars: dict[str, dict[str, Any]] = {}
    host_groups: dict[str, list[str]] = {}
    for host in inventory.get_hosts():
        values = variables.get_vars(host=host)
        host_vars[host.name] = {
            k: values.get(k) for k in ("rack", "os_tuning_data_disks", "spark_node_shared_dir")
        }
        host_groups[host.name] = [group.name for group in host.get_groups()]
    if not host_vars:
        raise CommandError(f"inventory {path} has no hosts")
    return parse_hosts(host_vars, host_groups)
