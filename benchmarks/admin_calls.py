"""Time the brokers' admin helper, before and after its admin client, side by side on one broker.

On a running lab (`./dev lab`, then the tree's `site.yml`, which installs the admin client), copies
the helper of an earlier commit (`--before`, whose every question starts one of Kafka's JVM
tools) and this tree's (one kafka-python client a call) into the broker, then runs each read-only
call of both, alternated, `--rounds` times: describe, acl-list, health, users (dry run) and a
preferred-leader election (which changes nothing on a balanced cluster). Prints each call's
median seconds per helper and the ratio; the helpers' outputs are not compared (their formats
differ: text then, JSON now).
Run: .venv/bin/python benchmarks/admin_calls.py [--host kf-kafka1] [--before REV] [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = "roles/kafka_broker/files"
USERS = '{"iterations": 8192, "users": []}'


def podman(*argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(["podman", *argv], input=stdin, capture_output=True, text=True,
                          check=False)


def install(host: str, label: str, sources: dict[str, str]) -> str:
    """Copy ``sources`` (name -> text) into /tmp/kafkaform-bench-LABEL on ``host``."""
    where = f"/tmp/kafkaform-bench-{label}"
    podman("exec", host, "mkdir", "-p", where)
    for name, text in sources.items():
        local = Path(f"/tmp/kafkaform-bench-{label}-{name}")
        local.write_text(text, encoding="utf-8")
        podman("cp", str(local), f"{host}:{where}/{name}")
        local.unlink()
    return f"{where}/kafkaform-kafka"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="kf-kafka1")
    parser.add_argument("--before", default="fdb4c6c",
                        help="a commit whose helper runs Kafka's JVM tools (default fdb4c6c)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("CONTAINERS_CONF", str(ROOT / "lab" / "containers.conf"))
    old = subprocess.run(["git", "-C", str(ROOT), "show", f"{args.before}:{FILES}/kafkaform-kafka"],
                         capture_output=True, text=True, check=True).stdout
    helpers = {
        "before": install(args.host, "before", {"kafkaform-kafka": old}),
        "after": install(args.host, "after", {
            name: (ROOT / FILES / name).read_text(encoding="utf-8")
            for name in ("kafkaform-kafka", "kafkaform_admin.py", "kafkaform_tools.py",
                         "kafkaform_reassign.py", "kafkaform_scram.py")}),
    }
    server = podman("exec", args.host, "cat", "/etc/kafka/server.properties").stdout
    broker = next(line.split("=", 1)[1] for line in server.splitlines()
                  if line.startswith("broker.id="))
    bootstrap = next(line.split("=", 1)[1] for line in podman(
        "exec", args.host, "cat", "/etc/kafka/admin-client.properties").stdout.splitlines()
        if line.startswith("bootstrap.servers="))
    ids = ",".join(sorted({broker, *(str(i) for i in range(1, 4))}))
    calls = {"describe": ["describe"], "acl-list": ["acl-list"],
             "health": ["health", "--ids", ids], "users (dry run)": ["--dry-run", "users"],
             "elect": ["elect"]}
    took: dict[tuple[str, str], list[float]] = {}
    for round_ in range(args.rounds):
        print(f"round {round_ + 1} of {args.rounds}", file=sys.stderr, flush=True)
        for call, argv in calls.items():
            for label, helper in helpers.items():
                began = time.monotonic()
                ran = podman("exec", "-i", args.host, "python3", helper, "--bootstrap", bootstrap,
                             "--conf", "/etc/kafka", "--libs", "/opt/kafkaform/kafka/libs",
                             *argv, stdin=USERS)
                took.setdefault((call, label), []).append(time.monotonic() - began)
                if ran.returncode != 0:
                    print(f"{label} {call} exited {ran.returncode}: {ran.stderr[-400:]}",
                          file=sys.stderr)
                    return 1
    print(f"{'call':<18}{'before s':>10}{'after s':>10}{'after/before':>14}")
    for call in calls:
        before = statistics.median(took[(call, "before")])
        after = statistics.median(took[(call, "after")])
        print(f"{call:<18}{before:>10.2f}{after:>10.2f}{after / before:>14.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
