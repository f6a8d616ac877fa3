"""One read of a host per role: a command both engines run (the role with
``ansible.builtin.command``, pyinfra as the fact ``HostRead``) and one parser of what it prints.

The command prints one labelled line per question, ``<label> <answer>``, so the parser finds each
answer by its label, never by its position, and a question added later moves no other answer.
A multi-line answer (a configuration file) travels base64-encoded on its line.
"""

from __future__ import annotations

import base64
import binascii
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from ..paths import collection_root


@dataclass(frozen=True)
class Question:
    """One line of a host read: ``label`` and the shell snippet whose output answers it (empty
    output is an empty answer). ``present`` is a path: when it does not exist the line is left out,
    so the parser can tell "no such file" from an empty one."""

    label: str
    shell: str
    present: str = ""


def ask(label: str, shell: str, present: str = "") -> Question:
    return Question(label, shell, present)


def io_error(path: str) -> str:
    """A shell condition, true when listing ``path`` (a shell word: quoted, or a ``"$variable"``)
    fails with an I/O error, as every call on a filesystem whose disk failed does (EIO, OP-13)."""
    return f"ls -a -- {path} 2>&1 > /dev/null | grep -q 'Input/output error'"


def file_lines(label: str, path: str) -> Question:
    """The content of ``path`` (base64 on one line), or no line when there is no such file."""
    quoted = shlex.quote(path)
    return Question(label, f"base64 -w0 {quoted}", present=path)


def path_states(paths: Iterable[str]) -> list[Question]:
    """One line per path that exists, ``state:PATH MODE OWNER GROUP SHA1`` for a regular file and
    ``state:PATH MODE OWNER GROUP directory`` for a directory (MODE in octal, as ``stat -c %a``
    prints it): what ``install_files`` compares before it writes, so a role hands it this state
    and a task with nothing to change costs no call to the host (plugins/action/install_files.py).
    A symbolic link or any other kind of file answers ``other``."""
    found = []
    for path in dict.fromkeys(paths):
        if not path.startswith("/") or any(c.isspace() for c in path):
            raise ValueError(f"{path!r}: a planned path is absolute and has no white space")
        q = shlex.quote(path)
        owned = f"$(stat -c '%a %U %G' {q})"
        found.append(Question(f"state:{path}", (
            f"if [ -L {q} ]; then echo other; "
            f"elif [ -f {q} ]; then echo \"{owned} $(sha1sum < {q} | cut -c1-40)\"; "
            f"elif [ -d {q} ]; then echo \"{owned} directory\"; "
            "else echo other; fi"), present=path))
    return found


def found_paths(found: Mapping[str, str]) -> dict[str, str]:
    """Path to its state, from the lines of :func:`path_states`."""
    return {label.removeprefix("state:"): answer for label, answer in found.items()
            if label.startswith("state:")}


def unit_states(units: Iterable[str]) -> list[Question]:
    """Two lines per systemd unit: ``enabled:UNIT``, what ``systemctl is-enabled UNIT`` prints,
    and ``active:UNIT``, what ``systemctl is-active UNIT`` prints (systemctl(1)). Both are empty
    where the host has no systemctl; a unit that does not exist is neither "enabled" nor
    "active"."""
    found = []
    for unit in units:
        quoted = shlex.quote(unit)
        found += [Question(f"enabled:{unit}", f"systemctl is-enabled {quoted} 2>/dev/null"),
                  Question(f"active:{unit}", f"systemctl is-active {quoted} 2>/dev/null")]
    return found


def running_units(found: Mapping[str, str]) -> frozenset[str]:
    """The units :func:`unit_states` found both enabled and active: the ones an "enable and
    start" would leave as they are. Any other answer (disabled, static, failed, activating, no
    such unit, no answer) leaves the start to the service module."""
    return frozenset(label.removeprefix("enabled:") for label, answer in found.items()
                     if label.startswith("enabled:") and answer == "enabled"
                     and found.get(f"active:{label.removeprefix('enabled:')}") == "active")


def stopped_units(found: Mapping[str, str]) -> frozenset[str]:
    """The units :func:`unit_states` found both disabled and inactive: the ones a "disable and
    stop" would leave as they are (a unit that does not exist is not among them)."""
    return frozenset(label.removeprefix("enabled:") for label, answer in found.items()
                     if label.startswith("enabled:") and answer == "disabled"
                     and found.get(f"active:{label.removeprefix('enabled:')}") == "inactive")


def command(questions: Sequence[Question]) -> list[str]:
    """The argument vector that asks ``questions`` in one call: ``sh -c SCRIPT``."""
    lines = []
    for question in questions:
        line = f"printf '%s %s\\n' {question.label} \"$({question.shell})\""
        if question.present:
            line = f"if [ -e {shlex.quote(question.present)} ]; then {line}; fi"
        lines.append(line)
    return ["sh", "-c", "; ".join(lines)]


def answers(stdout: str) -> dict[str, str]:
    """Label to answer, from what :func:`command` printed (the first line of each label)."""
    found: dict[str, str] = {}
    for line in stdout.splitlines():
        label, _space, answer = line.partition(" ")
        found.setdefault(label, answer.strip())
    return found


def decoded(answer: str | None) -> str | None:
    """A :func:`file_lines` answer as text, None when the file was absent or unreadable."""
    if answer is None:
        return None
    try:
        return base64.b64decode(answer, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


@cache
def _service_stale_source() -> str:
    return (collection_root() / "plugins" / "module_utils" / "service_stale.py").read_text()


@cache
def _openpgp_source() -> str:
    return (collection_root() / "plugins" / "module_utils" / "openpgp.py").read_text()


def signature_argv(archive: str, signature: str, keys: str, signature_url: str = "",
                   keys_url: str = "") -> list[str]:
    """The command that checks a release's signature as the module
    ``kafkaform.platform.release_signature`` does (the same source,
    ``plugins/module_utils/openpgp.py``): exits 1 saying why when it does not verify (SE-19)."""
    program = (_openpgp_source() + "\nimport sys\n"
               "try:\n    verify(*sys.argv[1:6])\n"
               "except SignatureError as error:\n    sys.exit(str(error))\n")
    return ["python3", "-c", program, archive, signature, keys, signature_url, keys_url]


def service_stale_argv(service: str, paths: Sequence[str]) -> list[str]:
    """The command that answers as the module ``kafkaform.platform.service_stale`` does (the same
    source, ``plugins/module_utils/service_stale.py``), one JSON object on stdout: here, free of
    pyinfra, so a host read can ask it too (kafkaform.plans.spark_pipeline)."""
    program = (_service_stale_source() + "\nimport json, sys\n"
               "print(json.dumps(service_stale(sys.argv[1], sys.argv[2:]), sort_keys=True))\n")
    return ["python3", "-c", program, service, *paths]
