"""`kafkaform plan`: the brokers, disks, memory, network and partitions a workload needs, each
figure printed with its formula, its numbers and its rule (kafkaform.sizing, the CP rules).

The workload comes from the options, from a YAML or JSON file (--workload FILE, its keys the
options' names with underscores: ingress_mb_s, retention_days, mode ...), or both: an option
overrides the file. With -i INVENTORY the plan is compared with the inventory: its kafka_broker
hosts, their racks and its declared topics (kafka_topics), and the mode comes from it unless
--mode names one.

Exit 0 with the plan, the inventory's shortfalls as warnings; 1 with --strict when the inventory
falls short of the plan; 2 on usage or input errors (a value out of range, an unreadable
--workload file, an unusable inventory), with one line naming the option and the fix.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from . import inventory, model, sizing
from .checks.finding import Finding, Severity
from .cli import InputError
from .sizing import INPUTS, fmt

#: The file keys that are not numeric inputs of the Workload.
OTHER_KEYS = ("retention_days", "mode")
#: What the mode and the retention in days mean, for the fixes that name them.
MODE_MEANING = f"the cluster's mode ({' or '.join(sizing.MODES)})"
HOURS_PER_DAY = 24


def flag(key: str) -> str:
    return "--" + key.replace("_", "-")


def add_commands(commands: Any) -> None:
    parser = commands.add_parser(
        "plan", help="size a cluster for a workload: brokers, disks, memory, network and "
        "partitions, each with its formula (touches no host)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workload", metavar="FILE",
                        help="a YAML or JSON mapping of the inputs below by their names with "
                        "underscores; the options override it")
    for name, spec in INPUTS.items():
        if name != "retention_hours":  # with --retention-days below, one or the other
            parser.add_argument(flag(name), type=int if spec.bound.whole else float,
                                metavar="N", help=f"{spec.meaning} (default: {_default(name)})")
    retention = parser.add_mutually_exclusive_group()
    retention.add_argument("--retention-hours", type=float, metavar="N",
                           help=f"{INPUTS['retention_hours'].meaning} "
                           f"(default: {_default('retention_hours')})")
    retention.add_argument("--retention-days", type=float, metavar="N",
                           help="how long records are kept, in days")
    parser.add_argument("--mode", choices=sizing.MODES,
                        help=f"{MODE_MEANING}, which sets the partition limits (default: the "
                        "inventory's with -i, else kraft)")
    parser.add_argument("--topic", metavar="NAME",
                        help="with -i: the declared topic that carries the workload, whose "
                        "partitions are compared with the plan's")
    inventory.add_arguments(parser, "an inventory to compare with the plan (its kafka_broker "
                            "hosts, their racks, kafka_topics); repeat for several. Without it, "
                            "the plan alone")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when the inventory falls short of the plan")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.set_defaults(handler=run)


def _default(name: str) -> str:
    if name == "ingress_mb_s":
        return "none, it must be given"
    value = sizing.default(name)
    return "the mode's" if value is None else fmt(value)


@dataclass(frozen=True)
class Given:
    """One input as its user gave it: its name there (a file's key, an option's name with
    underscores), the value written, that value in the Workload's unit, and the --workload file
    (None for an option)."""

    key: str
    written: Any
    value: Any
    file: str | None = None

    @property
    def where(self) -> str:
        return f"--workload {self.file}: {self.key}" if self.file else flag(self.key)

    def example(self, value: str) -> str:
        return f"{self.key}: {value}" if self.file else f"{flag(self.key)} {value}"


def _given(key: str, written: Any, file: str | None = None) -> tuple[str, Given]:
    """The Workload input ``key`` gives, and how."""
    if key == "retention_days":
        numeric = isinstance(written, int | float) and not isinstance(written, bool)
        hours = written * HOURS_PER_DAY if numeric else written
        return "retention_hours", Given(key, written, hours, file)
    return key, Given(key, written, written, file)


def file_inputs(path: str) -> dict[str, Given]:
    """The inputs of a --workload file, by Workload input."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise InputError(f"--workload {path} cannot be read ({error.strerror}). Fix: pass a YAML "
                         "or JSON file of workload inputs, e.g. the line ingress_mb_s: 50"
                         ) from None
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        reason = str(error).splitlines()[0]
        raise InputError(f"--workload {path} is not YAML or JSON ({reason}). Fix: correct its "
                         "syntax") from None
    if not isinstance(data, Mapping):
        raise InputError(f"--workload {path} is not a mapping of workload inputs. Fix: write one "
                         "input a line, e.g. ingress_mb_s: 50")
    known = [*INPUTS, *OTHER_KEYS]
    unknown = sorted(str(key) for key in data if key not in known)
    if unknown:
        raise InputError(f"--workload {path}: unknown input(s) {', '.join(unknown)}. Fix: use "
                         f"the inputs {', '.join(known)}")
    if "retention_hours" in data and "retention_days" in data:
        raise InputError(f"--workload {path} gives both retention_hours and retention_days. Fix: "
                         "keep one")
    return dict(_given(key, value, path) for key, value in data.items())


def option_inputs(args: argparse.Namespace) -> dict[str, Given]:
    """The inputs the command line gives, by Workload input."""
    keys = [*INPUTS, *OTHER_KEYS]
    return dict(_given(key, getattr(args, key)) for key in keys if getattr(args, key) is not None)


def _meaning(key: str) -> tuple[str, str]:
    """What an input means and an example value, for a fix."""
    if key == "mode":
        return MODE_MEANING, "kraft"
    if key == "retention_days":
        return "how long records are kept, in days", "7"
    return INPUTS[key].meaning, INPUTS[key].example


def _refusal(problem: str, given: Given) -> str:
    meaning, example = _meaning(given.key)
    return (f"{given.where} {problem}, got {given.written!r}. Fix: give {meaning}, e.g. "
            f"{given.example(example)}")


def workload_values(args: argparse.Namespace) -> dict[str, Any]:
    """The Workload's inputs, from the file then the options; raises :class:`InputError` naming
    each input a Workload cannot take, as its user gave it."""
    given = {**(file_inputs(args.workload) if args.workload else {}), **option_inputs(args)}
    if "ingress_mb_s" not in given:
        raise InputError(f"the peak ingress is missing. Fix: give {INPUTS['ingress_mb_s'].meaning}"
                         ", e.g. --ingress-mb-s 50, or ingress_mb_s in the --workload file")
    values = {name: entry.value for name, entry in given.items()}
    problems = sizing.input_problems(values)
    if problems:
        raise InputError("; ".join(_refusal(problem, given[name]) for name, problem in problems))
    return values


def inventory_mode(view: model.InventoryView) -> str:
    """KRaft for controllers without an ensemble; a migration's brokers keep ZooKeeper's limits."""
    kraft = view.members(model.KAFKA_CONTROLLER) and not view.members(model.ZOOKEEPER)
    return "kraft" if kraft else "zookeeper"


def deployed(view: model.InventoryView) -> sizing.Deployed:
    """The inventory's brokers with their racks, and its declared topics, as plain data."""
    brokers = view.members(model.KAFKA_BROKER)
    topics = view.var(brokers[0], "kafka_topics", []) if brokers else []
    declared = [dict(t) for t in topics if isinstance(t, Mapping)] if isinstance(topics, list) \
        else []
    return sizing.Deployed({host: model.rack_of(view, host) for host in brokers}, declared)


def text(plan: sizing.Plan) -> str:
    """The plan as people read it: a headline, the workload, then each section's figures."""
    w = plan.workload
    bound = ", ".join(f.key.removesuffix("_bound") for f in plan.bound_by)
    lines = [f"kafkaform plan: {plan.brokers} brokers, bound by {bound}",
             f"workload: {fmt(w.ingress_mb_s)} MB/s at the peak in {fmt(w.record_bytes)}-byte "
             f"records ({fmt(w.records_per_second)} records/s), kept {fmt(w.retention_hours)} h, "
             f"replication {w.replication_factor}, {w.consumer_groups} consumer group(s)",
             f"limits in {w.limits_text()}", ""]
    for section, figures in plan.sections.items():
        lines.append(section)
        lines += ["  " + line for figure in figures for line in figure.text().splitlines()]
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def run(args: argparse.Namespace) -> int:
    values = workload_values(args)  # InputError: main() prints it and exits 2
    if args.topic and not args.inventory:
        raise InputError("--topic names a declared topic to compare, which takes an inventory. "
                         "Fix: add -i INVENTORY, or drop --topic")
    sources = inventory.Sources.from_args(args) if args.inventory else None
    view = inventory.load(sources) if sources else None
    values.setdefault("mode", inventory_mode(view) if view else "kraft")
    plan = sizing.plan(sizing.Workload(**values))
    severity: Severity = "error" if args.strict else "warning"
    findings: list[Finding] = (sizing.shortfalls(plan, deployed(view), args.topic, severity)
                               if view else [])
    if args.format == "json":
        report = {**plan.to_dict(), "inventory": str(sources) if sources else None,
                  "findings": [f.to_dict() for f in findings]}
        json.dump(report, sys.stdout, indent=2)
        print()
    else:
        sys.stdout.write(text(plan))
    for finding in findings:
        print(finding.text(), file=sys.stderr)
    if sources and not findings:
        print(f"kafkaform plan: {sources} has what the plan needs", file=sys.stderr)
    return 1 if args.strict and findings else 0
