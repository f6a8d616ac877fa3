"""`kafkaform drift -i INVENTORY`: what differs on each host from what the inventory declares.

Runs the collection's playbooks (default kafkaform.platform.site, playbooks/site.yml, then
kafkaform.platform.monitoring where the inventory has monitoring hosts) with
`ansible-playbook --check --diff`: this environment's Ansible, the operator's ansible.cfg, the
inventory sources and vault identities given here. Nothing is changed on any host. Each task's
result comes back through the kafkaform.platform.drift callback; the summary lists per host the
files that would change (with a short unified diff under --diff, and always in --format json)
and the other changes by task name (a package, a service to start, a user); a host with none is
"in line". A task marked no_log shows only "(content hidden: no_log)". Progress (the play, the
hosts done with the current task) goes to standard error.

A check run is as good as the playbook's check mode: a task that needs an earlier one to have
really run (a service whose package is not installed yet) may fail or be skipped.

Exit 0 when nothing differs, 1 when a host drifted, 2 on usage or input errors and whenever the
check run could not tell: a host unreachable, a task failed, the playbook refused the inventory
(which host, and what Ansible said, are printed).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from . import ansible_child, drift, inventory, model, paths
from .cli import InputError

#: The collection's site playbook, which ansible-playbook finds by this name on its
#: collections path.
SITE = "kafkaform.platform.site"
#: The monitoring playbook, which runs after the site one (`./dev lab` runs both).
MONITORING = "kafkaform.platform.monitoring"
#: The collection's callback that reports each result as a JSON line (plugins/callback/drift.py).
CALLBACK = "kafkaform.platform.drift"
#: Where standard error is no terminal (a CI log), the longest silence while a play runs.
QUIET_SECONDS = 30
#: How many of the run's last lines of standard error say why it stopped.
ERROR_LINES = 5


def add_commands(commands: Any) -> None:
    parser = commands.add_parser(
        "drift", help="what differs on each host from the inventory: the playbook in check mode "
        "with diffs, summarised per host and file (changes nothing)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    inventory.add_arguments(parser)
    parser.add_argument("--limit", metavar="PATTERN",
                        help="check only the hosts matching this Ansible host pattern")
    parser.add_argument("--playbook", action="append", metavar="NAME_OR_PATH",
                        help=f"the playbook to check with: a file, or a collection playbook's "
                        f"name; repeat for several, run in order (default: {SITE}, then "
                        f"{MONITORING} when the inventory has {model.MONITORING} hosts: the "
                        "whole platform)")
    parser.add_argument("--diff", action="store_true",
                        help="show each changed text file's unified diff (always in json)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.set_defaults(handler=run)


def playbook_argument(value: str) -> str:
    """What ansible-playbook is given: a file as an absolute path, else a collection playbook's
    name (namespace.collection.name), which it resolves on its collections path."""
    path = Path(value)
    if path.is_file():
        return str(path.resolve())
    parts = value.split(".")
    if len(parts) >= 3 and all(part.isidentifier() for part in parts) and "/" not in value:
        return value
    raise InputError(f"--playbook {value}: no such file, nor a collection playbook name. Fix: "
                     f"pass a playbook file, or a name such as {SITE}")


def environment(sources: inventory.Sources) -> dict[str, str]:
    """The child's environment (:func:`ansible_child.environment`), with the collection this
    package belongs to first on the collections path (its callback and playbooks), and the
    callback as the stdout one."""
    from ansible import constants as C

    env = ansible_child.environment(sources)
    own = paths.collections_path()
    configured = [str(item) for item in C.COLLECTIONS_PATHS]
    search = [str(own)] if own else []
    search += [item for item in configured if item not in search]
    env.update(ANSIBLE_COLLECTIONS_PATH=os.pathsep.join(search),
               ANSIBLE_STDOUT_CALLBACK=CALLBACK, ANSIBLE_NOCOLOR="1")
    return env


class Progress:
    """The play and the hosts done with the current task, on standard error: a line per play,
    and on a terminal one line rewritten per task (elsewhere a task's line every
    :data:`QUIET_SECONDS`)."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.live = stream.isatty()
        self.said = time.monotonic()
        self.plays = 0
        self.tasks = 0
        self.hosts: list[str] | None = None
        self.done: set[str] = set()
        self.task = ""

    def event(self, event: Mapping[str, Any]) -> None:
        kind = event.get("event")
        if kind == "play":
            self.plays += 1
            self.hosts = event.get("hosts")
            count = f"{len(self.hosts)} host(s)" if self.hosts is not None else "its hosts"
            self._line(f"kafkaform drift: play {self.plays}: {event.get('name')} on {count}")
        elif kind == "task":
            self.tasks += 1
            self.task, self.done = str(event.get("name")), set()
            self._status()
        elif kind == "result":
            self.done.add(str(event.get("host")))
            self._status()

    def _line(self, text: str) -> None:
        self.stream.write(("\r\033[K" if self.live else "") + text + "\n")
        self.stream.flush()
        self.said = time.monotonic()

    def _status(self) -> None:
        total = f"/{len(self.hosts)}" if self.hosts is not None else ""
        status = f"  task {self.tasks}: {self.task}: {len(self.done)}{total} host(s) done"
        if self.live:
            self.stream.write("\r\033[K" + status)
            self.stream.flush()
        elif time.monotonic() - self.said >= QUIET_SECONDS:  # a log: a line now and then
            self._line(status)

    def end(self, seconds: float) -> None:
        self._line(f"kafkaform drift: {self.plays} play(s), {self.tasks} task(s) checked in "
                   f"{seconds:.0f} s")


def events(lines: Iterable[str], passthrough: IO[str]) -> Iterator[dict[str, Any]]:
    """The callback's events; any other line (a plugin printing on its own) is passed on."""
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            event = None
        if isinstance(event, dict) and "event" in event:
            yield event
        elif line.strip():
            passthrough.write(line if line.endswith("\n") else line + "\n")


@dataclass(frozen=True)
class Outcome:
    summary: drift.Summary
    returncode: int
    errors: list[str]


def check_run(argv: list[str], env: dict[str, str], pass_fds: list[int]) -> Outcome:
    """Run the check, summarising its events as they come; Ansible's own standard error is
    shown as it comes, its last lines kept to say why a run stopped."""
    summary = drift.Summary()
    progress = Progress(sys.stderr)
    said: list[str] = []
    started = time.monotonic()
    with subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          stdin=subprocess.DEVNULL, text=True, pass_fds=pass_fds) as child:
        output, errors = child.stdout, child.stderr
        if output is None or errors is None:  # never: both are pipes above
            raise RuntimeError("ansible-playbook's output is not a pipe")

        def relay() -> None:
            for line in errors:
                sys.stderr.write(line)
                said.append(line.rstrip("\n"))

        relaying = threading.Thread(target=relay, daemon=True)
        relaying.start()
        for event in events(output, sys.stderr):
            progress.event(event)
            summary.add(event)
        relaying.join()
    progress.end(time.monotonic() - started)
    summary.finish()
    return Outcome(summary, child.returncode, said)


def why_stopped(said: list[str]) -> str:
    """Ansible's own words for a run that stopped: its error lines, else its last lines."""
    errors = [line for line in said if "ERROR" in line]
    chosen = errors or [line for line in said if line.strip()]
    return " / ".join(line.strip() for line in chosen[-ERROR_LINES:]) or "no message"


def require_platform_hosts(view: model.InventoryView, matched: list[str], source: str) -> None:
    """The site playbook manages the kafkaform groups' hosts only: any other host would be
    reported "in line" for want of a task, which says nothing."""
    managed = {*view.cluster_hosts(), *view.members(model.MONITORING)}
    if not managed.intersection(matched):
        raise InputError(f"no host of {source} matched here is in a kafkaform group "
                         f"({', '.join((*model.GROUPS, model.MONITORING))}), the hosts "
                         f"{SITE} manages. Fix: put the cluster's hosts in those groups (see "
                         "inventory/lab/hosts.yml), or pass --playbook for other hosts")


def default_playbooks(view: model.InventoryView) -> list[str]:
    """The whole platform: the site playbook, and the monitoring one where the inventory has
    monitoring hosts (without them the platform has no monitoring to compare)."""
    return [SITE, MONITORING] if view.members(model.MONITORING) else [SITE]


def run(args: argparse.Namespace) -> int:
    sources = inventory.Sources.from_args(args)
    source = str(sources)
    # Each playbook as the operator knows it, and as ansible-playbook is given it.
    playbooks = [(name, playbook_argument(name)) for name in args.playbook or ()]
    # Read here first: a missing inventory, a vault secret missing, a --limit matching nothing
    # are said in a line now, not after the minutes a check run of the site playbook takes.
    view, matched = inventory.select(sources, args.limit)
    if not matched:
        where = f"--limit {args.limit!r}" if args.limit else "the inventory"
        raise InputError(f"no host of {source} matches {where}. Fix: pass a host pattern of "
                         f"that inventory (`ansible-inventory -i {source} --graph` lists them)")
    if not playbooks:
        require_platform_hosts(view, matched, source)
        playbooks = [(name, name) for name in default_playbooks(view)]
    names = [pair[0] for pair in playbooks]
    argv = [ansible_child.executable("ansible-playbook"), "--check", "--diff",
            *(pair[1] for pair in playbooks)]
    for item in sources.resolved():
        argv += ["-i", item]
    if args.limit:
        argv += ["--limit", args.limit]
    prompted = ansible_child.Prompted.of(sources)
    print(f"kafkaform drift: {', '.join(names)} in check mode on {len(matched)} host(s) of "
          f"{source}", file=sys.stderr)
    try:
        outcome = check_run(argv + prompted.argv, environment(sources), prompted.fds)
    finally:
        prompted.close()
    return report(outcome, args, names)


def report(outcome: Outcome, args: argparse.Namespace, playbooks: list[str]) -> int:
    """Print the summary and say what the run found: the exit code."""
    summary = outcome.summary
    problems = summary.problems()
    stopped = outcome.returncode != 0 and not problems
    if args.format == "json":
        data = {"playbooks": playbooks, "limit": args.limit, **drift.to_dict(summary),
                "ansible_exit": outcome.returncode,
                "stopped": why_stopped(outcome.errors) if stopped else None}
        json.dump(data, sys.stdout, indent=2)
        print()
    else:
        sys.stdout.write(drift.text(summary, args.diff))
    if args.format == "json":  # the text above shows them under their hosts
        for problem in problems:
            print(f"kafkaform drift: could not tell: {problem.text()}", file=sys.stderr)
    if stopped:
        print(f"kafkaform drift: ansible-playbook stopped (exit {outcome.returncode}): "
              f"{why_stopped(outcome.errors)}", file=sys.stderr)
    if problems or stopped:
        return 2
    if not summary.hosts:
        print("kafkaform drift: the playbook ran on no host (none of its plays' hosts is in "
              "the inventory or --limit): nothing was checked", file=sys.stderr)
        return 2
    drifted = summary.drifted()
    print(f"kafkaform drift: {len(drifted)} of {len(summary.hosts)} host(s) differ"
          if drifted else f"kafkaform drift: all {len(summary.hosts)} host(s) in line",
          file=sys.stderr)
    return 1 if drifted else 0
