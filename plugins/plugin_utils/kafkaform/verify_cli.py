"""`kafkaform verify -i INVENTORY`: the testinfra checks shipped in kafkaform.verify, on live hosts.

Every host is reached through the inventory's own connection: `podman exec` for podman hosts
(their ansible_host, else their name, is the container), else Ansible's (SSH, local, ...). What
the checks expect comes from the kafkaform model of the whole inventory, also under --limit.

checks     os_tuning     sysctl, limits and data disks of the zookeeper and kafka_broker members
           zookeeper     a serving quorum, ids, config files, a znode read back everywhere
           kafka_broker  registrations and racks, healthy partitions, produce and consume
           spark         daemons, workers on the master, the pipeline running
           pipeline      500 events produced now land exactly once (the one check that writes)
           monitoring    exporters on the cluster address only, Prometheus scraping every
                         target of the model, Alertmanager ready
           control_node  the secrets directory on this machine: every secret and private
                         key sealed with Ansible Vault, readable by its owner only
           tls           every TLS port, scanned from a host of the cluster: TLS 1.2+ with
                         AEAD suites only

--limit PATTERN (Ansible's host pattern) visits only the matching hosts: the cluster checks check
the matching members of their groups, os_tuning every matching host but Spark-only nodes (a host
in no kafkaform group gets os_tuning only). A check with no host to visit is skipped, never passed.

Exit 0 when every check passed, 1 when one failed (or the inventory breaks a cluster rule: fix it
first, `kafkaform check`), 2 on usage or input errors: a missing or unusable inventory, a --limit
matching no host, a run that checked nothing because every check was skipped.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import ansible_child, checks, inventory, model
from .cli import EXIT_BUG, InputError

if TYPE_CHECKING:
    import pytest

#: The check modules under kafkaform/verify, by the name --checks takes.
CHECKS = {
    "os_tuning": "test_os_tuning.py",
    "zookeeper": "test_zookeeper.py",
    "kafka_broker": "test_kafka_broker.py",
    "spark": "test_spark.py",
    "pipeline": "test_pipeline.py",
    "monitoring": "test_monitoring.py",
    "control_node": "test_control_node.py",
    "tls": "test_tls.py",
}
VERIFY_DIR = Path(__file__).resolve().parent / "verify"

#: The groups playbooks/os_tuning.yml tunes.
TUNED_GROUPS = (model.ZOOKEEPER, model.KAFKA_BROKER)


def check_names(value: str) -> list[str]:
    """--checks: a comma-separated subset of CHECKS."""
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in CHECKS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown check(s) {', '.join(unknown) or repr(value)}; choose from "
            f"{', '.join(CHECKS)}")
    return names


def add_commands(commands: Any) -> None:
    parser = commands.add_parser(
        "verify", help="run the testinfra checks against an inventory's live hosts",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    inventory.add_arguments(parser)
    parser.add_argument("--limit", metavar="PATTERN",
                        help="visit only the hosts matching this Ansible host pattern")
    parser.add_argument("--checks", type=check_names, default=list(CHECKS),
                        metavar="NAME[,NAME...]",
                        help=f"run only these checks (default: all of {', '.join(CHECKS)})")
    parser.add_argument("--junit-xml", metavar="FILE", help="write a JUnit XML report for CI")
    parser.set_defaults(handler=run)


def reach(name: str, variables: Mapping[str, Any]) -> str:
    """testinfra's host spec for an inventory host."""
    if variables.get("ansible_connection") in inventory.PODMAN_CONNECTIONS:
        return f"podman://{variables.get('ansible_host') or name}"
    return f"ansible://{name}"


def plan(view: model.InventoryView, matched: list[str],
         limit: str | None) -> tuple[list[str], list[str]]:
    """The hosts the run visits and, among them, those os_tuning checks."""
    tuned = {host for group in TUNED_GROUPS for host in view.members(group)}
    if limit is None:
        visit = view.cluster_hosts()
        tuned_hosts = [host for host in visit if host in tuned]
        visit += [host for host in view.members(model.MONITORING) if host not in visit]
        return visit, tuned_hosts
    cluster = set(view.cluster_hosts())
    return matched, [host for host in matched if host in tuned or host not in cluster]


class InventoryPlugin:
    """The inventory as this command read it (vault secrets included), for the checks'
    conftest: they never read it again another way."""

    def __init__(self, view: model.InventoryView) -> None:
        self.kafkaform_view = view


class Outcomes:
    """A pytest plugin counting what the checks did: a run of skips alone checked nothing."""

    def __init__(self) -> None:
        self.passed = 0
        self.interrupted = False

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" and report.passed:
            self.passed += 1

    def pytest_keyboard_interrupt(self) -> None:
        self.interrupted = True


def run(args: argparse.Namespace) -> int:
    sources = inventory.Sources.from_args(args)
    source = str(sources)
    if ansible_child.asks_at_prompt(sources):
        # Said before the prompt: a secret typed once cannot be handed to each of them.
        raise InputError("kafkaform verify cannot use a vault secret typed at a prompt "
                         "(--ask-vault-pass, --vault-id LABEL@prompt): its checks run Ansible "
                         "once per host and check. Fix: give the secret as a file readable only "
                         "by you, or a script that prints it: --vault-id LABEL@FILE or "
                         "--vault-password-file FILE")
    view, matched = inventory.select(sources, args.limit)
    if args.limit is None:
        inventory.require_cluster(view, source)
    elif not matched:
        raise InputError(f"no host of {source} matches --limit {args.limit!r}. Fix: pass a host "
                         f"pattern of that inventory (`ansible-inventory -i {source} --graph` "
                         "lists its groups and hosts)")
    # The checks' expectations come from the model, which only means something for an
    # inventory the preflight accepts.
    errors = checks.errors(checks.check(view))
    for finding in errors:
        print(finding.text(), file=sys.stderr)
    if errors:
        print(f"kafkaform verify: {source} breaks the cluster rules above; fix it first "
              f"(`kafkaform check -i {source}`)", file=sys.stderr)
        return 1

    visit, tuned = plan(view, matched, args.limit)
    argv = ["-p", "no:cacheprovider", "-q", "-rfEs", f"--rootdir={VERIFY_DIR}",
            f"--kafkaform-hosts={','.join(visit)}"]
    # testinfra's ansible backend runs Ansible itself: it gets the same sources and the vault
    # identities given here (several sources go as Ansible's own list of them).
    resolved = sources.resolved()
    if len(resolved) == 1:
        argv.append(f"--ansible-inventory={resolved[0]}")
    else:
        os.environ["ANSIBLE_INVENTORY"] = ",".join(resolved)
    os.environ.update(ansible_child.environment(sources))
    if tuned:
        argv.append("--hosts=" + ",".join(reach(host, view.hostvars.get(host, {}))
                                          for host in tuned))
    if args.junit_xml:
        argv.append(f"--junitxml={args.junit_xml}")
    argv += [str(VERIFY_DIR / CHECKS[name]) for name in args.checks]
    print(f"kafkaform verify: {source}: {', '.join(args.checks)} on {len(visit)} host(s)",
          file=sys.stderr)
    return run_pytest(argv, view)


def run_pytest(argv: list[str], view: model.InventoryView) -> int:
    """Run pytest in this process and map its outcome to kafkaform's exit codes."""
    import pytest

    # testinfra and the checks run ansible-inventory and ansible by name: this environment's.
    bindir = str(Path(sys.executable).parent)
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join(filter(None, (bindir, os.environ.get("PATH"))))
    # The checks live in the installed package: write no bytecode or cache beside them.
    sys.dont_write_bytecode = True
    outcomes = Outcomes()
    code = pytest.main(argv, plugins=[outcomes, InventoryPlugin(view)])
    if outcomes.interrupted:
        return 130
    if code == pytest.ExitCode.OK:
        if outcomes.passed:
            return 0
        print("kafkaform verify: nothing was checked: every check was skipped (reasons above). "
              "Fix: an inventory, --limit or --checks with hosts for the checks", file=sys.stderr)
        return 2
    if code in (pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.INTERRUPTED):
        return 1  # INTERRUPTED without a keyboard interrupt: a check module failed to load
    if code == pytest.ExitCode.INTERNAL_ERROR:
        return EXIT_BUG
    return 2
