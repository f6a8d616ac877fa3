"""Time the kafka_broker role on its molecule scenario (3 ZooKeeper members, 3 brokers in 2 racks).

Cold converge: the ensemble, Java, the Kafka release from the mirror, configuration, started
brokers and the declared topics. No-change: the same again, which must change nothing. Then
benchmarks/kafka_drills.py --drill time on the same containers: each broker restarted alone until
the cluster is healthy again, against one rolling restart of all three (the ratio).
Prints one JSON line; --output appends it to a file. The containers are destroyed unless --keep.
Run: .venv/bin/python benchmarks/kafka_converge.py
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from molecule_converge import ROOT, run

SCENARIO = "kafka_broker"
RATIO = re.compile(r"rolling restart of \d+ brokers: ([\d.]+) s; "
                   r"sum of single restarts ([\d.]+) s")


def restart_ratio() -> dict[str, Any]:
    inventory = sorted(Path.home().glob(f".ansible/tmp/molecule.*.{SCENARIO}/inventory"),
                       key=lambda p: p.stat().st_mtime)[-1]
    drill = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "kafka_drills.py"), "-i",
                            str(inventory), "--drill", "time"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout
    sys.stderr.write(drill)
    match = RATIO.search(drill)
    roll, singles = (float(match[1]), float(match[2])) if match else (0.0, 0.0)
    return {
        "rolling_restart_s": roll,
        "sum_single_restart_catch_up_s": singles,
        "rolling_restart_ratio": round(roll / singles, 2) if singles else None,
    }


if __name__ == "__main__":
    sys.exit(run(SCENARIO, {"benchmark": "kafka_converge", "brokers": 3}, restart_ratio))
