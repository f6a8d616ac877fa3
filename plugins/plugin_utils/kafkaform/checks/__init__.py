"""The preflight: every rule the inventory must satisfy before any host is touched.

Each rule returns findings, never raises; :func:`check` runs them all so an operator sees every
problem at once. A finding names the host(s), the rule, what is wrong and how to fix it. The rules
live in this package's modules by what they look at; this one runs them in their order.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..model import InventoryView
from .finding import Finding, Rule, Severity
from .kafka_settings import (
    kafka_release_mode,
    kraft_migration_state,
    quorum_kind,
    replication,
    security_migration,
    topic_replication,
    zookeeper_session_fits,
    zookeeper_tls_migration,
)
from .os_tuning import data_disk_declarations, kernel_settings, sysctl_settings
from .ports import host_ports, listener_ports
from .releases import controllers_first, feature_levels, release_catalog
from .spark import (
    pipeline_executor_fits,
    pipeline_sources,
    spark_needs_master,
    spark_shared_dir,
    spark_single_master,
)
from .topology import (
    broker_ids,
    brokers_span_racks,
    combined_mode,
    controller_ids,
    controller_quorum_size,
    controller_racks,
    controllers_installed,
    dedicated_hosts,
    ensemble_size,
    no_rack_majority,
    racks_all_or_none,
    zookeeper_ids,
)
from .variables import (
    cluster_settings_agree,
    host_inputs,
    input_formats,
    input_types,
    jvm_options,
    line_breaks,
    role_inputs,
    unknown_variables,
)

# What callers import from here: the findings, and the inputs and kernel settings a host gets.
__all__ = ["RULES", "Finding", "Rule", "Severity", "check", "errors", "host_inputs", "role_inputs",
           "sysctl_settings"]

RULES: tuple[Rule, ...] = (
    ensemble_size,
    zookeeper_ids,
    broker_ids,
    racks_all_or_none,
    no_rack_majority,
    controller_quorum_size,
    controller_ids,
    controller_racks,
    combined_mode,
    controllers_installed,
    kraft_migration_state,
    quorum_kind,
    kafka_release_mode,
    release_catalog,
    controllers_first,
    feature_levels,
    brokers_span_racks,
    replication,
    spark_needs_master,
    spark_single_master,
    spark_shared_dir,
    pipeline_sources,
    pipeline_executor_fits,
    cluster_settings_agree,
    listener_ports,
    security_migration,
    zookeeper_tls_migration,
    kernel_settings,
    zookeeper_session_fits,
    data_disk_declarations,
    dedicated_hosts,
    role_inputs,
    input_formats,
    unknown_variables,
    line_breaks,
    jvm_options,
    host_ports,
    topic_replication,
)


def check(view: InventoryView) -> list[Finding]:
    """Every finding of every rule, errors first, in a stable order.

    The types come first: a rule that reads a value of the wrong type may fail on it, and then
    adds nothing to the finding that already names that value.
    """
    typed = list(input_types(view))
    findings = list(typed)
    for rule in RULES:
        try:
            findings += rule(view)
        except (TypeError, ValueError):
            if not typed:
                raise  # with every input well typed, a failing rule is a bug to report
    return sorted(findings, key=lambda f: f.severity != "error")


def errors(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error"]
