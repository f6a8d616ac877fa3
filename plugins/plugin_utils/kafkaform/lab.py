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

The hosts' containers are modelled in ``lab_hosts``, the state file in ``lab_state``; the
commands are here.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import lab_image
from .contexts.monitoring import tls_files
from .contexts.spark_node import TLS_UI_PORT_OFFSET
from .defaults import role_default
from .lab_hosts import (
    LAB_LABEL,
    MIRROR,
    MIRROR_PORT,
    NETWORK,
    SPEC_LABEL,
    LabHost,
    disk_file,
    host_run_args,
    load_inventory,
    mirror_run_args,
    shared_volume,
    spec_hash,
)
from .lab_state import (
    WATCHED_SYSCTLS,
    LabState,
    load_state,
    locked,
    read_sysctls,
    save_state,
    state_path,
    warn_sysctl_drift,
)
from .model import MONITORING, SPARK_MASTER
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

DISK_SIZE = 512 * 1024 * 1024  # mkfs.xfs refuses filesystems under 300 MB

READY_STATES = ("running", "degraded")


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
