"""The `kafkaform` command line: one subcommand per capability, each registered by its module.

Exit codes, for every subcommand: 0 fine, 1 the input breaks a rule or a check failed, 2 a usage
or input error (a missing file, a file that is not what the option wants), 130 interrupted, 70 an
unexpected error (a bug in kafkaform: KAFKAFORM_DEBUG=1 shows its traceback).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence

Handler = Callable[[argparse.Namespace], int]

#: sysexits.h EX_SOFTWARE: neither the input's fault (2) nor a broken rule (1).
EXIT_BUG = 70


class InputError(Exception):
    """An input kafkaform cannot use: missing, or not the kind of file the option wants.

    The message is one line naming the path and the fix; main() prints it and exits 2.
    """


#: The optional parts of kafkaform: the top-level module each one brings, and its extra.
EXTRAS = {"boto3": "cloud", "botocore": "cloud", "pytest": "verify", "testinfra": "verify",
          "pyinfra": "pyinfra", "matplotlib": "topology"}


def missing_extra(error: ModuleNotFoundError) -> InputError | None:
    """A clear refusal when a command needs a part of kafkaform this environment lacks."""
    module = (error.name or "").split(".")[0]
    if module not in EXTRAS:
        return None
    return InputError(f"this command needs {module}, which this Python environment lacks. Fix: "
                      f"pip install 'kafkaform[{EXTRAS[module]}]' (or kafkaform[all])")


#: Each subcommand and the module (in this package) that registers it with ``add_commands``.
COMMANDS = {"check": "check_cli", "plan": "plan_cli", "topology": "topology_cli",
            "verify": "verify_cli", "status": "status_cli", "drift": "drift_cli",
            "mirror": "mirror", "lab": "lab", "cloud": "cloud.cli"}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of ``command`` alone, importing only its module (the others cost a check a
    fifth of a second: boto3, http.server, the mirror's catalog), or of every command for help
    and for a name that is none of them."""
    parser = argparse.ArgumentParser(prog="kafkaform", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in [command] if command in COMMANDS else COMMANDS:
        importlib.import_module(f".{COMMANDS[name]}", __package__).add_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # The command modules import their optional parts (boto3, pytest, pyinfra) when they run.
    parser = build_parser(argv[0] if argv else None)
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    try:
        try:
            return handler(args)
        except ModuleNotFoundError as error:  # an optional part not installed, else a bug
            refusal = missing_extra(error)
            if refusal is None:
                raise
            raise refusal from error
    except InputError as error:
        print(f"kafkaform {args.command}: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        # A bug, not bad input: say what broke in one line, keep the traceback one switch away.
        if os.environ.get("KAFKAFORM_DEBUG"):
            raise
        print(f"kafkaform {args.command}: unexpected {type(error).__name__}: {error} "
              "(rerun with KAFKAFORM_DEBUG=1 to see the traceback)", file=sys.stderr)
        return EXIT_BUG


if __name__ == "__main__":
    sys.exit(main())
