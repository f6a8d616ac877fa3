"""Install several small files on a host in one call: each file's content, owner, group and mode,
written only where they differ, and the directories they go into. A role's certificates, its
job's modules or its helpers then cost one round trip to the host instead of two per file (a
stat, then a copy or a file check), and its directories none of their own.

Plain Python 3 with no import beyond the standard library, so the module install_files runs it as
it is and the unit tests run it on the control node.
"""

from __future__ import annotations

import grp
import os
import pwd
import shlex
import stat
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from typing import Any

#: Larger or binary files are reported as changed without a text diff.
DIFF_LIMIT = 64 * 1024


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def _ids(owner: str, group: str) -> tuple[int, int]:
    try:
        uid = pwd.getpwnam(owner).pw_uid
    except KeyError:
        raise ValueError(f"owner {owner!r} does not exist on this host") from None
    try:
        gid = grp.getgrnam(group).gr_gid
    except KeyError:
        raise ValueError(f"group {group!r} does not exist on this host") from None
    return uid, gid


def _mode(dest: str, value: int | str) -> int:
    """An octal string ("0640"), or the number YAML made of an unquoted 0640."""
    if isinstance(value, int):
        return value
    try:
        return int(value, 8)
    except ValueError:
        raise ValueError(f"{dest}: mode {value!r} is not an octal number such as '0640'") from None


def _text(data: bytes | None) -> str | None:
    if data is None:
        return ""
    if len(data) > DIFF_LIMIT or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _diff(dest: str, before: bytes | None, after: bytes) -> dict[str, str]:
    old, new = _text(before), _text(after)
    if old is None or new is None:
        return {"before_header": dest, "after_header": dest,
                "before": "", "after": f"(binary or large content of {len(after)} bytes)\n"}
    return {"before_header": dest if before is not None else "(absent)", "after_header": dest,
            "before": old, "after": new}


def _validated(dest: str, validate: str | None) -> list[str] | None:
    """The argument vector of a file's ``validate`` command, checked before anything is written."""
    if validate is None:
        return None
    if "%s" not in validate:
        raise ValueError(f"{dest}: validate {validate!r} must contain %s, the new file's path")
    return shlex.split(validate)


def _check(dest: str, argv: list[str], temporary: str) -> None:
    """Run the validate command on the new file; refuse it, naming the command and its output."""
    command = [word.replace("%s", temporary) for word in argv]
    try:
        run = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as error:
        raise ValueError(f"{dest}: cannot run validate command {command[0]!r}: {error}") from None
    if run.returncode != 0:
        output = (run.stderr or run.stdout).strip()[-2000:]
        raise ValueError(f"{dest}: the new content fails `{shlex.join(argv)}` (exit "
                         f"{run.returncode}), so the file was left as it was: {output}")


def _write(dest: str, data: bytes, mode: int, uid: int, gid: int,
           validate: list[str] | None = None) -> None:
    """Write beside the file, set its owner and mode, validate it, then rename it over the old
    one: a reader never sees half a file, a key with loose permissions or a refused file."""
    directory = os.path.dirname(dest) or "."
    descriptor, temporary = tempfile.mkstemp(prefix=".kafkaform-", dir=directory)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.chown(temporary, uid, gid)
        os.chmod(temporary, mode)
        if validate is not None:
            _check(dest, validate, temporary)
        os.replace(temporary, dest)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def _attributes(path: str, mode: int, uid: int, gid: int, check_mode: bool) -> list[str]:
    """Set an existing path's owner, group and mode where they differ; what changed."""
    status = os.stat(path)
    changes = [name for name, differs in (("owner", status.st_uid != uid),
                                          ("group", status.st_gid != gid),
                                          ("mode", stat.S_IMODE(status.st_mode) != mode))
               if differs]
    if not check_mode:
        if "owner" in changes or "group" in changes:
            os.chown(path, uid, gid)
        if "mode" in changes:
            os.chmod(path, mode)
    return changes


def _directory(item: Mapping[str, Any], check_mode: bool, planned: set[str]) -> list[str]:
    """``ansible.builtin.file`` with ``state: directory``: the directory and any missing parent
    created with its owner, group and mode, or an existing one's attributes set; what changed.
    In check mode, the directories it would create are added to ``planned``."""
    path = os.path.normpath(str(item["path"]))
    mode = _mode(path, item["mode"])
    uid, gid = _ids(str(item["owner"]), str(item["group"]))
    if os.path.isdir(path):
        return _attributes(path, mode, uid, gid, check_mode)
    if os.path.lexists(path):
        raise ValueError(f"{path}: exists and is not a directory; move it away first")
    missing = [path]
    while not os.path.isdir(os.path.dirname(missing[-1])) \
            and os.path.dirname(missing[-1]) != missing[-1]:
        missing.append(os.path.dirname(missing[-1]))
    for directory in reversed(missing):
        if check_mode:
            planned.add(directory)
        elif not os.path.isdir(directory):
            try:
                os.mkdir(directory)
            except FileExistsError:  # made meanwhile by another host of a shared filesystem
                if not os.path.isdir(directory):
                    raise
            _attributes(directory, mode, uid, gid, check_mode)
    return ["created"]


def install(files: Iterable[Mapping[str, Any]], check_mode: bool = False,
            want_diff: bool = False,
            directories: Iterable[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """Install each of ``files`` (``dest``, ``content`` as bytes, ``owner``, ``group``,
    ``mode`` as an octal string or its number, and optionally ``validate``: a command with ``%s``
    that must accept a changed content before it replaces the file); in check mode, only tell
    what would change (as ansible.builtin.template, without validating).

    ``directories`` (``path``, ``owner``, ``group``, ``mode``) are made first, missing parents
    with the same attributes, as ``ansible.builtin.file`` makes them.

    Returns ``changed``, ``directories`` (each ``path`` with what changed: ``created``, ``owner``,
    ``group``, ``mode``), ``files`` (each ``dest`` with what changed: ``content``, ``owner``,
    ``group``, ``mode``) and, with ``want_diff``, ``diff`` (one entry per changed content).
    Raises ValueError naming the path and the reason on an unknown owner or group, a bad mode, a
    missing directory, a file where a directory should be or a content its validate command
    refuses.
    """
    planned: set[str] = set()
    made = [{"path": str(item["path"]), "changes": _directory(item, check_mode, planned)}
            for item in directories]
    reports: list[dict[str, Any]] = []
    diffs: list[dict[str, str]] = []
    for item in files:
        dest = str(item["dest"])
        data: bytes = item["content"]
        mode = _mode(dest, item["mode"])
        validate = _validated(dest, item.get("validate"))
        uid, gid = _ids(str(item["owner"]), str(item["group"]))
        parent = os.path.dirname(dest) or "."
        if not os.path.isdir(parent) and os.path.normpath(parent) not in planned:
            raise ValueError(f"{dest}: its directory does not exist; create it first")
        before = _read(dest)
        changes: list[str] = []
        if before != data:
            changes.append("content")
            if want_diff:
                diffs.append(_diff(dest, before, data))
            if not check_mode:
                _write(dest, data, mode, uid, gid, validate)
        else:
            changes = _attributes(dest, mode, uid, gid, check_mode)
        reports.append({"dest": dest, "changes": changes})
    result: dict[str, Any] = {"changed": any(r["changes"] for r in [*made, *reports]),
                              "directories": made, "files": reports}
    if want_diff:
        result["diff"] = diffs
    return result
