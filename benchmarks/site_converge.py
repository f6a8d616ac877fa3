"""Time `playbooks/site.yml` on the lab: cold on fresh containers, then again with nothing to do.

The whole platform of `inventory/lab` (ZooKeeper, brokers in racks, Spark master and worker, the
pipeline): `kafkaform lab down` and `kafkaform lab up` (fresh containers, not timed; the mirror
must be built, as `./dev lab` does), then `ansible-playbook -i inventory/lab playbooks/site.yml`
cold, then again with nothing to change (twice by default: the first of those runs beside a
cluster that has just started). They must change nothing. Prints every time and the last
no-change run / cold as a ratio, the last line as `ratio N`. The lab is taken down afterwards
unless `--keep`.
Run: .venv/bin/python benchmarks/site_converge.py [--keep] [--no-change-runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from converge_engines import timed
from molecule_converge import CHANGED, ROOT

INVENTORY = "inventory/lab"


def site() -> tuple[float, int]:
    took, output = timed("ansible-playbook", "-i", INVENTORY, "playbooks/site.yml",
                         ANSIBLE_NOCOLOR="1")
    return took, sum(int(n) for n in CHANGED.findall(output))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="leave the lab up afterwards")
    parser.add_argument("--no-change-runs", type=int, default=2,
                        help="no-change runs after the cold one (default 2: the first finds the "
                             "cluster just started)")
    args = parser.parse_args()
    os.environ.setdefault("CONTAINERS_CONF", str(ROOT / "lab" / "containers.conf"))
    os.environ.setdefault("ANSIBLE_CONFIG", str(ROOT / "ansible.cfg"))
    print("fresh lab: kafkaform lab down, lab up", file=sys.stderr, flush=True)
    timed("kafkaform", "lab", "down")
    timed("kafkaform", "lab", "up")
    warm: list[float] = []
    changed = 0
    try:
        cold, _ = site()
        print(f"site.yml cold: {cold:.1f} s", file=sys.stderr, flush=True)
        # The first run after a cold converge shares the 2 cores with a cluster that has just
        # started (JVMs compiling, the pipeline's first batches); the later ones find it settled.
        for _ in range(args.no_change_runs):
            took, found = site()
            warm.append(took)
            changed += found
            print(f"site.yml no change: {took:.1f} s, {found} changed", file=sys.stderr,
                  flush=True)
    finally:
        if not args.keep:
            timed("kafkaform", "lab", "down")
    ratio = round(warm[-1] / cold, 2)
    print(json.dumps({"benchmark": "site_converge", "inventory": INVENTORY,
                      "cold_s": round(cold, 1), "no_change_s": [round(w, 1) for w in warm],
                      "no_change_changed": changed, "no_change_over_cold": ratio,
                      "first_no_change_over_cold": round(warm[0] / cold, 2),
                      "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}))
    print(f"ratio {ratio} (site.yml on the lab, the last no-change run / cold; the first "
          f"{warm[0] / cold:.2f})")
    return 0 if changed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
