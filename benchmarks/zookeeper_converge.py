"""Time the zookeeper role on the molecule scenario's 3-member ensemble: cold and no-change runs.

Cold: fresh containers (`molecule destroy` + `create`, not timed), then `molecule converge`: Java,
the release from the mirror, configuration and a forming quorum. No-change: `molecule converge`
again, which must report zero changed tasks (and so restart nothing). Prints one JSON line:
{"cold_converge_s": ..., "no_change_converge_s": ..., "no_change_changed_tasks": ...}; --output
appends it to a file. The containers are destroyed at the end unless --keep.
Run: CONTAINERS_CONF=lab/containers.conf .venv/bin/python benchmarks/zookeeper_converge.py
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = "zookeeper"
CHANGED = re.compile(r"\bchanged=(\d+)")


def molecule(action: str) -> tuple[float, str]:
    """Run one molecule action on the scenario; its wall time and output. Fails loudly."""
    tool = Path(sys.executable).with_name("molecule")
    start = time.monotonic()
    result = subprocess.run([str(tool), action, "-s", SCENARIO], cwd=ROOT, capture_output=True,
                            text=True, check=False,
                            env={"ANSIBLE_NOCOLOR": "1", "PY_COLORS": "0", **os.environ})
    elapsed = time.monotonic() - start
    if result.returncode != 0:
        sys.stderr.write(result.stdout[-4000:] + result.stderr[-4000:])
        raise SystemExit(f"molecule {action} failed (exit {result.returncode})")
    return elapsed, result.stdout + result.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--output", type=Path, help="append the JSON result to this file")
    parser.add_argument("--keep", action="store_true", help="keep the containers afterwards")
    args = parser.parse_args()
    os.environ.setdefault("CONTAINERS_CONF", str(ROOT / "lab" / "containers.conf"))
    os.environ.setdefault("ANSIBLE_CONFIG", str(ROOT / "ansible.cfg"))

    molecule("destroy")
    molecule("create")
    cold, _ = molecule("converge")
    warm, output = molecule("converge")
    changed = sum(int(n) for n in CHANGED.findall(output))
    if not args.keep:
        molecule("destroy")
    record = {
        "benchmark": "zookeeper_converge",
        "members": 3,
        "cold_converge_s": round(cold, 1),
        "no_change_converge_s": round(warm, 1),
        "no_change_changed_tasks": changed,
        "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    line = json.dumps(record)
    print(line)
    if args.output:
        with args.output.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
    return 0 if changed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
