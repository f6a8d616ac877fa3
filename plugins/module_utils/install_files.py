"""Install several small files on a host in one call: each file's content, owner, group and mode,
written only where they differ. A role's certificates, its job's modules or its helpers then cost
one round trip to the host instead of two per file (a stat, then a copy or a file check).

Plain Python 3 with no import beyond the standard library, so the module install_files runs it as
it is and the unit tests run it on the control node.
"""

from __future__ import annotations

import grp
import os
import pwd
import stat
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


def _write(dest: str, data: bytes, mode: int, uid: int, gid: int) -> None:
    """Write beside the file, set its owner and mode, then rename it over the old one: a reader
    never sees half a file or a key with loose permissions."""
    directory = os.path.dirname(dest) or "."
    descriptor, temporary = tempfile.mkstemp(prefix=".kafkaform-", dir=directory)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.chown(temporary, uid, gid)
        os.chmod(temporary, mode)
        os.replace(temporary, dest)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def install(files: Iterable[Mapping[str, Any]], check_mode: bool = False,
            want_diff: bool = False) -> dict[str, Any]:
    """Install each of ``files`` (``dest``, ``content`` as bytes, ``owner``, ``group`` and
    ``mode`` as an octal string or its number); in check mode, only tell what would change.

    Returns ``changed``, ``files`` (each ``dest`` with what changed: ``content``, ``owner``,
    ``group``, ``mode``) and, with ``want_diff``, ``diff`` (one entry a changed content).
    Raises ValueError naming the file and the reason on an unknown owner or group, a bad mode or
    a missing directory.
    """
    reports: list[dict[str, Any]] = []
    diffs: list[dict[str, str]] = []
    for item in files:
        dest = str(item["dest"])
        data: bytes = item["content"]
        mode = _mode(dest, item["mode"])
        uid, gid = _ids(str(item["owner"]), str(item["group"]))
        if not os.path.isdir(os.path.dirname(dest) or "."):
            raise ValueError(f"{dest}: its directory does not exist; create it first")
        before = _read(dest)
        changes: list[str] = []
        if before != data:
            changes.append("content")
            if want_diff:
                diffs.append(_diff(dest, before, data))
            if not check_mode:
                _write(dest, data, mode, uid, gid)
        else:
            status = os.lstat(dest)
            if status.st_uid != uid:
                changes.append("owner")
            if status.st_gid != gid:
                changes.append("group")
            if stat.S_IMODE(status.st_mode) != mode:
                changes.append("mode")
            if not check_mode:
                if "owner" in changes or "group" in changes:
                    os.chown(dest, uid, gid)
                if "mode" in changes:
                    os.chmod(dest, mode)
        reports.append({"dest": dest, "changes": changes})
    result: dict[str, Any] = {"changed": any(r["changes"] for r in reports), "files": reports}
    if want_diff:
        result["diff"] = diffs
    return result
