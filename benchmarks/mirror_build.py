"""Time a cached `kafkaform mirror build`: nothing new, so no Maven, no pip, no downloads.

Target: under 5 s (it re-hashes every published archive, ~0.5 GB, and stops there).
Run: .venv/bin/python benchmarks/mirror_build.py [--dir DIR] [--runs 3]
The mirror must have been built once (`kafkaform mirror build`), else the first run builds it
and is reported separately as the cold build.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

TARGET_SECONDS = 5.0


def build(directory: str | None) -> tuple[float, str]:
    """Run `kafkaform mirror build` once; return (seconds, stderr)."""
    command = [sys.executable, "-m", "kafkaform.cli", "mirror", "build"]
    if directory:
        command += ["--dir", directory]
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"mirror build failed:\n{result.stderr}")
    return elapsed, result.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", help="mirror directory (default: kafkaform's default)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    first, log = build(args.dir)
    if "0 artifact(s) built" not in log:
        print(f"cold build (mirror was not complete): {first:.1f} s")
    timings = []
    for _ in range(args.runs):
        elapsed, log = build(args.dir)
        if "0 artifact(s) built" not in log or "resolving" in log or "downloading" in log:
            sys.exit(f"a cached build did work it should have skipped:\n{log}")
        timings.append(elapsed)
    median = statistics.median(timings)
    verdict = "OK" if median < TARGET_SECONDS else "SLOW"
    where = args.dir or "default mirror dir"
    print(
        f"cached mirror build ({where}): median {median:.2f} s over {args.runs} runs"
        f" (min {min(timings):.2f}, max {max(timings):.2f});"
        f" target < {TARGET_SECONDS:.0f} s: {verdict}"
    )
    return 0 if median < TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
