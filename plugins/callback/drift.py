"""kafkaform.platform.drift: a check run's task results as JSON lines, for ``kafkaform drift``.

``kafkaform drift`` runs ``ansible-playbook --check --diff`` with this stdout callback and reads
one JSON object a line: the plays, the tasks, every host's result of a task (its status, the
file it names, its diffs, what Ansible said when it failed) and the run's stats. The summary is
kafkaform's (plugins/plugin_utils/kafkaform/drift.py); this plugin only reports, and never
passes on a result Ansible censored for ``no_log``: such a record carries the task's name and
status, no diff and no message.
"""

from __future__ import annotations

DOCUMENTATION = r"""
name: drift
type: stdout
author: kafkaform (@kafkaform)
short_description: Task results as JSON lines, for kafkaform drift
description:
  - Writes one JSON object a line on standard output, C(event) naming its kind.
  - C(play) (its name, the names of its hosts), C(task) (its name, whether it is a handler),
    C(result) (host, task, action, status C(ok), C(changed), C(failed), C(ignored),
    C(skipped) or C(unreachable), the loop item, C(no_log), the diffs, the C(dest) or C(path)
    the module names, the files and directories M(kafkaform.platform.install_files) would
    change, and what Ansible said for a failure) and C(stats) (the recap per host).
  - A result censored for C(no_log) carries no diff, no path and no message.
  - Meant for C(kafkaform drift), which runs C(ansible-playbook --check --diff) with it.
"""

# Ansible reads the documentation above before any import.
import json
from collections.abc import Iterator, Mapping
from typing import Any

from ansible.errors import AnsibleError
from ansible.plugins.callback import CallbackBase

#: The result keys a file module names its file with, in the order they are trusted.
PATH_KEYS = ("dest", "path")
#: A failure's own words, in the order Ansible's default output prefers them.
MESSAGE_KEYS = ("msg", "stderr", "module_stderr", "exception")
#: At most this many characters of a failure's message: enough to say why, never a file.
MESSAGE_LIMIT = 2000


def _named_path(result: Mapping[str, Any]) -> str | None:
    """The file a module's result names: its own keys first, then its arguments (a check run's
    copy of a missing file returns only its arguments)."""
    invocation = result.get("invocation")
    arguments = invocation.get("module_args") if isinstance(invocation, Mapping) else None
    for source in (result, arguments if isinstance(arguments, Mapping) else {}):
        for key in PATH_KEYS:
            if isinstance(source.get(key), str):
                return str(source[key])
    return None


def _message(result: Mapping[str, Any]) -> str:
    for key in MESSAGE_KEYS:
        value = result.get(key)
        if value:
            return str(value)[:MESSAGE_LIMIT]
    return ""


def _changed_paths(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The files and directories kafkaform.platform.install_files names with their changes
    (content, owner, group, mode): one task installs several, with a diff for none of them
    when the task sets ``diff: false`` (keys)."""
    entries = [*(result.get("files") or []), *(result.get("directories") or [])]
    return [{"path": entry.get("dest") or entry.get("path"), "changes": list(entry["changes"])}
            for entry in entries if isinstance(entry, Mapping) and entry.get("changes")
            and isinstance(entry["changes"], list)]


def _diffs(result: Mapping[str, Any]) -> list[Any]:
    diff = result.get("diff")
    if isinstance(diff, Mapping):
        return [dict(diff)]
    return [dict(entry) for entry in diff if isinstance(entry, Mapping)] if isinstance(
        diff, list) else []


class CallbackModule(CallbackBase):  # type: ignore[misc]  # untyped base
    """One JSON object a line for each play, task, task result and the recap."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "kafkaform.platform.drift"

    def __init__(self) -> None:
        super().__init__()
        self._task = ""

    def _emit(self, event: str, **fields: Any) -> None:
        # Display, not print: Ansible serialises its workers' output through it.
        self._display.display(json.dumps({"event": event, **fields}, default=str))

    def v2_playbook_on_play_start(self, play: Any) -> None:
        hosts: list[str] | None
        try:
            # What the strategy will run on: the inventory's hosts for the play's pattern.
            # The variable manager keeps the inventory only as a private attribute.
            inventory = play.get_variable_manager()._inventory
            hosts = [host.name for host in inventory.get_hosts(play.hosts, order=play.order)]
        except (AttributeError, TypeError, AnsibleError):  # progress only: count unknown
            hosts = None
        self._emit("play", name=play.get_name().strip(), hosts=hosts)

    def v2_playbook_on_task_start(self, task: Any, is_conditional: bool) -> None:
        self._task = task.get_name().strip()
        self._emit("task", name=self._task, handler=False)

    def v2_playbook_on_handler_task_start(self, task: Any) -> None:
        self._task = task.get_name().strip()
        self._emit("task", name=self._task, handler=True)

    def _results(self, result: Any, status: str) -> Iterator[dict[str, Any]]:
        """The records of a task result: one, or one per loop item with its own status."""
        data: Mapping[str, Any] = result.result
        base = {"host": result.host.get_name(), "task": result.task.get_name().strip(),
                "action": result.task.action}
        items = data.get("results")
        if not isinstance(items, list) or not items:
            yield {**base, **self._record(data, status)}
            return
        for item in items:
            if isinstance(item, Mapping):
                yield {**base, **self._record(item, self._item_status(item, status))}

    @staticmethod
    def _item_status(item: Mapping[str, Any], task_status: str) -> str:
        if item.get("failed"):
            return "ignored" if task_status == "ignored" else "failed"
        if item.get("unreachable"):
            return "unreachable"
        if item.get("skipped"):
            return "skipped"
        return "changed" if item.get("changed") else "ok"

    @staticmethod
    def _record(data: Mapping[str, Any], status: str) -> dict[str, Any]:
        no_log = bool(data.get("_ansible_no_log")) or "censored" in data
        if status == "ok" and data.get("changed"):
            status = "changed"
        record: dict[str, Any] = {"status": status, "no_log": no_log,
                                  "item": data.get("_ansible_item_label")}
        if no_log:
            # Ansible censored the result already; even the item label may be a secret.
            record["item"] = None
            return record
        record.update(path=_named_path(data), diffs=_diffs(data),
                      changed_paths=_changed_paths(data))
        if status in ("failed", "ignored", "unreachable"):
            record["message"] = _message(data)
        return record

    def _report(self, result: Any, status: str) -> None:
        for record in self._results(result, status):
            self._emit("result", **record)

    def v2_runner_on_ok(self, result: Any) -> None:
        self._report(result, "ok")

    def v2_runner_on_failed(self, result: Any, ignore_errors: bool = False) -> None:
        self._report(result, "ignored" if ignore_errors else "failed")

    def v2_runner_on_skipped(self, result: Any) -> None:
        self._report(result, "skipped")

    def v2_runner_on_unreachable(self, result: Any) -> None:
        self._report(result, "unreachable")

    def v2_playbook_on_no_hosts_matched(self) -> None:
        self._emit("no_hosts")

    def v2_playbook_on_stats(self, stats: Any) -> None:
        recap = {host: stats.summarize(host) for host in sorted(stats.processed)}
        self._emit("stats", hosts=recap)
