"""The exec channel: its agent, daemon and callers, on this machine.

podman is stood in for by tests/unit/data/podman_stand_in.py, which runs the agent (or the command)
here instead of in a container; everything else is the channel's own code, with real processes
and sockets. Every podman host of the molecule scenarios runs its commands through it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from kafkaform import exec_channel

STAND_IN = (sys.executable, str(Path(__file__).parent / "data" / "podman_stand_in.py"))


@pytest.fixture(autouse=True)
def sockets(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A socket directory of the test's own (short: a unix socket path has 107 bytes at most);
    the daemons started there are stopped afterwards."""
    directory = Path(tempfile.mkdtemp(prefix="kf-", dir="/tmp"))
    monkeypatch.setattr(exec_channel, "socket_directory", lambda: str(directory))
    monkeypatch.delenv(exec_channel.SWITCH, raising=False)
    yield directory
    for lock in directory.glob("*.lock"):
        pid = lock.read_text().strip()
        if pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGTERM)
    shutil.rmtree(directory, ignore_errors=True)


def run(container: str, *argv: str, **options: object) -> exec_channel.Result:
    return exec_channel.run(container, argv, podman=STAND_IN, **options)  # type: ignore[arg-type]


def running(pid: int) -> bool:
    """Whether the process runs (a zombie, ended but not yet waited for, does not)."""
    try:
        stat = Path("/proc", str(pid), "stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def agent_pid(container: str) -> int:
    """The pid of the process that ran the command: the agent, when the channel ran it."""
    return int(run(container, "sh", "-c", "echo $PPID").stdout)


def test_output_exit_code_and_standard_input_come_back_as_podman_exec_gives_them() -> None:
    data = b"\x00\xffdata" * 50_000
    result = run("c1", "sh", "-c", "cat; echo to-stderr >&2; exit 3", stdin=data)
    assert result == (3, data, b"to-stderr\n")
    assert run("c1", "cat").stdout == b"", "without stdin the command reads an empty input"


def test_every_command_in_a_container_goes_to_the_same_agent() -> None:
    first = agent_pid("c2")
    assert first != os.getpid(), "the command ran outside the channel"
    assert agent_pid("c2") == first
    assert agent_pid("c3") != first, "another container has an agent of its own"


def test_switched_off_each_command_runs_in_a_podman_exec_of_its_own(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(exec_channel.SWITCH, "off")
    assert agent_pid("c4") == os.getpid()


def test_exit_codes_of_a_killed_command_and_a_missing_program_are_podmans() -> None:
    assert run("c5", "sh", "-c", "kill -9 $$").returncode == 128 + 9
    missing = run("c5", "no-such-program-here")
    assert missing.returncode == 127
    assert b"no-such-program-here" in missing.stderr


def test_a_container_that_is_not_running_gets_podmans_own_error() -> None:
    result = run("stopped", "true")
    assert result.returncode == 125
    assert result.stderr == b"Error: can only create exec sessions on running containers\n"


def test_a_background_process_holding_the_output_does_not_hold_the_caller() -> None:
    done: list[exec_channel.Result] = []
    caller = threading.Thread(
        target=lambda: done.append(run("c6", "sh", "-c", "sleep 20 & echo started")))
    caller.start()
    caller.join(30)
    assert not caller.is_alive(), "the call waited for the background process"
    assert done == [(0, b"started\n", b"")]


def test_concurrent_commands_each_get_their_own_answer() -> None:
    answers: dict[int, exec_channel.Result] = {}

    def call(n: int) -> None:
        answers[n] = run("c7", "sh", "-c", f"sleep 0.{(n * 3) % 5}; echo {n}; exit {n}")

    callers = [threading.Thread(target=call, args=(n,)) for n in range(8)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join(60)
    assert answers == {n: (n, f"{n}\n".encode(), b"") for n in range(8)}


def test_a_command_past_its_timeout_is_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    with pytest.raises(subprocess.TimeoutExpired):
        run("c8", "sh", "-c", f"echo $$ > {pid_file}; exec sleep 60", timeout=0.5)
    assert not running(int(pid_file.read_text()))


def test_a_command_whose_agent_ended_fails_and_is_not_run_again(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    result = run("c9", "sh", "-c", f"echo ran >> {marks}; kill $PPID; sleep 1")
    assert result.returncode == 255
    assert b"agent ended during the command" in result.stderr
    assert marks.read_text() == "ran\n", "the command ran again"
    again = run("c9", "echo", "again")
    assert again.stdout == b"again\n", again


def test_an_idle_daemon_ends_with_its_agent_and_the_next_command_starts_another(
        monkeypatch: pytest.MonkeyPatch, sockets: Path) -> None:
    monkeypatch.setenv(exec_channel.IDLE_SETTING, "0.5")
    first = agent_pid("c10")
    lock = next(sockets.glob("*.lock"))
    daemon = int(lock.read_text())
    deadline = time.monotonic() + 30
    while running(daemon) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running(daemon), "the idle daemon is still running"
    assert not running(first), "its agent is still running"
    assert not list(sockets.glob("*.sock")), "its socket is left behind"
    assert not list(sockets.glob("*.lock")), "its lock file is left behind"
    while Path("/proc", str(daemon)).exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path("/proc", str(daemon)).exists(), "its caller keeps a zombie of it"
    assert agent_pid("c10") not in (first, os.getpid())


def test_a_lock_file_removed_by_the_daemon_that_held_it_is_not_taken(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A daemon that ends removes its lock file while holding it. One that opened the file just
    before locks it just after: it must let that file go and lock the one at the path."""
    path = str(tmp_path / "x.lock")
    ending = exec_channel.locked(path)
    assert ending is not None and exec_channel.locked(path) is None  # held: not taken twice
    opened: list[int] = []

    def flock_as_the_other_ends(fd: int, operation: int) -> None:
        if not opened:  # between this open and this lock, the other daemon ends
            os.unlink(path)
            os.close(ending)
        opened.append(fd)
        fcntl.flock(fd, operation)

    monkeypatch.setattr(exec_channel, "fcntl", SimpleNamespace(
        flock=flock_as_the_other_ends, LOCK_EX=fcntl.LOCK_EX, LOCK_NB=fcntl.LOCK_NB))
    taken = exec_channel.locked(path)
    assert taken is not None and os.fstat(taken).st_ino == os.stat(path).st_ino
    assert len(opened) == 2, "the removed file's lock was kept"
    os.close(taken)
