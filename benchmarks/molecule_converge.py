"""Shared by the role benchmarks: time a molecule scenario's cold and no-change converges.

Cold: fresh containers (`molecule destroy` + `create`, not timed), then `molecule converge`.
No-change: `molecule converge` again, which must report zero changed tasks (and so restart
nothing). A role benchmark adds its own figures to the record and prints it as one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CHANGED = re.compile(r"\bchanged=(\d+)")


def molecule(scenario: str, action: str) -> tuple[float, str]:
    """Run one molecule action on the scenario; its wall time and output. Fails loudly."""
    tool = Path(sys.executable).with_name("molecule")
    start = time.monotonic()
    result = subprocess.run([str(tool), action, "-s", scenario], cwd=ROOT, capture_output=True,
                            text=True, check=False,
                            env={"ANSIBLE_NOCOLOR": "1", "PY_COLORS": "0", **os.environ})
    elapsed = time.monotonic() - start
    if result.returncode != 0:
        sys.stderr.write(result.stdout[-4000:] + result.stderr[-4000:])
        raise SystemExit(f"molecule {action} failed (exit {result.returncode})")
    return elapsed, result.stdout + result.stderr


def run(scenario: str, record: dict[str, Any],
        extra: Callable[[], dict[str, Any]] | None = None) -> int:
    """Time the converges, add ``extra()`` measured on the converged containers, print the record.

    Exits 1 when the no-change converge changed anything.
    """
    parser = argparse.ArgumentParser(description=sys.modules["__main__"].__doc__)
    parser.add_argument("--output", type=Path, help="append the JSON result to this file")
    parser.add_argument("--keep", action="store_true", help="keep the containers afterwards")
    args = parser.parse_args()
    os.environ.setdefault("CONTAINERS_CONF", str(ROOT / "lab" / "containers.conf"))
    os.environ.setdefault("ANSIBLE_CONFIG", str(ROOT / "ansible.cfg"))

    molecule(scenario, "destroy")
    molecule(scenario, "create")
    cold, _ = molecule(scenario, "converge")
    warm, output = molecule(scenario, "converge")
    changed = sum(int(n) for n in CHANGED.findall(output))
    record.update(cold_converge_s=round(cold, 1), no_change_converge_s=round(warm, 1),
                  no_change_changed_tasks=changed)
    if extra is not None:
        record.update(extra())
    if not args.keep:
        molecule(scenario, "destroy")
    record["recorded_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    line = json.dumps(record)
    print(line)
    if args.output:
        with args.output.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
    return 0 if changed == 0 else 1
