"""`kafkaform status -i INVENTORY`: is the platform healthy right now, read live from its hosts.

Kafka (the active controller, under-replicated, under-min-ISR and offline partitions, each
broker's registration, rack, leaders, replicas and log directories' use), the ZooKeeper ensemble
(each member's mode) or the KRaft quorum (leader, voters, lag), the certificates the roles
deploy (days to expiry), the pipeline (its unit, last committed batch, records behind) and the
alerts Prometheus has firing. One section a part, its unhealthy lines marked and first.

Every host is asked through Ansible, with the inventory's connection, vault options and access
(one ad-hoc call, all hosts at once), by the hosts' own tools: the brokers' admin helper
(kafkaform-kafka status), ZooKeeper's four-letter-word probe, curl with the monitoring host's
certificate. No listener of the cluster is opened to the control node.

Exit 0 when healthy, 1 when anything is unhealthy (a host Ansible cannot reach included, named),
2 on usage or input errors (an unusable inventory). --watch SECONDS reads again every SECONDS
until interrupted (exit 130).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from datetime import UTC, datetime
from typing import Any

from . import inventory, model, status_collect, status_judge, status_probe
from .cli import InputError

#: Seconds a read may take before the command says on stderr what it is doing.
QUIET_S = 2.0
CLEAR = "\033[H\033[2J"


def now() -> datetime:
    """When a read happened: certificates' days left count from it."""
    return datetime.now(UTC)


#: How a line is marked, by its rank (status_judge.Line.rank): unhealthy, unknown, healthy.
MARKS = ("  !!  ", "  ??  ", "  ok  ")


def positive(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = 0.0
    if number <= 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, got {value!r}")
    return number


def add_commands(commands: Any) -> None:
    parser = commands.add_parser(
        "status", help="is the cluster healthy right now: Kafka, ZooKeeper or the KRaft quorum, "
        "certificates, the pipeline and Prometheus's alerts, read live through Ansible",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    inventory.add_arguments(parser)
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--watch", type=positive, metavar="SECONDS",
                        help="read and redraw every SECONDS until interrupted (Ctrl-C)")
    parser.add_argument("--pipeline-stale", type=positive, metavar="SECONDS",
                        default=status_judge.PIPELINE_STALE_S,
                        help="the pipeline is unhealthy when its driver has not reported, or "
                        "no batch was committed while records wait, for longer (default: "
                        f"{status_judge.PIPELINE_STALE_S:.0f}, the PipelineStalled alert's)")
    parser.set_defaults(handler=run)


class Status:
    """One inventory's status, read as often as asked."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.sources = inventory.Sources.from_args(args)
        if self.sources.ask_vault_pass:
            raise InputError("--ask-vault-pass: status runs Ansible without a terminal to prompt "
                             "on. Fix: pass --vault-password-file FILE or --vault-id "
                             "[LABEL@]FILE")
        self.view = inventory.load(self.sources)  # InputError: main() prints it, exits 2
        from .pki.settings import read_settings  # cryptography: see status_collect.certificate

        try:
            self.cluster = model.build(self.view).to_dict()
            first = self.view.cluster_hosts()[0]
            self.renew_days = read_settings(self.view.variables(first)).renew_days
        except ValueError as error:
            raise InputError(f"{self.sources}: {error}. Fix: correct the inventory "
                             f"(`kafkaform check -i {self.sources}` lists what breaks)") from error
        self.asks = status_collect.asks(self.view, self.cluster)
        self.stale_s = float(args.pipeline_stale)

    def read(self) -> status_judge.Report:
        began = time.monotonic()
        saying = threading.Timer(QUIET_S, lambda: print(
            f"kafkaform status: asking {len(self.asks)} hosts of {self.sources} through "
            "Ansible...", file=sys.stderr, flush=True))
        saying.daemon = True
        saying.start()
        try:
            answers = status_probe.ask_hosts(self.sources, self.asks)
        finally:
            saying.cancel()
        facts = status_collect.facts(answers, self.view, self.cluster, self.renew_days,
                                     time.monotonic() - began, now())
        voters = [int(c["node_id"]) for c in self.cluster["controllers"]]
        return status_judge.judge(facts, voters, int(self.cluster["metadata_max_lag"]),
                                  self.stale_s)


def text(report: status_judge.Report, source: str) -> str:
    """The report as people read it: a headline, then each section's lines, the unhealthy
    ones marked !! and first."""
    problems = sum(not line.ok for s in report.sections for line in s.lines)
    state = "healthy" if report.ok else f"UNHEALTHY, {problems} problem(s)"
    read_at = report.facts.read_at.strftime("%Y-%m-%d %H:%M:%S %Z")
    lines = [f"kafkaform status of {source}: {state} (read {read_at} in "
             f"{report.facts.seconds:.1f} s)"]
    for found in report.sections:
        lines += ["", f"{found.name}{'' if found.ok else '  [unhealthy]'}"]
        lines += [f"{MARKS[line.rank]}{line.text}" for line in found.lines]
    return "\n".join(lines) + "\n"


def show(report: status_judge.Report, fmt: str, source: str, redraw: bool) -> None:
    if fmt == "json":
        print(json.dumps({"inventory": source, **report.to_dict()},
                         indent=None if redraw else 2), flush=True)
        return
    screen = text(report, source)
    if redraw and sys.stdout.isatty():
        screen = CLEAR + screen
    sys.stdout.write(screen)
    sys.stdout.flush()


def run(args: argparse.Namespace) -> int:
    status = Status(args)
    source = str(status.sources)
    if args.watch is None:
        report = status.read()
        show(report, args.format, source, redraw=False)
        return 0 if report.ok else 1
    while True:  # until Ctrl-C: cli.main() exits 130
        began = time.monotonic()
        show(status.read(), args.format, source, redraw=True)
        time.sleep(max(0.0, args.watch - (time.monotonic() - began)))
