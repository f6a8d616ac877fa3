"""Time `playbooks/site.yml` on the lab: cold on fresh containers, then again with nothing to do.

The whole platform of `inventory/lab` (ZooKeeper, brokers in racks, Spark master and worker, the
pipeline): `kafkaform lab down` and `kafkaform lab up` (fresh containers, not timed; the mirror
must be built, as `./dev lab` does), then `ansible-playbook -i inventory/lab playbooks/site.yml`
twice. The second run must change nothing. Prints both times and no-change / cold as a ratio,
the last line as `ratio N`. The lab is taken down afterwards unless `--keep`.
Run: .venv/bin/python benchmarks/site_converge.py [--keep]
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
    args = parser.parse_args()
    os.environ.setdefault("CONTAINERS_CONF", str(ROOT / "lab" / "containers.conf"))
    os.environ.setdefault("ANSIBLE_CONFIG", str(ROOT / "ansible.cfg"))
    print("fresh lab: kafkaform lab down, lab up", file=sys.stderr, flush=True)
    timed("kafkaform", "lab", "down")
    timed("kafkaform", "lab", "up")
    try:
        cold, _ = site()
        print(f"site.yml cold: {cold:.1f} s", file=sys.stderr, flush=True)
        warm, changed = site()
        print(f"site.yml no change: {warm:.1f} s, {changed} changed", file=sys.stderr, flush=True)
    finally:
        if not args.keep:
            timed("kafkaform", "lab", "down")
    ratio = round(warm / cold, 2)
    print(json.dumps({"benchmark": "site_converge", "inventory": INVENTORY,
                      "cold_s": round(cold, 1), "no_change_s": round(warm, 1),
                      "no_change_changed": changed, "no_change_over_cold": ratio,
                      "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}))
    print(f"ratio {ratio} (site.yml on the lab, no change / cold)")
    return 0 if changed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
