"""The Ansible inventory of a cloud cluster: groups, ids, racks (= zones), data devices, addresses.

The files written here are what `kafkaform check` and the playbooks read: ``hosts.yml`` with the
spec's groups and each host's ids, rack and address, and ``group_vars/all.yml`` with the cluster
settings.

Device names
    Volumes are attached as ``/dev/sdf``, ``/dev/sdg``, ... but the OS names them differently:
    Xen instance families (t2, m4, c4, r4, ...) show ``/dev/xvdf``, Nitro families (m5, m6i, c6g,
    ...) show NVMe devices whose numbering follows discovery order, not the attachment name. The
    inventory therefore records, on Nitro, the stable udev link
    ``/dev/disk/by-id/nvme-Amazon_Elastic_Block_Store_vol<id>`` (the EBS volume id is the NVMe
    serial number), and on Xen the ``/dev/xvdX`` name; both survive reboots and re-attachment.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .. import model
from ..cloud.placement import Host
from ..cloud.spec import VOLUME_PURPOSES, Spec

#: Instance families on the Xen hypervisor: EBS volumes appear as /dev/xvdX there.
XEN_FAMILIES = frozenset({"t1", "t2", "m1", "m2", "m3", "m4", "c1", "c3", "c4", "r3", "r4", "i2",
                          "i3", "d2", "x1", "x1e", "p2", "p3", "g2", "g3", "h1", "f1", "cc2",
                          "cr1", "hs1"})

#: Mount point of a data volume, by purpose and index (as inventory/lab does).
MOUNTS = {model.ZOOKEEPER_TXN_LOG: "/var/lib/zookeeper/txnlog",
          model.KAFKA_LOG_DIR: "/var/lib/kafka/data{index}"}


class _Dumper(yaml.SafeDumper):
    """YAML with lists indented under their key, as yamllint's default config wants."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def dump(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False)


@dataclass(frozen=True)
class DataVolume:
    """One planned data volume of a host: its ``kafkaform:id``, attachment name and settings."""

    id: str
    host: str
    index: int
    attach_device: str
    purpose: str
    mount: str
    type: str
    size_gb: int
    iops: int | None
    throughput_mbps: int | None


def attach_device(index: int) -> str:
    """The name a volume is attached under: /dev/sdf, /dev/sdg, ... (AWS's recommended range)."""
    return "/dev/sd" + chr(ord("f") + index)


def os_device(instance_type: str, attach: str, volume_id: str | None) -> str | None:
    """The block device the host's OS sees for a volume (see the module's note on names)."""
    family = instance_type.split(".", 1)[0]
    if family in XEN_FAMILIES:
        return "/dev/xvd" + attach.removeprefix("/dev/sd")
    if volume_id is None:
        return None
    return "/dev/disk/by-id/nvme-Amazon_Elastic_Block_Store_" + volume_id.replace("-", "")


def volumes(spec: Spec, host: Host) -> list[DataVolume]:
    """The data volumes of ``host`` in attachment order."""
    group = spec.group(host.group)
    purpose = VOLUME_PURPOSES.get(host.group)
    if group is None or purpose is None:
        return []
    planned = []
    index = 0
    for volume in group.volumes:
        for _copy in range(volume.count):
            planned.append(DataVolume(
                id=f"{host.name}-data{index}", host=host.name, index=index,
                attach_device=attach_device(index), purpose=purpose,
                mount=MOUNTS[purpose].format(index=index), type=volume.type,
                size_gb=volume.size_gb, iops=volume.iops, throughput_mbps=volume.throughput_mbps))
            index += 1
    return planned


def host_vars(spec: Spec, host: Host, address: str | None,
              volume_ids: Mapping[str, str]) -> dict[str, Any]:
    """The inventory variables of one host; ``volume_ids`` maps volume ``kafkaform:id`` to id."""
    data: dict[str, Any] = {}
    if address is not None:
        data["ansible_host"] = address
    if host.zookeeper_id is not None:
        data["zookeeper_id"] = host.zookeeper_id
    if host.kafka_broker_id is not None:
        data["kafka_broker_id"] = host.kafka_broker_id
    if host.kafka_node_id is not None:
        data["kafka_node_id"] = host.kafka_node_id
    data["rack"] = host.zone
    disks = [{"device": os_device(host.instance_type, v.attach_device, volume_ids.get(v.id))
              or v.attach_device, "mount": v.mount, "purpose": v.purpose}
             for v in volumes(spec, host)]
    if disks:
        data["os_tuning_data_disks"] = disks
    return data


#: The instance tags that carry what the inventory needs of a host (``up`` writes them), so an
#: ``amazon.aws.aws_ec2`` inventory yields the same hosts, groups and variables.
ID_TAGS = ("zookeeper_id", "kafka_broker_id", "kafka_node_id")
TAG_PREFIX = "kafkaform:"
DISK_TAG = "kafkaform:disk"


def instance_tags(spec: Spec, host: Host, volume_ids: Mapping[str, str]) -> dict[str, str]:
    """The inventory's tags of one instance: its ids, and one tag per data disk (a tag value
    holds 256 characters: a whole list of NVMe device names would not fit in one)."""
    data = host_vars(spec, host, None, volume_ids)
    tags = {f"{TAG_PREFIX}{key}": str(data[key]) for key in ID_TAGS if key in data}
    for index, disk in enumerate(data.get("os_tuning_data_disks", [])):
        tags[f"{DISK_TAG}{index:02d}"] = json.dumps(disk, separators=(",", ":"), sort_keys=True)
    return tags


def is_inventory_tag(key: str) -> bool:
    return key.startswith(DISK_TAG) or key in {f"{TAG_PREFIX}{k}" for k in ID_TAGS}


#: The aws_ec2 plugin's Jinja for each host variable ``host_vars`` writes; an expression that
#: does not apply to a host (no such tag) leaves the variable out, as ``strict: false`` says.
AWS_EC2_COMPOSE = {
    "ansible_host": "private_ip_address",
    "rack": "placement.availability_zone",
    "zookeeper_id": "tags['kafkaform:zookeeper_id'] | int",
    "kafka_broker_id": "tags['kafkaform:kafka_broker_id'] | int",
    "kafka_node_id": "tags['kafkaform:kafka_node_id'] | int",
    "os_tuning_data_disks": (
        "tags | dict2items | selectattr('key', 'match', 'kafkaform:disk[0-9]+$') "
        "| sort(attribute='key') | map(attribute='value') | map('from_json') | list "
        "if 'kafkaform:disk00' in tags else tags['kafkaform:disk00']"),
}


def aws_ec2_config(spec: Spec) -> dict[str, Any]:
    """An ``amazon.aws.aws_ec2`` inventory configuration that yields the hosts, groups and host
    variables of ``hosts.yml`` from the instances' tags (group_vars/all.yml beside it)."""
    return {
        "plugin": "amazon.aws.aws_ec2",
        "regions": [spec.region],
        "filters": {f"tag:{TAG_PREFIX}cluster": spec.name,
                    "instance-state-name": ["pending", "running", "stopping", "stopped"]},
        "hostnames": [f"tag:{TAG_PREFIX}id"],
        "keyed_groups": [{"key": f"tags['{TAG_PREFIX}role']", "prefix": "", "separator": ""}],
        "compose": dict(AWS_EC2_COMPOSE),
        "strict": False,
    }


def cluster_vars(spec: Spec) -> dict[str, Any]:
    """group_vars/all: the cluster's name, its settings from the spec, and the SSH user."""
    data: dict[str, Any] = {"kafka_cluster_name": spec.name, "ansible_user": spec.ssh_user}
    data.update(spec.settings)
    return data


def view(spec: Spec, hosts: Sequence[Host], addresses: Mapping[str, str],
         volume_ids: Mapping[str, str] | None = None) -> model.InventoryView:
    """The inventory as the model and the preflight read it (group_vars merged into each host)."""
    groups: dict[str, list[str]] = {}
    hostvars: dict[str, dict[str, Any]] = {}
    for host in hosts:
        groups.setdefault(host.group, []).append(host.name)
        hostvars[host.name] = {**cluster_vars(spec),
                               **host_vars(spec, host, addresses.get(host.name),
                                           volume_ids or {})}
    return model.InventoryView(groups=groups, hostvars=hostvars)


#: The file name of the dynamic inventory (the aws_ec2 plugin takes files ending in aws_ec2.yml).
AWS_EC2_FILE = "kafkaform.aws_ec2.yml"


def write(directory: Path, spec: Spec, hosts: Sequence[Host], addresses: Mapping[str, str],
          volume_ids: Mapping[str, str], *, dynamic: bool = False) -> list[Path]:
    """Write ``hosts.yml`` (or, ``dynamic``, the aws_ec2 configuration that finds the same hosts
    by their tags) and ``group_vars/all.yml`` under ``directory``; returns the paths."""
    header = (f"# Written by `kafkaform cloud inventory` for cluster {spec.name} ({spec.region}).\n"
              "# Rewritten on every run: edit the spec, not this file.\n")
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "group_vars").mkdir(exist_ok=True)
    if dynamic:
        hosts_file = directory / AWS_EC2_FILE
        content = dump(aws_ec2_config(spec))
    else:
        children: dict[str, Any] = {}
        for host in hosts:
            group = children.setdefault(host.group, {"hosts": {}})
            group["hosts"][host.name] = host_vars(spec, host, addresses.get(host.name),
                                                  volume_ids)
        hosts_file = directory / "hosts.yml"
        content = dump({"all": {"children": children}})
    # The other form of the inventory would list every host twice.
    (directory / ("hosts.yml" if dynamic else AWS_EC2_FILE)).unlink(missing_ok=True)
    all_file = directory / "group_vars" / "all.yml"
    hosts_file.write_text("---\n" + header + content, encoding="utf-8")
    all_file.write_text("---\n" + header + dump(cluster_vars(spec)), encoding="utf-8")
    return [hosts_file, all_file]
