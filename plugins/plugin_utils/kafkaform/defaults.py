"""Default values, each written once.

Cluster-wide settings live here because no single role owns them. Every other default lives in
its role's ``defaults/main.yml`` (the roles' documentation) and is read from there, so Python and
Ansible can never disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import yaml

from .paths import role_dir

#: Cluster-wide settings, set once in the inventory's group_vars/all.
CLUSTER_DEFAULTS: dict[str, Any] = {
    # Names the cluster; the ZooKeeper chroot and cloud tags derive from it.
    "kafka_cluster_name": "kafka",
    # ZooKeeper chroot of the cluster's metadata; empty means /kafka/<kafka_cluster_name>. KB-05
    "kafka_zookeeper_chroot": "",
    # Replicas of every new topic. TR-01
    "kafka_default_replication_factor": 3,
    # Replicas that must acknowledge an acks=all write; below RF so one broker may be down. TR-02
    "kafka_min_insync_replicas": 2,
    # Development only: allow a single ZooKeeper member (no fault tolerance at all). ZK-06
    "kafkaform_allow_single_zookeeper": False,
    # Allow more than 7 ZooKeeper members (write latency grows with every member). ZK-06
    "kafkaform_allow_large_ensemble": False,
}

#: Roles whose defaults the model reads, by variable prefix (longest prefix first).
ROLE_PREFIXES = ("kafka_broker", "zookeeper", "os_tuning", "spark_node", "spark_pipeline")


@cache
def role_defaults(role: str) -> dict[str, Any]:
    """A role's ``defaults/main.yml`` as plain data."""
    path = role_dir(role) / "defaults" / "main.yml"
    with path.open(encoding="utf-8") as handle:
        data = yaml.safe_load(handle) or {}
    if not isinstance(data, dict):
        raise RuntimeError(f"{path}: expected a mapping of variables")
    return data


def role_default(key: str) -> Any:
    """The default of a cluster setting or of a role variable (found by its role prefix)."""
    if key in CLUSTER_DEFAULTS:
        return CLUSTER_DEFAULTS[key]
    for role in ROLE_PREFIXES:
        if key.startswith(role + "_"):
            return role_defaults(role)[key]
    raise KeyError(f"{key} is neither a cluster setting nor a variable of {ROLE_PREFIXES}")


def setting(settings: Mapping[str, Any], key: str) -> Any:
    """A role variable from the settings a role hands its context, else the role's default."""
    value = settings.get(key)
    return role_default(key) if value is None else value
