"""Thin, typed wrappers around the podman and losetup command lines used by `kafkaform lab`.

The lab talks to podman through its CLI (not its socket API) so that it sees exactly what an
engineer typing `podman ...` sees, with the same CONTAINERS_CONF.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


class CommandError(RuntimeError):
    """A command failed; the message says which one and what it printed."""


def run(args: Sequence[str], *, check: bool = True, stdin: str | None = None) -> str:
    """Run a command and return its stdout; raise CommandError with its stderr if it fails."""
    try:
        proc = subprocess.run(list(args), input=stdin, capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise CommandError(f"{args[0]} not found: run ./dev install") from exc
    if check and proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip()
        raise CommandError(f"`{' '.join(args)}` failed ({proc.returncode}): {detail}")
    return proc.stdout


def succeeds(args: Sequence[str]) -> bool:
    """True when the command exits 0 (used for podman's `exists` subcommands)."""
    try:
        return subprocess.run(list(args), capture_output=True, check=False).returncode == 0
    except FileNotFoundError:
        return False


def podman(*args: str, check: bool = True) -> str:
    """Run `podman ARGS...` and return its stdout."""
    return run(["podman", *args], check=check)


def podman_json(*args: str) -> Any:
    """Run a podman command that prints JSON (`--format json` or `inspect`) and parse it."""
    out = podman(*args).strip()
    return json.loads(out) if out else []


def container_exists(name: str) -> bool:
    """Whether a container of that exact name exists (in any state)."""
    return succeeds(["podman", "container", "exists", name])


def network_exists(name: str) -> bool:
    """Whether a podman network of that name exists."""
    return succeeds(["podman", "network", "exists", name])


def image_label(image: str, label: str) -> str | None:
    """The value of one label of a local image, or None when the image is absent."""
    if not succeeds(["podman", "image", "exists", image]):
        return None
    data = podman_json("image", "inspect", image)
    labels: dict[str, str] = (data[0].get("Labels") or {}) if data else {}
    return labels.get(label, "")


def inspect_container(name: str) -> dict[str, Any] | None:
    """`podman container inspect` of one container, or None when it does not exist."""
    if not container_exists(name):
        return None
    data = podman_json("container", "inspect", name)
    return data[0] if data else None


def loop_devices_of(backing_file: Path) -> list[str]:
    """The loop devices currently attached to a file (`losetup -j`)."""
    out = run(["losetup", "-j", str(backing_file)], check=False)
    # Lines look like "/dev/loop3: []: (/var/cache/.../kf-zk1-kfdata0.img)".
    return [line.split(":", 1)[0] for line in out.splitlines() if line.strip()]


def loop_backing_file(device: str) -> Path | None:
    """The file a loop device is attached to, or None when it is free (read from sysfs)."""
    sys_file = Path("/sys/block") / Path(device).name / "loop" / "backing_file"
    try:
        return Path(sys_file.read_text().strip())
    except OSError:
        return None


def attach_loop(backing_file: Path) -> str:
    """Attach a file to the first free loop device and return the device path."""
    return run(["losetup", "-f", "--show", str(backing_file)]).strip()


def detach_loop(device: str) -> None:
    """Detach a loop device (`losetup -d`)."""
    run(["losetup", "-d", device])


def say(message: str) -> None:
    """A progress line on stderr, so stdout stays for output meant to be parsed."""
    print(f"lab: {message}", file=sys.stderr, flush=True)
