"""The os_tuning role's one read of a host (:data:`.os_tuning.HOST_PROBE`), sorted into the shapes
the disk and kernel decisions read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The exit codes of the probe's commands that are answers, not failures (:data:`HOST_PROBE`).
ANSWER_CODES = {"blkid": (0, 2, 8), "zero": (0, 1), "findmnt": (0,)}


def probe_answers(probe_stdout: str) -> list[tuple[str, list[str]]]:
    """:data:`HOST_PROBE`'s output as pairs: an answer's "@@" line without the "@@", and the
    non-empty lines after it."""
    answers: list[tuple[str, list[str]]] = []
    for line in probe_stdout.splitlines():
        if line.startswith("@@"):
            answers.append((line[2:], []))
        elif answers and line:
            answers[-1][1].append(line)
    return answers


def host_report(context: Mapping[str, Any], probe_stdout: str) -> dict[str, Any]:
    """What :data:`HOST_PROBE` printed, in the shapes the plans read.

    ``blkid`` and ``zero`` are lists of ``{item, rc, stdout}``, as a registered loop would be;
    ``paths`` maps each existing mount point to its owner, group, mode and kind; ``problem`` is
    the stop message when one of the probe's commands failed rather than answered, else "".
    """
    text: dict[str, list[str]] = {}
    probes: dict[str, list[dict[str, Any]]] = {"blkid": [], "zero": []}
    unmounted: list[str] = []
    failed: list[str] = []
    for head, lines in probe_answers(probe_stdout):
        name, _space, rest = head.partition(" ")
        if name in ANSWER_CODES:
            code, _space, device = rest.partition(" ")
            if int(code) not in ANSWER_CODES[name]:
                failed.append(f"{name} {device}".rstrip() + f" exited with {code}")
            if name != "findmnt":
                probes[name].append({"item": device, "rc": int(code), "stdout": "\n".join(lines)})
                continue
        if name == "unmounted":
            unmounted.append(rest)
            name = "occupied"
        text.setdefault(name, []).extend(lines)
    paths = {}
    for line in text.get("path", []):
        owner, group, mode, kind, path = line.split("|", 4)
        paths[path] = {"owner": owner, "group": group, "mode": mode, "kind": kind}
    return {
        **{name: "\n".join(text.get(name, [])) for name in
           ("sysctl", "stat", "findmnt", "occupied", "fstab")},
        "blkid": probes["blkid"],
        "zero": [{"item": {"item": z["item"]}, "rc": z["rc"]} for z in probes["zero"]],
        "unmounted": unmounted,
        "paths": paths,
        "users": text.get("users", []),
        "problem": (f"{context['host']}: reading the host failed: {'; '.join(failed)}. Fix: run "
                    "the command by hand on the host to see why") if failed else "",
    }
