"""Time the zookeeper role on the molecule scenario's 3-member ensemble: cold and no-change runs.

Cold converge: Java, the release from the mirror, configuration and a forming quorum. No-change:
the same again, which must change nothing. Prints one JSON line; --output appends it to a file.
The containers are destroyed at the end unless --keep.
Run: .venv/bin/python benchmarks/zookeeper_converge.py
"""

from __future__ import annotations

import sys

from molecule_converge import run

if __name__ == "__main__":
    sys.exit(run("zookeeper", {"benchmark": "zookeeper_converge", "members": 3}))
