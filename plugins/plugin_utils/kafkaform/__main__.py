"""`python -m kafkaform`: the `kafkaform` command, for environments without its script on PATH."""

import sys

from .cli import main

if __name__ == "__main__":  # imported by a checker, it runs nothing
    sys.exit(main())
