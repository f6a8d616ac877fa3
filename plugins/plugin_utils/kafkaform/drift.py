"""What a check run says differs on each host: the summary behind ``kafkaform drift``.

The run is ``ansible-playbook --check --diff`` with the collection's ``kafkaform.platform.drift``
callback (plugins/callback/drift.py), whose JSON lines :class:`Summary` reads. A changed result
that names a file (a diff's header, the module's ``dest`` or ``path``, an install_files entry) is
a file that would change, with a short unified diff of its text; any other changed result (a
package, a service to start, a user) is that task's name. A result Ansible censored for
``no_log`` shows only :data:`HIDDEN`. A host a task failed on, or that was unreachable, is one the
run could not tell about: its drift may be incomplete, and the run is no "no drift".
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: What stands for anything a no_log task would show.
HIDDEN = "(content hidden: no_log)"
#: A file's diff is cut after this many lines: enough to see what drifted, not a whole file.
DIFF_LINES = 40
#: Modules whose no_log result is a file's (its path hidden too); other no_log tasks are
#: changes by name.
FILE_MODULES = frozenset({"copy", "template", "lineinfile", "blockinfile", "replace", "file",
                          "ini_file", "assemble", "get_url", "unarchive", "install_files"})
#: The suffixes lineinfile and blockinfile give a diff's header for the two parts of a file.
HEADER_SUFFIXES = (" (content)", " (file attributes)")
#: install_files' header for a file that does not exist yet.
ABSENT = "(absent)"
#: The statuses of a result the run could not tell from (see the callback's documentation).
UNTOLD = frozenset({"failed", "unreachable"})


@dataclass(frozen=True)
class FileChange:
    """A file a task would change: its path (None when no_log hides it), the task, what
    changes besides the text (``mode: 0600 -> 0644``, ``changes: owner, mode``, or
    :data:`HIDDEN`), and the text's unified diff."""

    path: str | None
    task: str
    notes: tuple[str, ...] = ()
    diff: tuple[str, ...] = ()

    @property
    def hidden(self) -> bool:
        return HIDDEN in self.notes

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "task": self.task, "hidden": self.hidden,
                "notes": list(self.notes), "diff": "\n".join(self.diff)}


@dataclass(frozen=True)
class Problem:
    """A task that failed, or a host that was unreachable, and what Ansible said; ``step``
    counts the tasks the run started before it (a loop's items share theirs)."""

    host: str
    task: str
    status: str
    message: str
    step: int = 0

    def text(self) -> str:
        what = "unreachable" if self.status == "unreachable" else "failed"
        said = f": {self.message}" if self.message else ""
        return f"{self.host}: task {self.task!r} {what}{said}"

    def to_dict(self) -> dict[str, str]:
        return {"host": self.host, "task": self.task, "status": self.status,
                "message": self.message}


@dataclass
class HostDrift:
    """One host's differences from what the playbook would make of it."""

    name: str
    files: list[FileChange] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def state(self) -> str:
        if self.problems:
            return "unknown"
        return "drift" if self.files or self.changes else "in line"

    def to_dict(self) -> dict[str, Any]:
        return {"host": self.name, "state": self.state,
                "files": [change.to_dict() for change in self.files],
                "changes": list(self.changes),
                "problems": [problem.to_dict() for problem in self.problems]}


def _header_path(header: Any) -> str | None:
    if not isinstance(header, str) or not header or header == ABSENT:
        return None
    path = str(header)
    for suffix in HEADER_SUFFIXES:
        path = path.removesuffix(suffix)
    return path


def diff_path(diff: Mapping[str, Any], named: str | None) -> str | None:
    """The file a diff is about. A before_header names the file on the host; an after_header
    may name the source instead (template's rendered copy on the control node), so the module's
    own dest or path comes before it."""
    after = diff.get("after")
    dict_path = after.get("path") if isinstance(after, Mapping) else None
    if not isinstance(dict_path, str):
        dict_path = None
    return (_header_path(diff.get("before_header")) or named
            or _header_path(diff.get("after_header")) or dict_path)


def _clip(lines: list[str]) -> tuple[str, ...]:
    if len(lines) <= DIFF_LINES:
        return tuple(lines)
    return (*lines[:DIFF_LINES], f"... ({len(lines) - DIFF_LINES} more lines)")


def _absent(diff: Mapping[str, Any]) -> bool:
    """Whether a text diff creates its file: install_files says so in its header, copy and
    template give a new file's diff no before_header."""
    header = diff.get("before_header")
    return header == ABSENT or (header is None and not diff.get("before"))


def attribute_lines(diff: Mapping[str, Any]) -> tuple[str, ...]:
    """An attributes diff (file's state, lineinfile's file attributes) as ``key: before ->
    after`` lines; none for a text diff."""
    before, after = diff.get("before", ""), diff.get("after", "")
    if not isinstance(before, Mapping) and not isinstance(after, Mapping):
        return ()
    old = before if isinstance(before, Mapping) else {}
    new = after if isinstance(after, Mapping) else {}
    return tuple(f"{key}: {old.get(key, '(none)')} -> {new[key]}" for key in new
                 if key != "path" and old.get(key) != new[key])


def diff_lines(diff: Mapping[str, Any], path: str) -> tuple[str, ...]:
    """A text diff as unified diff lines, cut after :data:`DIFF_LINES`; none for attributes."""
    before, after = diff.get("before", ""), diff.get("after", "")
    if not isinstance(before, str) or not isinstance(after, str):
        return ()
    lines = list(difflib.unified_diff(
        before.splitlines(), after.splitlines(), lineterm="",
        fromfile="(absent)" if _absent(diff) else f"{path} (on the host)",
        tofile=f"{path} (from the playbook)"))
    return _clip(lines)


def _short_action(action: str) -> str:
    return action.rsplit(".", 1)[-1]


@dataclass
class Summary:
    """The check run's results, read one callback event at a time."""

    hosts: dict[str, HostDrift] = field(default_factory=dict)
    stats: dict[str, Mapping[str, int]] | None = None
    steps: int = 0

    def host(self, name: str) -> HostDrift:
        return self.hosts.setdefault(name, HostDrift(name))

    def add(self, event: Mapping[str, Any]) -> None:
        """One event of the callback: results and the recap count, the rest is progress."""
        if event.get("event") == "task":
            self.steps += 1
        elif event.get("event") == "result":
            self._result(event)
        elif event.get("event") == "stats":
            self.stats = dict(event.get("hosts") or {})
            for name in self.stats:
                self.host(name)

    def _result(self, result: Mapping[str, Any]) -> None:
        host = self.host(str(result["host"]))
        task = str(result.get("task") or result.get("action") or "(unnamed task)")
        if result.get("item") is not None:
            task = f"{task} (item {result['item']})"
        status = result.get("status")
        if status in UNTOLD:
            host.problems.append(Problem(host.name, task, str(status),
                                         str(result.get("message") or ""), self.steps))
        if status != "changed":
            return
        if result.get("no_log"):
            if _short_action(str(result.get("action", ""))) in FILE_MODULES:
                host.files.append(FileChange(None, task, notes=(HIDDEN,)))
            else:
                host.changes.append(f"{task} {HIDDEN}")
            return
        files = self._files(result, task)
        if files:
            host.files.extend(files)
        else:
            host.changes.append(task)

    @staticmethod
    def _files(result: Mapping[str, Any], task: str) -> list[FileChange]:
        """The files a changed result names, each with its diff lines."""
        named = result.get("path") if isinstance(result.get("path"), str) else None
        notes: dict[str, list[str]] = {}
        diffs: dict[str, list[str]] = {}
        for diff in result.get("diffs") or []:
            path = diff_path(diff, named)
            if path is not None:
                notes.setdefault(path, []).extend(attribute_lines(diff))
                diffs.setdefault(path, []).extend(diff_lines(diff, path))
        # install_files names each file it would change, with or without a diff (keys have none).
        for entry in result.get("changed_paths") or []:
            path = str(entry["path"])
            if not notes.get(path) and not diffs.get(path):
                notes[path] = ["changes: " + ", ".join(map(str, entry.get("changes") or []))]
        if not notes and named and _short_action(str(result.get("action", ""))) in FILE_MODULES:
            notes[named] = []  # a file module's change with no diff shown (diff: false)
        return [FileChange(path, task, tuple(lines), tuple(diffs.get(path, ())))
                for path, lines in notes.items()]

    def finish(self) -> None:
        """Keep the failures the run ended with. A failure of a task with ignore_errors, or one
        a block rescued, is part of the playbook's plan: the recap counts neither, and the run
        went on past it, so a host's failures that count are its last ones, as many as the
        recap's. Without a recap (the run stopped before it) every failure counts."""
        if self.stats is None:
            return
        for host in self.hosts.values():
            recap = self.stats.get(host.name, {})
            counted: set[tuple[str, int]] = set()
            for status, key in (("failed", "failures"), ("unreachable", "unreachable")):
                steps = sorted({p.step for p in host.problems if p.status == status})
                count = int(recap.get(key, 0))
                counted |= {(status, step) for step in steps[len(steps) - count:]} if count \
                    else set()
            host.problems = [p for p in host.problems if (p.status, p.step) in counted]

    def problems(self) -> list[Problem]:
        return [problem for host in self.hosts.values() for problem in host.problems]

    def drifted(self) -> list[HostDrift]:
        return [host for host in self.hosts.values() if host.files or host.changes]


def text(summary: Summary, with_diff: bool) -> str:
    """The summary as people read it: each host, its files (with their diffs when asked), its
    other changes, or "in line"."""
    lines: list[str] = []
    for host in summary.hosts.values():
        if host.state == "in line":
            lines.append(f"{host.name}: in line")
            continue
        lines.append(f"{host.name}: " + ("could not tell" if host.problems else "drift"))
        lines += [f"  ! {problem.text()}" for problem in host.problems]
        if host.files:
            lines.append("  files that would change:")
        for change in host.files:
            lines.append(f"    {change.path or '(path hidden: no_log)'}  [task: {change.task}]")
            shown = [*change.notes, *(change.diff if with_diff else ())]
            lines += [f"      {line}" for line in shown]
        if host.changes:
            lines.append("  other changes:")
            lines += [f"    {name}" for name in host.changes]
    return "\n".join(lines) + "\n" if lines else ""


def to_dict(summary: Summary) -> dict[str, Any]:
    return {"hosts": [host.to_dict() for host in summary.hosts.values()],
            "drifted": [host.name for host in summary.drifted()],
            "problems": [problem.to_dict() for problem in summary.problems()]}
