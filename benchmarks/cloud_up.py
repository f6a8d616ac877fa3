"""Calls and seconds of `kafkaform cloud up` for 3 ZooKeeper + 6 brokers + 3 Spark nodes.

Runs against a moto server it starts on 127.0.0.1 (a real HTTP endpoint, real boto3): one `up`
from nothing, then a no-change `up`, which must make no mutating call. The cluster is the example
spec, inventory/aws/cluster.yml, with the subnets of a VPC created for the run.
Run: .venv/bin/python benchmarks/cloud_up.py [--runs 3]
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import time
from pathlib import Path

import boto3
import yaml
from moto.server import ThreadedMotoServer

from kafkaform.cloud import provision
from kafkaform.cloud.spec import parse

EXAMPLE = Path(__file__).resolve().parents[1] / "inventory" / "aws" / "cluster.yml"


def one_run(client: object, name: str) -> tuple[tuple[float, int, int], tuple[float, int, int]]:
    """(seconds, calls, mutating calls) of the first and of the no-change `up`."""
    data = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    vpc = client.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]  # type: ignore[attr-defined]
    for index, zone in enumerate(data["zones"]):
        zone["subnet"] = client.create_subnet(  # type: ignore[attr-defined]
            VpcId=vpc, CidrBlock=f"10.0.{index}.0/24", AvailabilityZone=zone["name"],
        )["Subnet"]["SubnetId"]
    data["name"] = name
    spec = parse(data)
    results = []
    for _ in range(2):
        counter = provision.CallCounter().attach(client)
        start = time.perf_counter()
        provision.up(client, spec, waiter_delay=1)
        results.append((time.perf_counter() - start, counter.total, len(counter.mutating)))
        client.meta.events.unregister("before-call.ec2", counter._count)  # type: ignore[attr-defined]
    return results[0], results[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    os.environ.update(AWS_ENDPOINT_URL=f"http://{host}:{port}", AWS_ACCESS_KEY_ID="bench",
                      AWS_SECRET_ACCESS_KEY="bench")
    try:
        region = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))["region"]
        client = boto3.session.Session(region_name=region).client("ec2")
        runs = [one_run(client, f"bench{i}") for i in range(args.runs)]
    finally:
        server.stop()
    for label, index in (("up from nothing", 0), ("no-change up", 1)):
        seconds = [r[index][0] for r in runs]
        calls, mutating = runs[-1][index][1], runs[-1][index][2]
        print(f"kafkaform cloud up, 3 ZooKeeper + 6 brokers + 3 Spark, {label}: {calls} calls "
              f"({mutating} mutating), median {statistics.median(seconds):.3f} s over "
              f"{args.runs} runs (min {min(seconds):.3f}, max {max(seconds):.3f}; moto on "
              "127.0.0.1)")
    return 1 if any(r[1][2] for r in runs) else 0


if __name__ == "__main__":
    raise SystemExit(main())
