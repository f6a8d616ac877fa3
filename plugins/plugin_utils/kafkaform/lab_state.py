"""What `kafkaform lab up` made, in $KAFKAFORM_CACHE/lab/state.json, so that `down` removes exactly
that; and the machine's kernel settings the lab must not move."""

from __future__ import annotations

import contextlib
import fcntl
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .lab_hosts import NETWORK
from .podman import CommandError, say

STATE_VERSION = 1

# Machine-wide kernel settings a tuning role might try to change. The containers cannot write them
# by accident (/proc/sys is read-only inside), but CAP_SYS_ADMIN could remount it, so `up` records
# their values and `status`/`down` say loudly if they moved while the lab ran.
WATCHED_SYSCTLS = (
    "vm.swappiness",
    "vm.dirty_ratio",
    "vm.dirty_background_ratio",
    "vm.max_map_count",
    "vm.overcommit_memory",
    "fs.file-max",
    "net.core.rmem_max",
    "net.core.wmem_max",
)


@dataclass
class LabState:
    """What `up` made, so `down` removes exactly that."""

    network: str = NETWORK
    created_network: bool = False
    containers: list[str] = field(default_factory=list)
    loops: dict[str, str] = field(default_factory=dict)  # loop device -> backing file
    files: list[str] = field(default_factory=list)
    dirs: list[str] = field(default_factory=list)
    host_sysctls: dict[str, str] = field(default_factory=dict)  # machine's values at first `up`

    def to_json(self) -> str:
        """Serialise, with a version so a future format can refuse an old file clearly."""
        return json.dumps({"version": STATE_VERSION, **asdict(self)}, indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> LabState:
        """Parse a state file written by to_json."""
        data = json.loads(text)
        if data.pop("version", None) != STATE_VERSION:
            raise CommandError("unknown lab state file format: remove the lab by hand")
        return cls(**data)

    def remember(self, items: list[str], item: str) -> None:
        """Add item to one of the lists once."""
        if item not in items:
            items.append(item)


def state_path(cache: Path) -> Path:
    """Where the lab state file lives."""
    return cache / "lab" / "state.json"


def load_state(cache: Path, network: str) -> LabState:
    """The recorded state, or an empty one for this network."""
    path = state_path(cache)
    return LabState.from_json(path.read_text()) if path.is_file() else LabState(network=network)


def save_state(cache: Path, state: LabState) -> None:
    """Write the state atomically (a crash never leaves half a file)."""
    path = state_path(cache)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(state.to_json() + "\n")
    tmp.replace(path)


def read_sysctls(keys: Sequence[str], proc: Path = Path("/proc/sys")) -> dict[str, str]:
    """Current values of kernel settings (keys in sysctl's dotted form); unknown keys skipped."""
    values = {}
    for key in keys:
        with contextlib.suppress(OSError):
            values[key] = " ".join((proc / key.replace(".", "/")).read_text().split())
    return values


def sysctl_drift(recorded: Mapping[str, str], current: Mapping[str, str]) -> list[str]:
    """A `sysctl -w` command restoring each recorded setting whose value changed."""
    return [
        f"sysctl -w {key}='{value}'  # now {current[key]!r}"
        for key, value in sorted(recorded.items())
        if key in current and current[key] != value
    ]


def warn_sysctl_drift(state: LabState) -> bool:
    """Say which machine-wide settings changed since `up`; True when some did."""
    drift = sysctl_drift(state.host_sysctls, read_sysctls(list(state.host_sysctls)))
    if drift:
        say(
            "WARNING: machine-wide kernel settings changed while the lab ran (it must not "
            "change them); the machine's values are restored by:\n  " + "\n  ".join(drift)
        )
    return bool(drift)


@contextlib.contextmanager
def locked(cache: Path) -> Iterator[None]:
    """Serialise `up` and `down` runs that share one cache (and so one state file)."""
    lock = cache / "lab" / ".lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
