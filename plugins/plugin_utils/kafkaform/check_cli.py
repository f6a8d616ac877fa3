"""`kafkaform check -i INVENTORY`: the preflight rules, for people and for CI."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from . import checks, inventory


def add_commands(commands: Any) -> None:
    parser = commands.add_parser(
        "check",
        help="check an inventory against the cluster rules (touches no host)",
        description="Exit 0 when the inventory is valid, 1 when it breaks a rule, 2 on usage or "
        "input errors (a missing path, a file that is not an inventory, a cloud spec, an "
        "inventory with none of the kafkaform groups). Findings go to stderr; --format json "
        "prints them on stdout for CI.",
    )
    inventory.add_arguments(parser)
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    sources = inventory.Sources.from_args(args)
    view = inventory.load(sources)  # InputError: main() prints it and exits 2
    findings = checks.check(view)
    failed = bool(checks.errors(findings))
    if args.format == "json":
        report = {"inventory": str(sources), "valid": not failed,
                  "findings": [f.to_dict() for f in findings]}
        json.dump(report, sys.stdout, indent=2)
        print()
    for finding in findings:
        print(finding.text(), file=sys.stderr)
    if not failed:
        hosts = len(view.cluster_hosts())
        print(f"kafkaform check: {sources}: {hosts} hosts, no errors", file=sys.stderr)
    return 1 if failed else 0
