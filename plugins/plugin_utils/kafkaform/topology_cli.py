"""`kafkaform topology -i INVENTORY`: the cluster's racks with their hosts and roles, and what
the layout can lose: how many hosts its ZooKeeper ensemble or KRaft controllers and its
partitions' replicas can lose, and for each rack what losing all of it does (the TP rules).

Read from the inventory alone: no host is touched. --format text (the default) prints the racks
as columns, then the margins and a verdict per rack; json the same facts; svg and png a picture
(matplotlib, the topology extra), svg to stdout unless -o FILE names a file, png to -o FILE.

Exit 0 when the layout was shown, whatever it can lose (this is a picture, not a check: `kafkaform
check` refuses the layouts ZK-07, KR-03 and RA-02 forbid); 2 on usage or input errors (an unusable
inventory, a replication setting that is not a number, png without -o).
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

from . import inventory
from .cli import InputError
from .topology import ROLE_NAMES, Rack, Topology, topology

FORMATS = ("text", "json", "svg", "png")


def add_commands(commands: Any) -> None:
    parser = commands.add_parser(
        "topology", help="draw the racks, hosts and roles of an inventory and what the layout can "
        "lose: quorum and replica margins, a verdict per rack (touches no host)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    inventory.add_arguments(parser)
    parser.add_argument("--format", choices=FORMATS, default="text",
                        help="text (default), json, or a picture: svg or png")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write the output to FILE (required for png; svg and the others go "
                        "to stdout without it)")
    parser.set_defaults(handler=run)


def _cell_lines(rack: Rack) -> list[str]:
    lines = []
    for host in rack.hosts:
        lines.append(host.name)
        lines += [f"  {ROLE_NAMES[role]}" for role in host.roles]
    return lines


def columns(layout: Topology) -> str:
    """The racks side by side, each with its hosts and their roles under it, then its verdict."""
    cells = [[rack.name, "-" * len(rack.name), *_cell_lines(rack)] for rack in layout.racks]
    height = max(len(cell) for cell in cells)
    cells = [[*cell, *[""] * (height - len(cell) + 1), layout.verdict(rack).summary.upper()]
             for cell, rack in zip(cells, layout.racks, strict=True)]
    widths = [max(len(line) for line in cell) for cell in cells]
    rows = ["   ".join(line.ljust(width) for line, width in zip(row, widths, strict=True)
                       ).rstrip() for row in zip(*cells, strict=True)]
    return "\n".join(rows)


def text(layout: Topology, source: str) -> str:
    hosts = sum(len(rack.hosts) for rack in layout.racks)
    lines = [f"kafkaform topology: {layout.cluster} ({source}), {hosts} hosts in "
             f"{len(layout.rack_names)} rack(s): {layout.margins_text()}", "",
             columns(layout), "", "margins"]
    lines += [f"  {q.text()}" for q in layout.quorums]
    lines += [f"  {r.text()}" for r in layout.replication]
    lines += ["", "racks"]
    for rack in layout.racks:
        # A rule list is kept on one line: its spaces are not where a line may break.
        verdict = layout.verdict(rack).text().replace(", TP-", ",\0TP-").replace(", RA-", ",\0RA-")
        lines += [line.replace("\0", " ") for line in textwrap.wrap(
            verdict, width=100, initial_indent="  ", subsequent_indent="    ",
            break_on_hyphens=False)]
    return "\n".join(lines) + "\n"


def _write(data: str | bytes, output: str | None) -> None:
    if output is None:
        sys.stdout.write(data if isinstance(data, str) else data.decode())
        return
    try:
        if isinstance(data, str):
            Path(output).write_text(data, encoding="utf-8")
        else:
            Path(output).write_bytes(data)
    except OSError as error:
        raise InputError(f"-o {output} cannot be written ({error.strerror}). Fix: name a file in "
                         "a directory that exists and you may write to") from None
    print(f"kafkaform topology: wrote {output}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    if args.format == "png" and not args.output:
        raise InputError("--format png writes a binary picture, which takes a file. Fix: add "
                         "-o FILE.png, or use --format svg (to stdout) or text")
    sources = inventory.Sources.from_args(args)
    layout = topology(inventory.load(sources))  # InputError: main() prints it and exits 2
    if args.format == "json":
        _write(json.dumps({"inventory": str(sources), **layout.to_dict()}, indent=2) + "\n",
               args.output)
    elif args.format == "text":
        _write(text(layout, str(sources)), args.output)
    else:
        from .topology_draw import render  # matplotlib: only for a picture

        _write(render(layout, args.format), args.output)
    return 0
