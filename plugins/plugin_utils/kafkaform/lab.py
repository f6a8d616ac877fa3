"""`kafkaform lab`: the lab inventory as real hosts on one machine (podman containers + systemd).

    kafkaform lab image    build localhost/kafkaform-debian12:latest offline (cached by recipe hash)
    kafkaform lab up       network, loop-backed data disks, one container per inventory host, mirror
    kafkaform lab status   what runs where
    kafkaform lab down     remove exactly what `up` made

Every object `up` makes is written to $KAFKAFORM_CACHE/lab/state.json as soon as it exists, and
labelled `org.kafkaform.lab=<network>`, so `down` removes those and never anything else (other
engineers' molecule-* containers, other loop devices). Containers are unprivileged: the lab must
never be able to change the machine's kernel settings; only CAP_SYS_ADMIN is added, so XFS data
disks can be mounted inside.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import lab_image
from .contexts.monitoring import tls_files
from .contexts.spark_node import TLS_UI_PORT_OFFSET
from .defaults import role_default
from .model import MONITORING, SPARK_MASTER, SPARK_WORKER
from .paths import collection_root
from .podman import (
    CommandError,
    attach_loop,
    detach_loop,
    inspect_container,
    loop_backing_file,
    loop_devices_of,
    network_exists,
    podman,
    podman_json,
    say,
    succeeds,
)

NETWORK = "kafkaform-lab"
MIRROR = "kf-mirror"
MIRROR_PORT = 8000
LAB_LABEL = "org.kafkaform.lab"
SPEC_LABEL = "org.kafkaform.spec"
DISK_SIZE = 512 * 1024 * 1024  # mkfs.xfs refuses filesystems under 300 MB
READY_STATES = ("running", "degraded")
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
_DEVICE = re.compile(r"^/dev/[a-z][a-z0-9]*$")
_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_.-]*$")


# --- pure model: inventory -> hosts -> container specs --------------------------------------


@dataclass(frozen=True)
class LabHost:
    """One inventory host as the lab sees it: its container name, groups, rack and data disks."""

    name: str
    groups: tuple[str, ...]
    rack: str | None
    disks: tuple[str, ...]  # device paths inside the container, e.g. /dev/kfdata0
    # Spark nodes share one directory (spark_node_shared_dir): the lab mounts one volume there.
    shared_dir: str | None = None


def parse_hosts(
    host_vars: Mapping[str, Mapping[str, Any]], host_groups: Mapping[str, Sequence[str]]
) -> list[LabHost]:
    """Turn inventory data (variables and groups per host) into lab hosts, validated."""
    hosts = []
    for name in sorted(host_vars):
        if not _NAME.match(name):
            raise CommandError(f"inventory host {name!r} is not a valid container name")
        variables = host_vars[name]
        declared = variables.get("os_tuning_data_disks") or []
        disks = tuple(_disk_device(name, disk) for disk in declared)
        if len(set(disks)) != len(disks):
            raise CommandError(f"{name}: os_tuning_data_disks lists a device twice: {disks}")
        rack = variables.get("rack")
        groups = tuple(sorted(set(host_groups.get(name, ())) - {"all", "ungrouped"}))
        shared = variables.get("spark_node_shared_dir") or role_default("spark_node_shared_dir")
        is_spark = bool({SPARK_MASTER, SPARK_WORKER} & set(groups))
        hosts.append(LabHost(name, groups, str(rack) if rack is not None else None, disks,
                             str(shared) if is_spark else None))
    return hosts


def _disk_device(host: str, disk: Any) -> str:
    """The in-container device path of one `os_tuning_data_disks` entry."""
    device = disk.get("device") if isinstance(disk, Mapping) else None
    if not isinstance(device, str) or not _DEVICE.match(device):
        raise CommandError(
            f"{host}: os_tuning_data_disks entry {disk!r} needs a device like /dev/kfdata0"
        )
    return device


def disk_file(cache: Path, host: str, device: str) -> Path:
    """The sparse file backing one data disk of one host."""
    return cache / "lab" / "disks" / f"{host}-{Path(device).name}.img"


def device_args(loops: Mapping[str, str]) -> list[str]:
    """`--device` options handing each loop device in under its stable in-container name.

    The loop node is passed under its own name too: blkid (and so `mount UUID=...` and Ansible's
    mount facts) finds devices through /proc/partitions, which names the loop device.
    """
    args: list[str] = []
    for device, loop in sorted(loops.items()):
        args += ["--device", f"{loop}:{device}:rwm", "--device", f"{loop}:{loop}:rwm"]
    return args


def shared_volume(network: str) -> str:
    """The podman volume the lab's Spark nodes share (a stand-in for NFS)."""
    return f"{network}-shared"


def host_run_args(host: LabHost, loops: Mapping[str, str], network: str, image: str) -> list[str]:
    """The `podman run` arguments (after the label options) of one systemd lab host."""
    shared = ["--volume", f"{shared_volume(network)}:{host.shared_dir}"] if host.shared_dir else []
    return [
        "--name", host.name,
        "--hostname", host.name,
        "--network", network,
        "--systemd=always",
        # Needed to mount the XFS data disks; NOT --privileged, which could change global sysctls.
        "--cap-add", "SYS_ADMIN",
        *device_args(loops),
        *shared,
        image,
        "/sbin/init",
    ]  # fmt: skip


def mirror_run_args(name: str, network: str, image: str, directory: Path) -> list[str]:
    """The `podman run` arguments of the artifact mirror: a static HTTP server, read-only data."""
    return [
        "--name", name,
        "--hostname", name,
        "--network", network,
        # python as PID 1 would ignore the stop signal; catatonit forwards it.
        "--init",
        "--systemd=false",
        "--volume", f"{directory}:/srv/mirror:ro",
        image,
        "python3", "-m", "http.server", str(MIRROR_PORT), "--directory", "/srv/mirror",
    ]  # fmt: skip


def spec_hash(run_args: Sequence[str], image_id: str) -> str:
    """Fingerprint of a container's definition; a running container with another one is stale."""
    return hashlib.sha256("\0".join([image_id, *run_args]).encode()).hexdigest()[:16]


# --- state file ----------------------------------------------------------------------------


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


# --- environment -----------------------------------------------------------------------------


def repo_root() -> Path:
    """The checkout the lab runs from: the lab (its inventory, containers.conf) ships only there."""
    return collection_root()


def cache_root() -> Path:
    """$KAFKAFORM_CACHE, default /var/cache/kafkaform."""
    return Path(os.environ.get("KAFKAFORM_CACHE") or "/var/cache/kafkaform")


def prepare_environment() -> None:
    """Check what the lab needs and point podman at the lab's containers.conf when unset."""
    if os.geteuid() != 0:
        raise CommandError("kafkaform lab needs root (podman, loop devices): run it as root")
    for tool in ("podman", "losetup"):
        if shutil.which(tool) is None:
            raise CommandError(f"{tool} not installed: run ./dev install")
    conf = repo_root() / "lab" / "containers.conf"
    if "CONTAINERS_CONF" not in os.environ and conf.is_file():
        # Without it podman uses crun and ulimits this machine refuses (see lab/containers.conf).
        os.environ["CONTAINERS_CONF"] = str(conf)


@contextlib.contextmanager
def locked(cache: Path) -> Iterator[None]:
    """Serialise `up` and `down` runs that share one cache (and so one state file)."""
    lock = cache / "lab" / ".lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def load_inventory(path: Path) -> list[LabHost]:
    """Read the lab inventory with Ansible's own parser, so group_vars apply exactly as in a run."""
    if not path.exists():
        raise CommandError(f"inventory {path} not found: pass --inventory")
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader
    from ansible.vars.manager import VariableManager

    loader = DataLoader()
    inventory = InventoryManager(loader=loader, sources=[str(path)])
    variables = VariableManager(loader=loader, inventory=inventory)
    host_vars: dict[str, dict[str, Any]] = {}
    host_groups: dict[str, list[str]] = {}
    for host in inventory.get_hosts():
        values = variables.get_vars(host=host)
        host_vars[host.name] = {
            k: values.get(k) for k in ("rack", "os_tuning_data_disks", "spark_node_shared_dir")
        }
        host_groups[host.name] = [group.name for group in host.get_groups()]
    if not host_vars:
        raise CommandError(f"inventory {path} has no hosts")
    return parse_hosts(host_vars, host_groups)


# --- up --------------------------------------------------------------------------------------


def ensure_network(state: LabState, cache: Path) -> None:
    """Create the lab network (DNS on: hosts find each other and kf-mirror by name)."""
    name = state.network
    if network_exists(name):
        labels = podman_json("network", "inspect", name)[0].get("labels") or {}
        if LAB_LABEL not in labels:
            raise CommandError(
                f"network {name} exists but kafkaform lab did not make it: "
                f"remove it (podman network rm {name}) or pass --network"
            )
    else:
        podman("network", "create", "--label", f"{LAB_LABEL}={name}", name)
        say(f"network {name} created")
    state.created_network = True
    save_state(cache, state)


def ensure_volume(name: str, network: str) -> None:
    """The Spark nodes' shared volume, labelled as this lab's so `down` removes it."""
    if name not in ours("volume", network):
        podman("volume", "create", "--label", f"{LAB_LABEL}={network}", name)
        say(f"volume {name} created (the Spark nodes' shared directory)")


def ensure_dir(state: LabState, cache: Path, directory: Path) -> None:
    """Create a directory (and parents), recording each one made so `down` can remove it."""
    missing = [d for d in [directory, *directory.parents] if not d.exists()]
    for made in reversed(missing):
        made.mkdir()
        state.remember(state.dirs, str(made))
    if missing:
        save_state(cache, state)


def ensure_disk(state: LabState, cache: Path, backing: Path) -> str:
    """A sparse 512 MiB file attached to a loop device; return the device."""
    ensure_dir(state, cache, backing.parent)
    if not backing.exists():
        with open(backing, "wb") as handle:
            handle.truncate(DISK_SIZE)
        state.remember(state.files, str(backing))
        save_state(cache, state)
    attached = loop_devices_of(backing)
    loop = attached[0] if attached else attach_loop(backing)
    if not attached:
        say(f"{loop} attached to {backing.name}")
    state.loops[loop] = str(backing)
    save_state(cache, state)
    return loop


def ensure_container(state: LabState, cache: Path, run_args: list[str], image_id: str) -> str:
    """Make one container exist, run, and match its spec; return what was done."""
    name = run_args[run_args.index("--name") + 1]
    spec = spec_hash(run_args, image_id)
    info = inspect_container(name)
    if info is not None:
        labels = info.get("Config", {}).get("Labels") or {}
        if labels.get(LAB_LABEL) != state.network:
            raise CommandError(
                f"container {name} exists but kafkaform lab did not make it: "
                f"remove it (podman rm -f {name}) or rename the inventory host"
            )
        state.remember(state.containers, name)
        if labels.get(SPEC_LABEL) == spec:
            if info.get("State", {}).get("Running"):
                return "running"
            podman("start", name)
            return "started"
        podman("rm", "--force", "--time", "0", name)
    labels_args = ["--label", f"{LAB_LABEL}={state.network}", "--label", f"{SPEC_LABEL}={spec}"]
    podman("run", "--detach", *labels_args, *run_args)
    state.remember(state.containers, name)
    save_state(cache, state)
    return "created" if info is None else "recreated (definition changed)"


def systemd_state(name: str) -> str:
    """`systemctl is-system-running` inside a container ("starting", "running", ...)."""
    out = podman("exec", name, "systemctl", "is-system-running", check=False).strip()
    return out or "unknown"


def mirror_answers(name: str) -> bool:
    """Whether the mirror's HTTP server answers (asked from inside its own container)."""
    probe = f"import urllib.request; urllib.request.urlopen('http://127.0.0.1:{MIRROR_PORT}/')"
    return succeeds(["podman", "exec", name, "python3", "-c", probe])


def wait_ready(hosts: Sequence[str], mirror: str | None, timeout: float) -> None:
    """Wait until every host's systemd is up and the mirror answers; name what is late."""
    started = time.monotonic()
    deadline = started + timeout
    waiting = set(hosts)
    states: dict[str, str] = {}
    mirror_up = mirror is None
    said = started
    say(f"waiting for systemd on {len(hosts)} host(s)"
        + (f" and for the mirror's HTTP server on {mirror}" if mirror else ""))
    while True:
        for name in sorted(waiting):
            states[name] = systemd_state(name)
            if states[name] in READY_STATES:
                waiting.discard(name)
                say(f"{name}: systemd {states[name]} after {time.monotonic() - started:.0f}s")
                if states[name] == "degraded":
                    failed = podman(
                        "exec", name, "systemctl", "--failed", "--plain", "--no-legend", check=False
                    ).split()
                    say(f"{name}: systemd degraded, failed units: {' '.join(failed[::4])}")
        if not mirror_up and mirror_answers(str(mirror)):
            mirror_up = True
            say(f"{mirror}: serving after {time.monotonic() - started:.0f}s")
        if not waiting and mirror_up:
            return
        if time.monotonic() - said >= 15:  # what is still late, so a slow start shows why
            said = time.monotonic()
            late = [f"{n} ({states.get(n)})" for n in sorted(waiting)]
            say(f"still waiting after {said - started:.0f}s for: "
                + ", ".join(late + ([] if mirror_up else [f"{mirror} (http)"])))
        if time.monotonic() > deadline:
            late = [f"{n} ({states.get(n)})" for n in sorted(waiting)]
            if not mirror_up:
                late.append(f"{mirror} (http not answering)")
            raise CommandError(
                f"not ready after {timeout:.0f}s: {', '.join(late)}; "
                "see `podman logs NAME` or `podman exec NAME systemctl --failed`"
            )
        time.sleep(0.5)


def image_id(image: str) -> str:
    """The ID of a local image."""
    return str(podman_json("image", "inspect", image)[0]["Id"])


def lab_up(args: argparse.Namespace) -> int:
    """Bring the lab up, or leave it as it is when it already is."""
    start = time.monotonic()
    cache = cache_root()
    hosts = load_inventory(Path(args.inventory))
    lab_image.ensure_image(cache)
    image = image_id(lab_image.IMAGE)
    with locked(cache):
        state = load_state(cache, args.network)
        if state.network != args.network:
            raise CommandError(
                f"a lab on network {state.network} is recorded in "
                f"{state_path(cache)}: run `kafkaform lab down` first"
            )
        if not state.host_sysctls:
            state.host_sysctls = read_sysctls(WATCHED_SYSCTLS)
        ensure_network(state, cache)
        if any(h.shared_dir for h in hosts):
            ensure_volume(shared_volume(state.network), state.network)
        for host in hosts:
            files = {device: disk_file(cache, host.name, device) for device in host.disks}
            loops = {device: ensure_disk(state, cache, file) for device, file in files.items()}
            run_args = host_run_args(host, loops, state.network, lab_image.IMAGE)
            say(f"{host.name}: {ensure_container(state, cache, run_args, image)}")
        if args.mirror:
            directory = cache / "mirror"
            ensure_dir(state, cache, directory)
            run_args = mirror_run_args(args.mirror, state.network, lab_image.IMAGE, directory)
            say(f"{args.mirror}: {ensure_container(state, cache, run_args, image)}")
        save_state(cache, state)
    wait_ready([h.name for h in hosts], args.mirror or None, args.timeout)
    say(
        f"lab up: {len(hosts)} hosts ready in {time.monotonic() - start:.1f}s "
        f"(`kafkaform lab status` shows them)"
    )
    return 0


# --- down ------------------------------------------------------------------------------------


def ours(kind: str, network: str) -> list[str]:
    """Containers, networks or volumes labelled as this lab's (the state file may be lost)."""
    filters = ["--filter", f"label={LAB_LABEL}={network}"]
    if kind == "container":
        return podman("ps", "--all", *filters, "--format", "{{.Names}}").split()
    if kind == "volume":
        return podman("volume", "ls", *filters, "--format", "{{.Name}}").split()
    return podman("network", "ls", *filters, "--format", "{{.Name}}").split()


def lab_down(args: argparse.Namespace) -> int:
    """Remove the containers, network, loop devices and files `up` made; nothing else."""
    cache = cache_root()
    with locked(cache):
        state = load_state(cache, args.network)
        warn_sysctl_drift(state)
        for name in sorted(set(state.containers) | set(ours("container", state.network))):
            info = inspect_container(name)
            labels = (info or {}).get("Config", {}).get("Labels") or {}
            if info is not None and labels.get(LAB_LABEL) == state.network:
                podman("rm", "--force", "--time", "0", name)
                say(f"{name}: removed")
        if state.network in ours("network", state.network):
            podman("network", "rm", state.network)
            say(f"network {state.network}: removed")
        for volume in ours("volume", state.network):
            podman("volume", "rm", "--force", volume)
            say(f"volume {volume}: removed (the Spark nodes' shared directory)")
        detach_our_loops(state, cache)
        for file in state.files:
            Path(file).unlink(missing_ok=True)
        state_path(cache).unlink(missing_ok=True)
        for directory in sorted(state.dirs, key=len, reverse=True):
            with contextlib.suppress(OSError):  # not empty: something else lives there now
                os.rmdir(directory)
    say("lab down")
    return 0


def detach_our_loops(state: LabState, cache: Path) -> None:
    """Detach loop devices still attached to our disk files (and no other loop device)."""
    disks_dir = (cache / "lab" / "disks").resolve()
    recorded = {Path(f) for f in state.loops.values()} | {Path(f) for f in state.files}
    files = recorded | (set(disks_dir.glob("*.img")) if disks_dir.is_dir() else set())
    for backing in sorted(files):
        for loop in loop_devices_of(backing):
            # Re-check through sysfs: losetup -j matches by inode, the loop may have been reused.
            if loop_backing_file(loop) == backing.resolve():
                detach_loop(loop)
                say(f"{loop}: detached from {backing.name}")


# --- status ----------------------------------------------------------------------------------


def container_address(info: Mapping[str, Any], network: str) -> str:
    """The container's IP address on the lab network, or "-"."""
    networks = info.get("NetworkSettings", {}).get("Networks") or {}
    return str((networks.get(network) or {}).get("IPAddress") or "-")


#: The services kafkaform runs, as systemd unit name patterns.
SERVICE_PATTERNS = ("zookeeper*", "kafka*", "spark-*", "kafkaform-*", "prometheus*")


def running_services(name: str) -> list[str]:
    """kafkaform's services running in a lab container (timers and one-shot units left out)."""
    output = podman("exec", name, "systemctl", "list-units", "--type=service", "--state=running",
                    "--no-legend", "--plain", *SERVICE_PATTERNS, check=False)
    return [line.split()[0].removesuffix(".service") for line in output.splitlines() if line]


def status_rows(hosts: Sequence[LabHost], network: str, mirror: str) -> list[list[str]]:
    """One row per lab container: name, groups, rack, address, state."""
    rows = []
    for host in hosts:
        info = inspect_container(host.name)
        running = bool(info and info.get("State", {}).get("Running"))
        state = (
            f"up, systemd {systemd_state(host.name)}"
            if running
            else ("stopped" if info else "absent")
        )
        address = container_address(info, network) if info else "-"
        services = ",".join(running_services(host.name)) if running else "-"
        rows.append([host.name, ",".join(host.groups), host.rack or "-", address, state,
                     services or "-"])
    if mirror:
        info = inspect_container(mirror)
        running = bool(info and info.get("State", {}).get("Running"))
        state = f"up, http :{MIRROR_PORT}" if running else ("stopped" if info else "absent")
        address = container_address(info, network) if info else "-"
        rows.append([mirror, "(artifact mirror)", "-", address, state, "http.server"])
    return rows


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned columns."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    ]
    return "\n".join(lines)


def lab_status(args: argparse.Namespace) -> int:
    """Print what runs where; exit 1 when some lab container is not running."""
    hosts = load_inventory(Path(args.inventory))
    rows = status_rows(hosts, args.network, args.mirror)
    warn_sysctl_drift(load_state(cache_root(), args.network))
    print(format_table(["CONTAINER", "GROUPS", "RACK", "ADDRESS", "STATE", "SERVICES"], rows))
    print(
        f"\nnetwork {args.network}; cache {cache_root()}\n"
        f"  shell:   podman exec -it {hosts[0].name} bash\n"
        f"  ansible: ansible -i {args.inventory} all -m ansible.builtin.ping\n"
        f"  logs:    podman exec {hosts[0].name} journalctl -b --no-pager"
    )
    masters = [r for r, h in zip(rows, hosts, strict=False) if SPARK_MASTER in h.groups]
    if masters:
        name, address = masters[0][0], masters[0][3]
        ui, history = (int(role_default(f"spark_node_{port}")) + TLS_UI_PORT_OFFSET
                       for port in ("master_webui_port", "history_server_port"))
        print(f"  spark:   master UI https://{address}:{ui}, history server "
              f"https://{address}:{history} (the cluster CA's certificate for {name})\n"
              f"  events:  podman exec {name} kafkaform-pipeline generate --count 1000\n"
              f"  audit:   podman exec {name} kafkaform-pipeline audit --wait 120")
    monitors = [r for r, h in zip(rows, hosts, strict=False) if MONITORING in h.groups]
    if monitors:
        port = int(role_default("monitoring_prometheus_port"))
        name, address = monitors[0][0], monitors[0][3]
        tls = tls_files()
        print(f"  prometheus: https://{address}:{port} (every target: /targets, alerts: "
              f"/alerts), with a client certificate of the cluster CA (SE-15):\n"
              f"           podman exec {name} curl -s --cacert {tls['trust']} --cert "
              f"{tls['cert']} --key {tls['key']} https://{name}:{port}/api/v1/alerts")
    # A drifted kernel setting is warned about above, with the commands that restore it; the
    # lab itself is fine, so only hosts that are not up make the status fail.
    return 0 if all(r[4].startswith("up") for r in rows) else 1


def lab_image_command(args: argparse.Namespace) -> int:
    """Build the base image unless it is current."""
    lab_image.ensure_image(cache_root(), force=args.force)
    return 0


# --- command line ----------------------------------------------------------------------------


def guarded(handler: Any) -> Any:
    """Wrap a handler: check the environment first, turn CommandError into a message and exit 1."""

    def run(args: argparse.Namespace) -> int:
        try:
            prepare_environment()
            result: int = handler(args)
            return result
        except CommandError as exc:
            print(f"kafkaform lab: error: {exc}", file=sys.stderr)
            return 1

    return run


def add_commands(commands: Any) -> None:
    """Register `kafkaform lab image|up|down|status` on the CLI's subparsers object."""
    lab = commands.add_parser(
        "lab",
        help="the lab: inventory hosts as podman containers",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = lab.add_subparsers(dest="lab_command", required=True, metavar="ACTION")
    inventory = str(repo_root() / "inventory" / "lab")

    image = sub.add_parser("image", help=f"build {lab_image.IMAGE} (cached)")
    image.add_argument("--force", action="store_true", help="rebuild even when current")
    image.set_defaults(handler=guarded(lab_image_command))

    for name, handler, text in (
        ("up", lab_up, "start the lab (idempotent)"),
        ("down", lab_down, "remove everything `up` made"),
        ("status", lab_status, "what runs where"),
    ):
        parser = sub.add_parser(name, help=text)
        parser.add_argument(
            "--network", default=NETWORK, help=f"podman network (default {NETWORK})"
        )
        if name != "down":
            parser.add_argument("--inventory", default=inventory, help="default: inventory/lab")
            parser.add_argument(
                "--mirror",
                default=MIRROR,
                help=f"mirror container name, '' for none (default {MIRROR})",
            )
        if name == "up":
            parser.add_argument(
                "--timeout",
                type=float,
                default=120.0,
                help="seconds to wait for systemd in every container",
            )
        parser.set_defaults(handler=guarded(handler))


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m kafkaform.lab ACTION`: the lab commands alone (what the integration test runs)."""
    parser = argparse.ArgumentParser(prog="kafkaform")
    add_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["lab", *(sys.argv[1:] if argv is None else argv)])
    result: int = args.handler(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
