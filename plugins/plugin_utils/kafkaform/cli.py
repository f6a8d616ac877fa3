"""The `kafkaform` command line: one subcommand per capability, each registered by its module."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    from . import check_cli, lab, mirror
    from .cloud import cli as cloud_cli

    parser = argparse.ArgumentParser(prog="kafkaform", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in (check_cli, mirror, lab, cloud_cli):
        module.add_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    try:
        return handler(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
