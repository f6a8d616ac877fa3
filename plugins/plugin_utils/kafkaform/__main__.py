"""`python -m kafkaform`: the `kafkaform` command, for environments without its script on PATH."""

import sys

from .cli import main

sys.exit(main())
