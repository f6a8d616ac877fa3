"""Default values, each written once, and a role's inputs assembled one way.

Cluster-wide settings live here because no single role owns them. Every other default lives in
its role's ``defaults/main.yml`` (the roles' documentation) and is read from there, so Python and
Ansible can never disagree. :func:`assemble` gives a role's inputs as the role reads them, for
the ``role_settings`` lookup and the pyinfra deploys alike; :func:`setting` reads one (for the
contexts and verify), falling back to its default templated the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from .paths import load_collections, role_dir

#: libyaml's safe loader when PyYAML has it (ten times faster), else the pure Python one.
SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: Cluster-wide settings, set once in the inventory's group_vars/all.
CLUSTER_DEFAULTS: dict[str, Any] = {
    # Names the cluster; the ZooKeeper chroot and cloud tags derive from it.
    "kafka_cluster_name": "kafka",
    # KRaft mode: the id every node's storage is formatted with; empty means one derived from
    # kafka_cluster_name (kafkaform.model.cluster_id). KR-07
    "kafka_cluster_id": "",
    # Where a migration from ZooKeeper to KRaft stands: playbooks/kraft_migration.yml sets it for
    # each phase it runs; set it to finalized in the inventory once the migration is over. KR-09
    "kafka_kraft_migration": "",
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
    # Development only: allow a single KRaft controller (no fault tolerance at all). KR-01
    "kafkaform_allow_single_controller": False,
    # Allow a host to be both a KRaft controller and a broker (combined mode): the broker's load
    # then delays the quorum, so keep it to small and development clusters. KR-04
    "kafka_controller_combined": False,
    # How the KRaft controllers' voters are kept: static (fixed in every node's
    # controller.quorum.voters, for the cluster's life) or dynamic (kept in the metadata log:
    # controllers can then be added, removed and replaced, playbooks/remove_controller.yml).
    # Chosen when the cluster is created; a running quorum keeps its kind. KR-15
    "kafka_controller_quorum": "static",
    # Where the cluster's generated secrets and its CA live on the control node, one directory
    # per cluster (0700). Keep it out of the repository and back it up. kafkaform.secrets
    "kafkaform_secrets_dir": "~/.kafkaform/secrets",
    # true keeps the generated secrets and private keys in that directory in plain text; by
    # default they are sealed with the run's Ansible Vault secret (kafkaform.sealed). SE-16
    "kafkaform_secrets_plaintext": False,
    # Your own CA (PEM certificate and key on the control node) to sign the hosts' certificates;
    # empty means a CA generated once in the secrets directory. SE-02
    "kafkaform_tls_ca_cert": "",
    "kafkaform_tls_ca_key": "",
    # Validity of a generated CA and of each host certificate, days; a host certificate is renewed
    # by the next run once it expires within kafkaform_tls_renew_before_days. SE-02
    "kafkaform_tls_ca_validity_days": 3650,
    "kafkaform_tls_cert_validity_days": 365,
    "kafkaform_tls_renew_before_days": 30,
    # Securing a cluster built open (plaintext listeners, anonymous ZooKeeper), in place, one run
    # per step: plaintext_replication, then tls_replication, then unset. README, "Securing a
    # cluster built open"; kafkaform.security_steps. SE-10
    "kafka_security_migration": "",
    # The plaintext listener such a cluster keeps until the last step: the port its clients use.
    "kafka_plaintext_port": 9092,
    # Moving a ZooKeeper ensemble that runs without TLS onto it, in place, one run per step:
    # offered, then connecting, then unset (an open cluster takes these steps with
    # kafka_security_migration's). kafkaform.security_steps. SE-18
    "kafka_zookeeper_tls_migration": "",
    # Variables with a kafkaform prefix that other tooling in the same inventory reads (say, another
    # role's kafka_exporter_version): the preflight leaves these names alone. KF-03
    "kafkaform_other_variables": [],
}

#: Roles whose defaults the model reads, by variable prefix (longest prefix first).
ROLE_PREFIXES = ("kafka_controller", "kafka_broker", "zookeeper", "os_tuning", "spark_node",
                 "spark_pipeline", "monitoring")

#: Inventory and run inputs that are neither cluster settings nor role inputs: the model's per-host
#: keys and the playbooks' own switches.
OTHER_INPUTS = frozenset({
    "zookeeper_id", "kafka_broker_id", "kafka_node_id", "kafka_topics", "kafka_users", "kafka_acls",
    "kafkaform_secrets", "kafkaform_apache_mirror_url", "kafkaform_tls_rotation",
})

#: Prefixes of the variables kafkaform reads; an unknown name with one of them is an error (KF-03).
INPUT_PREFIXES = ("kafkaform_", "kafka_", "zookeeper_", "os_tuning_", "spark_node_",
                  "spark_pipeline_", "monitoring_")

#: Every role whose inputs an inventory may set (the internal roles take theirs from the others).
INVENTORY_ROLES = (*ROLE_PREFIXES, "artifact")


@cache
def known_inputs() -> frozenset[str]:
    """Every variable name an inventory or a run may give kafkaform."""
    return frozenset({*CLUSTER_DEFAULTS, *OTHER_INPUTS,
                      *(name for role in INVENTORY_ROLES for name in run_options(role))})


def _load_mapping(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as handle:
        data = yaml.load(handle, Loader=SAFE_LOADER) or {}
    if not isinstance(data, dict):
        raise RuntimeError(f"{path}: expected a mapping")
    return data


@cache
def role_defaults(role: str) -> dict[str, Any]:
    """A role's ``defaults/main.yml`` as plain data."""
    return _load_mapping(role_dir(role) / "defaults" / "main.yml")


@cache
def role_options(role: str) -> dict[str, dict[str, Any]]:
    """A role's inputs, name to spec, as its ``meta/argument_specs.yml`` declares them."""
    path = role_dir(role) / "meta" / "argument_specs.yml"
    options = _load_mapping(path).get("argument_specs", {}).get("main", {}).get("options", {})
    if not isinstance(options, dict):
        raise RuntimeError(f"{path}: argument_specs.main.options is not a mapping")
    return options


def run_options(role: str) -> set[str]:
    """Every input of every entry point of a role: an operation's own (a decommission's hosts)
    is given with -e for one run, never kept in the inventory."""
    path = role_dir(role) / "meta" / "argument_specs.yml"
    points = _load_mapping(path).get("argument_specs", {})
    return {name for point in points.values() for name in (point.get("options") or {})}


@cache  # asked for every setting of every host: a few hundred distinct keys
def _role_of(key: str) -> str | None:
    return next((role for role in ROLE_PREFIXES if key.startswith(role + "_")), None)


def role_default(key: str) -> Any:
    """The default of a cluster setting or of a role variable (found by its role prefix)."""
    if key in CLUSTER_DEFAULTS:
        return CLUSTER_DEFAULTS[key]
    role = _role_of(key)
    if role is not None:
        return role_defaults(role)[key]
    raise KeyError(f"{key} is neither a cluster setting nor a variable of {ROLE_PREFIXES}")


def as_bool(value: Any) -> bool:
    """An inventory boolean as Ansible's ``bool`` filter reads it: YAML true, or yes/on/1/true/y."""
    if isinstance(value, str):
        return value.strip().lower() in ("yes", "on", "1", "true", "y")
    return bool(value)


#: Templates ``names`` of a mapping of variables with all of them, as Ansible would.
Template = Callable[[Mapping[str, Any], Sequence[str]], dict[str, Any]]


def ansible_template(variables: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """``names`` of ``variables``, templated by Ansible with all of ``variables``: a default such
    as ``"{{ 'zookeeper' | kafkaform.platform.release_version }}"`` or ``"{{ kafka_users |
    default([]) }}"`` becomes what the role reads (the collection's filters load through
    Ansible's collection loader). Ansible is imported here: the model stays importable without
    it."""
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar

    load_collections()
    known = trusted(variables)
    templar = Templar(loader=DataLoader(), variables=known)
    return {name: templar.template(known[name]) for name in names if name in known}


def trusted(variables: Mapping[str, Any]) -> dict[str, Any]:
    """``variables`` with each text marked a template Ansible may render: the roles' defaults
    and an inventory's values are the operator's and kafkaform's own, never a host's."""
    from ansible.template import trust_as_template

    return {name: trust_as_template(value) if isinstance(value, str) else value
            for name, value in variables.items()}


def is_role(term: str) -> bool:
    """Whether ``term`` names a role of the collection (one with an argument spec)."""
    return (role_dir(term) / "meta" / "argument_specs.yml").is_file()


def input_names(terms: Sequence[str]) -> list[str]:
    """The variable names ``terms`` stand for: a role's declared inputs, or the name itself."""
    names: list[str] = []
    for term in terms:
        names.extend(role_options(term) if is_role(term) else [term])
    return names


def assemble(terms: Sequence[str], variables: Mapping[str, Any],
             template: Template = ansible_template) -> dict[str, Any]:
    """The inputs ``terms`` name (roles, whose declared inputs they stand for, or variables), as
    the roles read them: from ``variables`` (a host's, or a task's), else the roles' defaults,
    each one given or defaulted, templated with all of them. The one assembler of a role's
    inputs: the ``role_settings`` lookup (with the task's own templar) and the deploys; verify
    and the contexts read an input they were not handed through :func:`setting`, which templates
    its default the same way."""
    every = {**{key: value for term in terms if is_role(term)
                for key, value in role_defaults(term).items()}, **variables}
    return template(every, [name for name in input_names(terms) if name in every])


def setting(settings: Mapping[str, Any], key: str) -> Any:
    """A role variable from the settings a role hands its context, else the role's default.

    A variable its role's argument spec types ``bool`` comes back as a bool: an inventory may
    write "false", which Python would take for true.
    """
    value = settings.get(key)
    role = _role_of(key)
    if value is None:
        value = role_default(key)
        if isinstance(value, str) and "{{" in value:  # templated as the role would
            value = ansible_template({**(role_defaults(role) if role else {}), **settings,
                                      key: value}, [key])[key]
    if role is not None and role_options(role).get(key, {}).get("type") == "bool":
        return as_bool(value)
    return value
