"""How `kafkaform status` reads the hosts: one `ansible` ad-hoc call over every host it asks, with
the operator's inventory, vault options and connection (their access to the hosts is the
credential), each host running :data:`PROBE` in parallel (one fork a host).

The probe only reads: the files it is given (certificates, the pipeline's progress file), the
newest numbered entry of a directory (a checkpoint's commits) and the output of the hosts' own
tools (the brokers' admin helper, ZooKeeper's four-letter-word probe, curl against Prometheus),
all answered as one JSON object. No listener of the cluster is opened to the control node.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import ansible_child, inventory

#: Run on each host by its own python3 (every host Ansible manages has one), as argv[1] the
#: host's Ask as JSON. Standard library only; Python 3.6 and later.
PROBE = r"""
import json, os, socket, ssl, subprocess, sys, time
ask = json.loads(sys.argv[1])
found = {"now": time.time(), "files": {}, "newest": {}, "served": {}, "run": {}}
for path in ask["files"]:
    try:
        with open(path, encoding="utf-8") as handle:
            found["files"][path] = {"text": handle.read()}
    except OSError as error:
        found["files"][path] = {"error": error.strerror or str(error)}
for path in ask["newest"]:
    try:
        names = [name for name in os.listdir(path) if name.isdigit()]
    except OSError as error:
        found["newest"][path] = {"error": error.strerror or str(error)}
        continue
    newest = max(names, key=int) if names else None
    found["newest"][path] = {"name": newest, "mtime": os.stat(os.path.join(path, newest)).st_mtime
                             if newest else None}
socket.setdefaulttimeout(ask["timeout"])
for url in ask["served"]:
    host, _, port = url.split("//")[-1].rpartition(":")
    try:
        found["served"][url] = {"text": ssl.get_server_certificate((host.strip("[]"), int(port)))}
    except (OSError, ValueError) as error:
        found["served"][url] = {"error": str(error)}
for name, argv in ask["run"].items():
    try:
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=ask["timeout"])
        found["run"][name] = {"rc": done.returncode, "stdout": done.stdout,
                              "stderr": done.stderr[-2000:]}
    except (OSError, subprocess.TimeoutExpired) as error:
        found["run"][name] = {"rc": None, "stdout": "", "stderr": str(error)}
print(json.dumps(found))
"""

#: Seconds one tool may take on a host, and the whole call at most.
TOOL_TIMEOUT_S = 30
CALL_TIMEOUT_S = 90
#: Seconds Ansible waits for a host's connection.
CONNECT_TIMEOUT_S = 10
#: The extra variable that maps each host to its probe's command line.
COMMAND_VARIABLE = "kafkaform_status_command"


@dataclass
class Ask:
    """What to read on one host: files, the newest numbered entry of directories, the
    certificates TLS listeners of the host serve (``https://address:port``, read as a client
    does, nothing verified), and tools to run by name."""

    files: list[str] = field(default_factory=list)
    newest: list[str] = field(default_factory=list)
    served: list[str] = field(default_factory=list)
    run: dict[str, list[str]] = field(default_factory=dict)

    def argv(self) -> list[str]:
        spec = {"files": self.files, "newest": self.newest, "served": self.served,
                "run": self.run, "timeout": TOOL_TIMEOUT_S}
        return ["python3", "-c", PROBE, json.dumps(spec)]

    def command(self) -> str:
        """The probe as one shell command line, for Ansible's raw module."""
        return shlex.join(self.argv())


@dataclass(frozen=True)
class Tool:
    """One tool's run on a host: its exit code (None when it could not run), its output."""

    rc: int | None
    stdout: str
    stderr: str

    def json(self) -> Any:
        """The tool's answer: the last line of its stdout that is JSON, else None."""
        return last_json(self.stdout)

    def why(self) -> str:
        """Why the tool gave no answer, in one line."""
        text = (self.stderr or self.stdout).strip().splitlines()
        return f"exit {self.rc}: {text[-1] if text else 'no output'}"


def last_json(text: str) -> Any:
    """The last line of ``text`` that is a JSON object (a terminal's CR stripped), else None:
    what a tool or the probe answers after any line of log."""
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


@dataclass(frozen=True)
class Answer:
    """One host's answer: its clock, and what it read; ``problem`` names why there is none (the
    host unreachable, the probe failed)."""

    host: str
    problem: str = ""
    now: float = 0.0
    files: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    newest: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    run: Mapping[str, Tool] = field(default_factory=dict)
    served: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def tool(self, name: str) -> Tool:
        return self.run.get(name) or Tool(None, "", self.problem or "not run")


def answer(host: str, result: Mapping[str, Any]) -> Answer:
    """A host's Answer from its result in the ansible.posix.json callback's report."""
    if result.get("unreachable"):
        return Answer(host, f"Ansible cannot reach it: {_first_line(result.get('msg'))}")
    # raw over SSH runs in a terminal: stderr may be mixed in, each line ending in CR LF.
    found = last_json(str(result.get("stdout") or ""))
    if not isinstance(found, dict) or "now" not in found:
        why = result.get("stderr") or result.get("module_stderr") or result.get("msg")
        return Answer(host, f"the probe failed: {_first_line(why)}")
    return Answer(host, "", float(found["now"]), found["files"], found["newest"],
                  {name: Tool(r["rc"], r["stdout"], r["stderr"])
                   for name, r in found["run"].items()}, found.get("served", {}))


def _first_line(text: Any) -> str:
    lines = str(text or "no message").strip().splitlines()
    return lines[0][:300] if lines else "no message"


def answers(report: Mapping[str, Any], hosts: list[str]) -> dict[str, Answer]:
    """Each host's Answer from the callback's whole report; a host missing from it (Ansible
    stopped before it) has a problem saying so."""
    results: dict[str, Any] = {}
    for play in report.get("plays") or []:
        for task in play.get("tasks") or []:
            results.update(task.get("hosts") or {})
    return {host: answer(host, results[host]) if host in results
            else Answer(host, "Ansible gave no answer for it") for host in hosts}


def ansible_command(sources: inventory.Sources, hosts: list[str], extra_vars: str) -> list[str]:
    """The ad-hoc call: every host of ``hosts`` runs its probe (``extra_vars`` maps each to its
    command line), all at once. The vault secrets go through the environment and the prompted
    ones' pipes (:mod:`.ansible_child`)."""
    argv = [ansible_child.executable("ansible"), ",".join(hosts)]
    for source in sources.resolved():
        argv += ["-i", source]
    return [*argv, "--forks", str(max(len(hosts), 1)), "--timeout", str(CONNECT_TIMEOUT_S),
            # raw: no module to build and copy to each host, half of the call's time. The space:
            # an argument that begins with a brace, Ansible reads as JSON.
            "-m", "ansible.builtin.raw", "-a", f" {{{{ {COMMAND_VARIABLE}[inventory_hostname] }}}}",
            "-e", f"@{extra_vars}"]


def extra_vars(asks: Mapping[str, Ask]) -> str:
    """The YAML extra variables mapping each host to its command line, each marked !unsafe:
    Ansible must not template the probe's braces (a JSON string is a YAML scalar as it is)."""
    lines = [f"{COMMAND_VARIABLE}:"]
    lines += [f"  {json.dumps(host)}: !unsafe {json.dumps(ask.command())}"
              for host, ask in asks.items()]
    return "\n".join(lines) + "\n"


def ask_hosts(sources: inventory.Sources, asks: Mapping[str, Ask]) -> dict[str, Answer]:
    """Run each host's probe through Ansible; every host of ``asks`` gets an Answer."""
    hosts = list(asks)
    try:
        return answers(report(sources, asks), hosts)
    except AnsibleFailed as error:
        return {host: Answer(host, str(error)) for host in hosts}


class AnsibleFailed(Exception):
    """The ad-hoc call gave no report: every host is unanswered, for this reason."""


def json_document(text: str) -> Any:
    """The JSON document ansible.posix.json printed, with what other callbacks the operator
    enables (profile_tasks, say) print before and after it on the same stdout."""
    start = 0 if text.startswith("{") else text.find("\n{") + 1
    return json.JSONDecoder().raw_decode(text, start)[0]


def report(sources: inventory.Sources, asks: Mapping[str, Ask]) -> dict[str, Any]:
    """The ansible.posix.json callback's report of the probes' run."""
    hosts = list(asks)
    with tempfile.TemporaryDirectory(prefix="kafkaform-status-") as scratch:
        extra = Path(scratch) / "probes.yml"
        extra.write_text(extra_vars(asks), encoding="utf-8")
        env = {**ansible_child.environment(sources), "ANSIBLE_LOAD_CALLBACK_PLUGINS": "1",
               "ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json",
               "ANSIBLE_DEPRECATION_WARNINGS": "0", "ANSIBLE_NOCOLOR": "1"}
        prompted = ansible_child.Prompted.of(sources)
        try:
            done = subprocess.run(ansible_command(sources, hosts, str(extra)) + prompted.argv,
                                  capture_output=True, text=True, env=env,
                                  timeout=CALL_TIMEOUT_S, check=False, stdin=subprocess.DEVNULL,
                                  pass_fds=prompted.fds)
        except subprocess.TimeoutExpired as error:
            raise AnsibleFailed(f"Ansible did not finish within {CALL_TIMEOUT_S} s") from error
        finally:
            prompted.close()
    try:
        found = json_document(done.stdout)
    except ValueError:
        found = None
    if not isinstance(found, dict):
        raise AnsibleFailed(f"ansible exited {done.returncode}: "
                            f"{_first_line(done.stderr or done.stdout)}")
    return found
