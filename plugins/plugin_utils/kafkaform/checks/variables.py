"""The inventory's variables: one value for cluster settings, each role's own input checks,
types, formats, line breaks, JVM options and unknown names."""

from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .. import acls, formats, inputs, model, secrets, topics
from ..contexts import kafka_broker, spark_node, spark_pipeline, zookeeper
from ..defaults import (
    CLUSTER_DEFAULTS,
    INPUT_PREFIXES,
    INVENTORY_ROLES,
    OTHER_INPUTS,
    known_inputs,
    role_options,
)
from ..model import InventoryView
from ..rules import ID_PATTERN, cite
from .finding import Finding


def cluster_settings_agree(view: InventoryView) -> Iterator[Finding]:
    """Cluster-wide settings must have one value: the model reads them from any host."""
    for key in CLUSTER_DEFAULTS:
        values: dict[str, list[str]] = defaultdict(list)
        for host in view.cluster_hosts():
            value = view.var(host, key)
            if value is not None:
                values[repr(value)].append(host)
        if len(values) > 1:
            shown = "; ".join(f"{v} on {', '.join(h[:3])}" for v, h in values.items())
            yield Finding(cite("KF-01"), f"{key} differs between hosts ({shown})",
                          f"set {key} once, in group_vars/all")


#: Each role's check of its own inputs, by the group whose hosts run the role. The contexts refuse
#: to render with the same problems; the preflight reports them before any host is touched.
ROLE_INPUT_CHECKS: tuple[tuple[str, str, Callable[[dict[str, Any]], list[str]]], ...] = (
    ("zookeeper", model.ZOOKEEPER, zookeeper.settings_problems),
    ("kafka_broker", model.KAFKA_BROKER, kafka_broker.settings_problems),
    ("spark_node", model.SPARK_MASTER, spark_node.settings_problems),
    ("spark_node", model.SPARK_WORKER, spark_node.settings_problems),
    ("spark_pipeline", model.SPARK_MASTER, spark_pipeline.settings_problems),
)


def host_inputs(view: InventoryView, role: str, host: str) -> dict[str, Any]:
    """The inputs of ``role`` the inventory sets for ``host``; the role's defaults fill the rest."""
    # `in` first: it reads the raw variables, where a lookup would template each one.
    variables = view.variables(host)
    found = {}
    for name in role_options(role):
        if name in variables and (value := variables.get(name)) is not None:
            typed = inputs.role_input(role, name, value)
            if not typed.problems:  # input_types reports the others; the default stands in
                found[name] = typed.value
    return found


def role_inputs(view: InventoryView) -> Iterator[Finding]:
    """Every role's own input checks, on every host of its group, one finding per problem."""
    hosts_by_problem: dict[tuple[str, str], list[str]] = defaultdict(list)
    for role, group, problems_of in ROLE_INPUT_CHECKS:
        for host in view.members(group):
            for problem in problems_of(host_inputs(view, role, host)):
                if host not in hosts_by_problem[role, problem]:
                    hosts_by_problem[role, problem].append(host)
    for broker in view.members(model.KAFKA_BROKER)[:1]:  # kafka_topics is one cluster setting
        declared = [
            *topics.declared_problems(view.var(broker, "kafka_topics", []) or []),
            *acls.user_problems(view.var(broker, "kafka_users", []) or []),
            *acls.acl_problems(view.var(broker, "kafka_acls", []) or []),
            *(f"{problem} ({cite('SE-06')})"
              for problem in secrets.given_problems(view.var(broker, "kafkaform_secrets"))),
        ]
        for problem in declared:
            hosts_by_problem["kafka_broker", problem] = view.members(model.KAFKA_BROKER)
    for (role, problem), hosts in hosts_by_problem.items():
        cited = ID_PATTERN.search(problem)
        yield Finding(cited[0] if cited else cite("KF-02"), problem,
                      f"change it in the inventory (roles/{role}/README.md lists the role's "
                      "inputs)", tuple(hosts))


def role_hosts(view: InventoryView, role: str) -> list[str]:
    """The hosts that run ``role``, and so read its inputs."""
    groups = ROLE_GROUPS.get(role)
    if groups is None:
        return view.cluster_hosts()
    return list(dict.fromkeys(host for group in groups for host in view.members(group)))


#: Groups whose hosts run each role; a role not listed runs on every cluster host.
ROLE_GROUPS: dict[str, tuple[str, ...]] = {
    "zookeeper": (model.ZOOKEEPER,),
    "kafka_broker": (model.KAFKA_BROKER,),
    "spark_node": (model.SPARK_MASTER, model.SPARK_WORKER),
    "spark_pipeline": (model.SPARK_MASTER,),
}


def _grouped(problems: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """``(host, problem)`` pairs as problem → hosts, so a group_vars mistake is one finding."""
    hosts_by_problem: dict[str, list[str]] = defaultdict(list)
    for host, problem in problems:
        if host not in hosts_by_problem[problem]:
            hosts_by_problem[problem].append(host)
    return hosts_by_problem


#: Inputs whose own rules check their types with the rest of their values.
CHECKED_ELSEWHERE = OTHER_INPUTS | {"os_tuning_data_disks"}


def _type_problems(view: InventoryView) -> Iterator[tuple[str, str, str]]:
    """``(role, host, problem)`` for every input whose value its declared type refuses."""
    for role in INVENTORY_ROLES:
        names = [name for name in role_options(role) if name not in CHECKED_ELSEWHERE]
        for host in role_hosts(view, role):
            variables = view.variables(host)
            for name in names:
                if name in variables and (value := variables.get(name)) is not None:
                    for problem in inputs.role_input(role, name, value).problems:
                        yield role, host, problem
    for host in view.cluster_hosts():
        variables = view.variables(host)
        for name in CLUSTER_DEFAULTS:
            if name in variables and (value := variables.get(name)) is not None:
                for problem in inputs.cluster_setting(name, value):
                    yield "cluster", host, problem


def input_types(view: InventoryView) -> Iterator[Finding]:
    """Every input has the type its role's argument spec declares (the check the role itself
    runs on a host when it starts), cluster settings the type of their default."""
    roles: dict[str, str] = {}
    pairs = []
    for role, host, problem in _type_problems(view):
        roles[problem] = role
        pairs.append((host, problem))
    for problem, hosts in _grouped(pairs).items():
        role = roles[problem]
        where = ("plugins/plugin_utils/kafkaform/defaults.py (cluster settings)"
                 if role == "cluster" else f"roles/{role}/README.md")
        yield Finding(cite("KF-02"), problem, f"give it the type {where} lists", tuple(hosts))


def input_formats(view: InventoryView) -> Iterator[Finding]:
    """Every string input a service or the OS parses is in that reader's syntax: Prometheus's
    durations and sizes, absolute paths, account names, addresses (kafkaform.formats)."""
    pairs = []
    for role in INVENTORY_ROLES:
        names = [name for name, spec in role_options(role).items()
                 if spec.get("type", "str") in ("str", "path") and formats.format_of(name)]
        for host in role_hosts(view, role):
            variables = view.variables(host)
            pairs += [(host, problem) for name in names if name in variables
                      if (problem := formats.problem(name, variables.get(name)))]
    for problem, hosts in _grouped(pairs).items():
        yield Finding(cite("KF-02"), problem, "write it in that syntax (roles/<role>/README.md "
                      "lists each input)", tuple(hosts))


#: Per-host variables the templates render besides the inputs: rack and address.
RENDERED_HOST_VARS = ("rack", "ansible_host")


def line_breaks(view: InventoryView) -> Iterator[Finding]:
    """No rendered value holds a line break of any kind: each lands on one line of a config
    file, a unit or a command line, and a break there would add or cut a setting."""
    known = known_inputs()
    pairs = []
    for host in view.cluster_hosts():
        variables = view.variables(host)
        for name in variables:
            if name in known or name in RENDERED_HOST_VARS:
                value = variables.get(name)
                pairs += [(host, problem) for problem in inputs.line_breaks(name, value)]
    for problem, hosts in _grouped(pairs).items():
        yield Finding(cite("KF-02"), problem, "write the value on one line (in YAML, a quoted "
                      "string or a folded scalar '>-')", tuple(hosts))


#: The extra JVM options of each role that runs a JVM: (role, variable).
JVM_OPTION_INPUTS = (("zookeeper", "zookeeper_jvm_extra_opts"),
                     ("kafka_broker", "kafka_broker_jvm_extra_opts"))


def jvm_options(view: InventoryView) -> Iterator[Finding]:
    """No extra JVM option opens a debugger or JMX to the network (JV-04, SE-05)."""
    pairs = []
    for role, name in JVM_OPTION_INPUTS:
        for host in role_hosts(view, role):
            pairs += [(host, p) for p in inputs.exposing_jvm_options(name, view.var(host, name))]
    for host in role_hosts(view, "spark_node"):
        extra = view.var(host, "spark_node_defaults_extra", {})
        for key, value in (extra.items() if isinstance(extra, dict) else ()):
            if str(key).endswith("JavaOptions"):  # extra ones are the role's, default ones not
                pairs += [(host, p) for p in inputs.exposing_jvm_options(
                    f"spark_node_defaults_extra[{key}]", str(value))]
    for problem, hosts in _grouped(pairs).items():
        yield Finding(cite("JV-04"), problem, "remove it; for JMX set kafka_broker_jmx_enabled "
                      "with kafka_broker_jmx_password (TLS and a password), and debug a copy of "
                      "the service, never a cluster member", tuple(hosts))


def unknown_variables(view: InventoryView) -> Iterator[Finding]:
    """A variable with one of kafkaform's prefixes that nothing reads is a misspelling until the
    inventory says otherwise (kafkaform_other_variables): the role would silently fall back to
    the default the operator meant to change."""
    hosts_by_name: dict[str, list[str]] = defaultdict(list)
    known = known_inputs()
    others = view.cluster_var("kafkaform_other_variables")
    allowed = known | set(others if isinstance(others, list) else ())
    for host in view.cluster_hosts():
        for name in view.variables(host):
            if name.startswith(INPUT_PREFIXES) and name not in allowed:
                hosts_by_name[name].append(host)
    for name, hosts in sorted(hosts_by_name.items()):
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
        rename = f"rename it to {close[0]}, the closest input" if close else "rename it"
        yield Finding(cite("KF-03"), f"{name} is not a variable kafkaform reads",
                      f"{rename}, remove it, or list it in kafkaform_other_variables if other "
                      f"tooling reads it", tuple(hosts))
