"""`kafkaform cloud plan|up|inventory|down --spec SPEC`: a cluster's hosts on AWS, from a spec.

plan       print what `up` would change (read calls only)
up         create what is missing; a second run creates nothing, an interrupted run resumes
inventory  write the Ansible inventory of the running cluster (--output DIR)
down       delete everything tagged with the cluster's name, after confirmation (--yes skips it)

Credentials come from boto3's usual chain (environment, AWS_PROFILE, instance role) and are never
printed; AWS_ENDPOINT_URL points boto3 at another endpoint. Exit 0 on success, 1 on a bad spec or
a failed call, 2 on usage errors. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..cloud import inventory, provision
from ..cloud.placement import place
from ..cloud.spec import Spec, SpecError, load


def ec2_client(spec: Spec) -> Any:
    """An EC2 client for the spec's region; boto3 finds credentials and AWS_ENDPOINT_URL."""
    import boto3  # here, not at import time: `kafkaform check` must not pay for boto3

    return boto3.session.Session(region_name=spec.region).client("ec2")


def say(message: str) -> None:
    print(message, file=sys.stderr)


def guarded(command: Callable[[argparse.Namespace, Spec], int]) -> Callable[
        [argparse.Namespace], int]:
    """Load the spec, then run ``command``; spec and AWS errors become messages and exit 1."""

    def handler(args: argparse.Namespace) -> int:
        # botocore is imported on use: every other kafkaform command would pay for it.
        from botocore.exceptions import BotoCoreError, ClientError, WaiterError

        try:
            spec = load(args.spec)
        except SpecError as error:
            say(str(error))
            return 1
        try:
            return command(args, spec)
        except provision.ProvisionError as error:
            say(f"kafkaform cloud: {error}")
            return 1
        except (ClientError, WaiterError) as error:
            # botocore's messages name the operation and AWS's reason, never the credentials.
            say(f"kafkaform cloud: {error}. Fix the cause and rerun: what exists is kept.")
            return 1
        except BotoCoreError as error:
            say(f"kafkaform cloud: {error}. Check the AWS credentials (AWS_PROFILE or "
                "AWS_ACCESS_KEY_ID) and AWS_ENDPOINT_URL.")
            return 1
    return handler


def plan_command(args: argparse.Namespace, spec: Spec) -> int:
    client = ec2_client(spec)
    counter = provision.CallCounter().attach(client)
    seen = provision.observe(client, spec)
    for problem in provision.warnings(spec, seen):
        say(f"warning: {problem}")
    changes = provision.plan(client, spec, seen)
    for change in changes:
        print(change.text())
    say(f"kafkaform cloud plan {spec.name}: {len(changes)} change(s) "
        f"({counter.summary()})")
    return 0


def up_command(args: argparse.Namespace, spec: Spec) -> int:
    client = ec2_client(spec)
    counter = provision.CallCounter().attach(client)
    start = time.perf_counter()
    changes = provision.up(client, spec, waiter_delay=args.waiter_delay,
                           report=lambda change: say(change.text()),
                           warn=lambda problem: say(f"warning: {problem}"))
    say(f"kafkaform cloud up {spec.name}: {len(changes)} change(s), {counter.summary()}, "
        f"{time.perf_counter() - start:.1f} s")
    joined = provision.new_brokers(spec, changes)
    if joined:
        # New brokers of a running cluster hold nothing until replicas move onto them (OP-06).
        say(f"{len(joined)} broker(s) added to the brokers there ({', '.join(joined)}): write "
            f"the inventory (`kafkaform cloud inventory --spec {args.spec} --output DIR`), then "
            "give them their share: `ansible-playbook -i DIR kafkaform.platform.scale_out -e "
            f"kafka_broker_scale_out_hosts={','.join(joined)}`")
    return 0


def inventory_command(args: argparse.Namespace, spec: Spec) -> int:
    client = ec2_client(spec)
    seen = provision.observe(client, spec, subnets=False)
    missing = provision.missing_hosts(spec, seen)
    if missing:
        say(f"kafkaform cloud inventory: {len(missing)} host(s) do not exist yet "
            f"({', '.join(missing)}). Run `kafkaform cloud up --spec {args.spec}` first.")
        return 1
    written = inventory.write(Path(args.output), spec, place(spec), provision.addresses(seen),
                              provision.volume_ids(seen), dynamic=args.dynamic)
    for path in written:
        say(f"wrote {path}")
    return 0


def down_command(args: argparse.Namespace, spec: Spec) -> int:
    client = ec2_client(spec)
    counter = provision.CallCounter().attach(client)
    seen = provision.observe(client, spec, subnets=False)
    changes = provision.doomed(seen)
    if not changes:
        say(f"kafkaform cloud down {spec.name}: nothing carries the cluster's tag")
        return 0
    for change in changes:
        say(change.text())
    if not args.yes:
        if not sys.stdin.isatty():
            say("kafkaform cloud down: not confirmed; rerun with --yes to delete without asking")
            return 1
        answer = input(f"Type the cluster name ({spec.name}) to delete all of the above: ")
        if answer.strip() != spec.name:
            say("kafkaform cloud down: not confirmed, nothing deleted")
            return 1
    provision.down(client, spec, waiter_delay=args.waiter_delay)
    say(f"kafkaform cloud down {spec.name}: {len(changes)} resource(s) deleted, "
        f"{counter.summary()}")
    return 0


def add_commands(commands: Any) -> None:
    """Register `kafkaform cloud plan|up|inventory|down` on the CLI's subparsers object."""
    cloud = commands.add_parser("cloud", help="a cluster's hosts on AWS, from a declarative spec",
                                description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = cloud.add_subparsers(dest="cloud_command", required=True, metavar="ACTION")
    for name, handler, text in (
        ("plan", plan_command, "print what `up` would change"),
        ("up", up_command, "create what is missing (idempotent)"),
        ("inventory", inventory_command, "write the cluster's Ansible inventory"),
        ("down", down_command, "delete everything tagged with the cluster's name"),
    ):
        parser = sub.add_parser(name, help=text, description=text)
        parser.add_argument("--spec", required=True, help="the cluster spec (YAML)")
        if name in ("up", "down"):
            parser.add_argument("--waiter-delay", type=int, default=5, metavar="SECONDS",
                                help="seconds between a waiter's polls (default 5)")
        if name == "down":
            parser.add_argument("--yes", action="store_true", help="delete without asking")
        if name == "inventory":
            parser.add_argument("--output", required=True, metavar="DIR",
                                help="directory to write hosts.yml and group_vars/ into")
            parser.add_argument("--dynamic", action="store_true",
                                help=f"write {inventory.AWS_EC2_FILE} (amazon.aws.aws_ec2: the "
                                "same hosts from the instances' tags) instead of hosts.yml")
        parser.set_defaults(handler=guarded(handler))
