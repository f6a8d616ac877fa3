"""What Prometheus's scrape of the JMX exporter agent costs a broker (MO-07).

    .venv/bin/python benchmarks/scrape_cost.py -i <inventory> [--host NAME] [--scrapes N]

On one broker of a podman inventory (the first by default), reached with ``podman exec``:

+ idle: the broker's JVM over a quiet window of the same length, no scrape at all;
+ scraped: ``--scrapes`` scrapes back to back from the broker's own host, as Prometheus would;

and prints, per scrape: the series served, the response's bytes, the wall time, the CPU time of
the broker's JVM (from /proc, idle rate subtracted) and the heap it allocates (the agent's
``jvm_memory_pool_allocated_bytes_total``, idle rate subtracted); then the same at the monitoring
role's scrape interval, as a share of one core and MB per minute. Heap a scrape allocates is young
garbage; what the agent keeps is its loaded classes, reported from ``jvm_classes_currently_loaded``
against a broker's usual count. One run, bounded by ``--scrapes``; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from _podman import main_pids, sh

from kafkaform import model
from kafkaform.defaults import setting
from kafkaform.inventory import load as load_inventory

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def jvm_cpu_seconds(container: str) -> float:
    """utime + stime of the broker's JVM (the kafka unit's main process)."""
    pid = main_pids([container])[container]
    fields = sh(container, f"cat /proc/{pid}/stat").rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def metrics(container: str, url: str) -> str:
    return sh(container, f"curl -sf {url}")


def allocated(body: str) -> float:
    return sum(float(line.rsplit(" ", 1)[1]) for line in body.splitlines()
               if line.startswith("jvm_memory_pool_allocated_bytes_total{"))


def value(body: str, name: str) -> float:
    return next(float(line.rsplit(" ", 1)[1]) for line in body.splitlines()
                if line.startswith(name + " "))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-i", "--inventory", required=True)
    parser.add_argument("--host", help="the broker to measure (default: the first)")
    parser.add_argument("--scrapes", type=int, default=200)
    args = parser.parse_args()

    view = load_inventory(args.inventory)
    cluster = model.build(view)
    broker = next((b for b in cluster.brokers if args.host in (None, b.host)), None)
    if broker is None or broker.metrics_port is None:
        print(f"error: no broker {args.host or ''} with the metrics agent in {args.inventory}",
              file=sys.stderr)
        return 1
    url = f"http://{broker.address}:{broker.metrics_port}/metrics"
    interval = str(setting(view.hostvars.get(broker.host, {}), "monitoring_scrape_interval"))
    interval_s = float(interval.rstrip("s"))

    first = metrics(broker.host, url)
    series = sum(1 for line in first.splitlines() if line and not line.startswith("#"))
    # The scrapes, then a quiet window as long as they took: its rates are the JVM's own.
    started = time.monotonic()
    walls = []
    cpu0, alloc0 = jvm_cpu_seconds(broker.host), allocated(metrics(broker.host, url))
    for _ in range(args.scrapes):
        t = time.monotonic()
        metrics(broker.host, url)
        walls.append(time.monotonic() - t)
    cpu1, last = jvm_cpu_seconds(broker.host), metrics(broker.host, url)
    scraped_s = time.monotonic() - started
    alloc1 = allocated(last)
    time.sleep(scraped_s)
    cpu2, alloc2 = jvm_cpu_seconds(broker.host), allocated(metrics(broker.host, url))
    idle_cpu_rate = (cpu2 - cpu1) / scraped_s
    idle_alloc_rate = (alloc2 - alloc1) / scraped_s
    per_cpu = max(0.0, (cpu1 - cpu0) - idle_cpu_rate * scraped_s) / (args.scrapes + 1)
    per_alloc = max(0.0, (alloc1 - alloc0) - idle_alloc_rate * scraped_s) / (args.scrapes + 1)

    print(f"broker {broker.host}: {series} series, {len(first.encode())} bytes per scrape, "
          f"{value(last, 'jvm_classes_currently_loaded'):.0f} classes loaded")
    print(f"per scrape ({args.scrapes} scrapes): wall p50 {statistics.median(walls) * 1000:.0f} ms "
          f"(podman exec and curl included), JVM CPU {per_cpu * 1000:.1f} ms, "
          f"heap allocated {per_alloc / 1e6:.2f} MB")
    print(f"at the scrape interval ({interval}): {per_cpu / interval_s * 100:.3f} % of one core, "
          f"{per_alloc / interval_s * 60 / 1e6:.1f} MB/min allocated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
