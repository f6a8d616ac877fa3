"""One long-lived ``podman exec`` per container, shared by every command the project runs there.

A ``podman exec`` costs about 0.15 CPU s and 0.2 s of wall time on the 2-core test machine before
the command itself starts (podman's client, conmon and runc, every time), and every Ansible task,
pyinfra operation, testinfra check and drill probe on a podman host is one. The channel starts one
``podman exec -i CONTAINER python3`` running the small AGENT below, kept by a daemon on the
control node that listens on a unix socket, as SSH's ControlMaster and ControlPersist keep one
connection for many sessions (ssh_config(5)). Each command is then one request on that socket, run
by the agent as its child: the environment, user, working directory and limits ``podman exec``
gives, standard input only when given, and 128 + N for a command killed by signal N, as podman
reports it.

The daemon ends after IDLE_SECONDS without a request (KAFKAFORM_EXEC_CHANNEL_IDLE), or when
its container stops. Where the
channel cannot be had (no python3 in the container, the container not running, or
KAFKAFORM_EXEC_CHANNEL=off), the command runs with plain ``podman exec``, so what it prints,
podman's own errors included, is what podman prints. A command whose agent ended while it ran is
not run again: it fails with exit code 255, as ``podman exec`` fails when the container stops.

Standard library only: the daemon runs this file as a script (``python exec_channel.py serve``).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from typing import IO, Any, NamedTuple

#: Seconds a daemon and its agent stay without a request before both end, unless IDLE_SETTING
#: (read when the daemon starts) says otherwise.
IDLE_SECONDS = 30.0
IDLE_SETTING = "KAFKAFORM_EXEC_CHANNEL_IDLE"
#: Seconds a caller waits for a daemon it started to listen before running ``podman exec`` itself.
START_SECONDS = 20.0
#: ``off`` here (or ``0``, ``false``, ``no``) runs every command with plain ``podman exec``.
SWITCH = "KAFKAFORM_EXEC_CHANNEL"
#: The daemon's exit code when the agent could not start: its caller runs ``podman exec`` itself.
NO_AGENT = 3

# The agent, run by the container's python3 (3.6 or later). It reads one JSON request per line
# and runs each in a thread of its own, so a long command does not hold up the others. Like
# `podman exec`, it answers when the command exits, not when every process that inherited its
# output has closed it (a command that starts a daemon in the background returns at once).
AGENT = r'''
import base64, json, os, subprocess, sys, threading, time
lock = threading.Lock()
def send(msg):
    line = (json.dumps(msg) + "\n").encode()
    with lock:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
def drain(stream, chunks):
    # The stream is closed here, never by the collector: its descriptor is not reused meanwhile.
    with stream:
        while True:
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:
                return
            chunks.append(chunk)
def feed(stream, data):
    try:
        stream.write(data)
        stream.close()
    except OSError:
        pass
def run(req):
    data = None if req.get("stdin") is None else base64.b64decode(req["stdin"])
    try:
        proc = subprocess.Popen(req["argv"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL if data is None else subprocess.PIPE)
    except OSError as error:
        code = 127 if isinstance(error, FileNotFoundError) else 126
        text = "Error: %s: %s\n" % (req["argv"][0], error.strerror)
        send({"id": req["id"], "rc": code, "out": "",
              "err": base64.b64encode(text.encode()).decode()})
        return
    out, err = [], []
    threads = [threading.Thread(target=drain, args=(proc.stdout, out), daemon=True),
               threading.Thread(target=drain, args=(proc.stderr, err), daemon=True)]
    if data is not None:
        threads.append(threading.Thread(target=feed, args=(proc.stdin, data), daemon=True))
    for thread in threads:
        thread.start()
    timed_out = False
    try:
        code = proc.wait(timeout=req.get("timeout"))
    except subprocess.TimeoutExpired:
        proc.kill()
        code = proc.wait()
        timed_out = True
    deadline = time.time() + 0.5
    for thread in threads[:2]:
        thread.join(max(0.0, deadline - time.time()))
    send({"id": req["id"], "rc": 128 - code if code < 0 else code, "timeout": timed_out,
          "out": base64.b64encode(b"".join(out)).decode(),
          "err": base64.b64encode(b"".join(err)).decode()})
send({"ready": 1})
for line in sys.stdin.buffer:
    threading.Thread(target=run, args=(json.loads(line),), daemon=True).start()
'''


class Result(NamedTuple):
    """A command's exit code and output, as ``podman exec`` gives them."""

    returncode: int
    stdout: bytes
    stderr: bytes


class Undelivered(Exception):
    """The request never reached an agent: running the command another way runs it once."""


def enabled() -> bool:
    """Whether commands go through the channel (KAFKAFORM_EXEC_CHANNEL is not switched off)."""
    return os.environ.get(SWITCH, "on").strip().lower() not in {"off", "0", "false", "no"}


def exec_options(user: str | None) -> list[str]:
    """``podman exec``'s options for a command run as ``user`` (None: the container's own)."""
    return [] if not user else ["--user", user]


def launcher(podman: Sequence[str], container: str, user: str | None = None) -> list[str]:
    """The command line that starts the container's agent, podman by its full path so that
    every caller naming the same podman shares the agent."""
    executable = shutil.which(podman[0]) or podman[0]
    return [executable, *podman[1:], "exec", "-i", *exec_options(user), container,
            "python3", "-c", AGENT]


def socket_directory() -> str:
    """Where the daemons' sockets are: a directory of this user's in the temporary directory."""
    return os.path.join(tempfile.gettempdir(), f"kafkaform-exec-{os.getuid()}")


def socket_path(agent_command: Sequence[str]) -> str:
    """The daemon's socket for one agent command line (podman, its options, the container) and
    the podman configuration in force, in a directory only this user can enter."""
    directory = socket_directory()
    os.makedirs(directory, mode=0o700, exist_ok=True)
    if os.stat(directory).st_uid != os.getuid():
        raise Undelivered(f"{directory} belongs to another user")
    key = json.dumps([list(agent_command), os.environ.get("CONTAINERS_CONF", "")])
    return os.path.join(directory, hashlib.sha256(key.encode()).hexdigest()[:24] + ".sock")


def run(container: str, argv: Sequence[str], *, stdin: bytes | None = None,
        timeout: float | None = None, podman: Sequence[str] = ("podman",),
        user: str | None = None) -> Result:
    """Run ``argv`` in ``container`` as ``podman exec [--user USER]`` (``-i`` when ``stdin`` is
    given) would; ``podman``: the executable and its global options.

    ``timeout``: seconds after which the command is killed and subprocess.TimeoutExpired raised.
    """
    if enabled():
        agent_command = launcher(podman, container, user)
        request = {"argv": list(argv), "timeout": timeout,
                   "stdin": None if stdin is None else base64.b64encode(stdin).decode()}
        try:
            reply = request_reply(agent_command, request)
        except Undelivered:
            pass
        else:
            return result_of(reply, argv, timeout)
    command = [*podman, "exec", *(["-i"] if stdin is not None else []), *exec_options(user),
               container, *argv]
    done = subprocess.run(command, input=stdin,
                          stdin=None if stdin is not None else subprocess.DEVNULL,
                          capture_output=True, timeout=timeout, check=False)
    return Result(done.returncode, done.stdout, done.stderr)


def result_of(reply: dict[str, Any], argv: Sequence[str], timeout: float | None) -> Result:
    """The Result in a daemon's reply; raises TimeoutExpired for a command the agent killed."""
    if "error" in reply:
        return Result(255, b"", f"Error: kafkaform exec channel: {reply['error']}\n".encode())
    out, err = base64.b64decode(reply["out"]), base64.b64decode(reply["err"])
    if reply.get("timeout"):
        raise subprocess.TimeoutExpired(list(argv), timeout or 0, output=out, stderr=err)
    return Result(int(reply["rc"]), out, err)


def request_reply(agent_command: Sequence[str], request: dict[str, Any]) -> dict[str, Any]:
    """Send one request to the daemon of ``agent_command``, starting it when none listens."""
    try:
        path = socket_path(agent_command)
    except OSError as error:
        raise Undelivered(str(error)) from error
    conn = connect(path) or start(agent_command, path)
    with conn:
        try:
            conn.sendall(json.dumps(request).encode() + b"\n")
            conn.shutdown(socket.SHUT_WR)
        except OSError as error:
            raise Undelivered(str(error)) from error
        line = read_all(conn)
    if not line:
        # The daemon ended without a word: it may have passed the command on, so it is not rerun.
        return {"error": "the control-side daemon ended during the command"}
    reply: dict[str, Any] = json.loads(line)
    if reply.get("error") == "undelivered":
        raise Undelivered("the agent ended before the request reached it")
    return reply


def read_all(conn: socket.socket) -> bytes:
    """Everything the daemon sends, up to its closing the connection."""
    chunks = []
    with contextlib.suppress(ConnectionResetError):
        while chunk := conn.recv(1 << 20):
            chunks.append(chunk)
    return b"".join(chunks)


def connect(path: str) -> socket.socket | None:
    """A connection to the daemon listening at ``path``, or None when none does."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
    except OSError:
        conn.close()
        return None
    return conn


def start(agent_command: Sequence[str], path: str) -> socket.socket:
    """Start a daemon for ``agent_command`` and connect to it (or to the one that won a race)."""
    daemon = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "serve",
         json.dumps([path, list(agent_command)])],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, close_fds=True)
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        conn = connect(path)
        if conn is not None:
            # Waited for as it ends, so that a long-lived caller keeps no zombie of it.
            threading.Thread(target=daemon.wait, daemon=True).start()
            return conn
        if daemon.poll() == NO_AGENT:
            raise Undelivered("the container's agent did not start")
        time.sleep(0.05)
    raise Undelivered(f"no daemon listened at {path} within {START_SECONDS:.0f} s")


class Daemon:
    """The control-side end: one agent, one listening socket, requests passed on by id."""

    def __init__(self, agent: subprocess.Popen[bytes]) -> None:
        self.agent = agent
        self.waiting: dict[int, socket.socket] = {}
        self.lock = threading.Lock()
        self.next_id = 0
        self.last_request = time.monotonic()
        self.handling = 0
        self.idle_seconds = float(os.environ.get(IDLE_SETTING) or IDLE_SECONDS)
        self.agent_gone = threading.Event()

    def accepted(self, conn: socket.socket) -> None:
        """Handle ``conn`` in a thread of its own, counted until it has passed the request on."""
        with self.lock:
            self.handling += 1
        threading.Thread(target=self.handle, args=(conn,), daemon=True).start()

    def handle(self, conn: socket.socket) -> None:
        try:
            self.pass_on(conn)
        finally:
            with self.lock:
                self.handling -= 1

    def pass_on(self, conn: socket.socket) -> None:
        """Read one request from ``conn`` and pass it on; the reply goes back from relay()."""
        request = json.loads(read_all(conn))
        stdin: IO[bytes] = self.agent.stdin  # type: ignore[assignment]  # started with PIPE
        with self.lock:
            if self.agent_gone.is_set():
                answer(conn, {"error": "undelivered"})
                return
            self.next_id += 1
            request["id"] = self.next_id
            self.last_request = time.monotonic()
            try:
                stdin.write(json.dumps(request).encode() + b"\n")
                stdin.flush()
            except OSError:
                answer(conn, {"error": "undelivered"})
                return
            self.waiting[request["id"]] = conn

    def relay(self) -> None:
        """Send each of the agent's replies to its caller; when the agent ends, tell the rest."""
        stdout: IO[bytes] = self.agent.stdout  # type: ignore[assignment]  # started with PIPE
        for line in stdout:
            with self.lock:
                conn = self.waiting.pop(json.loads(line)["id"], None)
                self.last_request = time.monotonic()
            if conn is not None:
                answer(conn, line)
        with self.lock:
            self.agent_gone.set()
            lost, self.waiting = self.waiting, {}
        for conn in lost.values():
            answer(conn, {"error": "the container's agent ended during the command "
                                   "(was the container stopped?)"})

    def idle(self) -> bool:
        with self.lock:
            return (not self.waiting and not self.handling
                    and time.monotonic() - self.last_request > self.idle_seconds)

    def busy(self) -> bool:
        """Whether a request is still being passed on, or answered by a live agent."""
        with self.lock:
            return bool(self.handling or (self.waiting and not self.agent_gone.is_set()))


def answer(conn: socket.socket, reply: bytes | dict[str, Any]) -> None:
    """Send a reply line and close the connection; a caller that went away is no concern."""
    line = reply if isinstance(reply, bytes) else json.dumps(reply).encode() + b"\n"
    with contextlib.suppress(OSError), conn:
        conn.sendall(line)


def locked(lock_path: str) -> int | None:
    """The lock file at ``lock_path``, opened and locked by this process; None when another
    daemon holds it. A daemon that ends removes its lock file while holding it, so a lock taken
    on a file no longer at the path is let go and the path's own file locked instead."""
    while True:
        fd = os.open(lock_path, os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        try:
            if os.stat(lock_path).st_ino == os.fstat(fd).st_ino:
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)


def serve(path: str, agent_command: Sequence[str]) -> int:
    """The daemon's life: own the socket path, start the agent, serve until idle or until the
    agent ends."""
    lock_fd = locked(path + ".lock")
    if lock_fd is None:
        return 0  # another daemon has this path
    os.ftruncate(lock_fd, 0)
    os.write(lock_fd, f"{os.getpid()}\n".encode())
    agent = subprocess.Popen(list(agent_command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
    if agent.stdout is None or json.loads(agent.stdout.readline() or b"{}").get("ready") != 1:
        agent.kill()
        return NO_AGENT
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)  # left by a daemon that was killed
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    listener.settimeout(1.0)
    daemon = Daemon(agent)
    threading.Thread(target=daemon.relay, daemon=True).start()
    while not daemon.agent_gone.is_set() and not daemon.idle():
        with contextlib.suppress(TimeoutError):
            daemon.accepted(listener.accept()[0])
    # No new caller finds this daemon once the path is gone; those already queued are served.
    # The lock file goes too, still locked: the next daemon makes its own (locked()).
    os.unlink(path)
    os.unlink(path + ".lock")
    os.close(lock_fd)
    listener.setblocking(False)
    with contextlib.suppress(BlockingIOError):
        while True:
            daemon.accepted(listener.accept()[0])
    listener.close()
    while daemon.busy():
        time.sleep(0.1)
    if agent.stdin is not None:
        agent.stdin.close()
    agent.wait()
    return 0


if __name__ == "__main__" and sys.argv[1:2] == ["serve"]:
    socket_at, command = json.loads(sys.argv[2])
    sys.exit(serve(socket_at, command))
