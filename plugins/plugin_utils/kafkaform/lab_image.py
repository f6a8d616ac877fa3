"""Build the lab's Debian 12 base image offline: debootstrap + `podman import`.

No container registry is reachable here, so the image every lab host and molecule scenario runs
(`localhost/kafkaform-debian12:latest`) is bootstrapped from the Debian archive this machine's own
apt sources name (or $KAFKAFORM_DEBIAN_MIRROR), so a company mirror works unchanged. The build is
skipped when the image already carries the hash of the current recipe in its label.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from . import java
from .podman import CommandError, image_label, podman, say

IMAGE = "localhost/kafkaform-debian12:latest"
RECIPE_LABEL = "org.kafkaform.recipe"
SUITE = "bookworm"
APT_DIR = Path("/etc/apt")
#: Override the Debian archive (and security archive) that the apt sources would give.
MIRROR_ENV = "KAFKAFORM_DEBIAN_MIRROR"
SECURITY_MIRROR_ENV = "KAFKAFORM_DEBIAN_SECURITY_MIRROR"
HOST_CA_DIR = Path("/usr/local/share/ca-certificates")

# What a lab host needs beyond minbase: systemd as PID 1, what Ansible modules call (python3-apt
# for apt, acl for become_user, sudo for become), what the roles mount and check (xfsprogs,
# util-linux, mount, iproute2, procps), and small network probes (curl, netcat).
PACKAGES: tuple[str, ...] = (
    "systemd",
    "systemd-sysv",
    "dbus",
    "python3",
    "python3-apt",
    "sudo",
    "acl",
    "iproute2",
    "procps",
    "xfsprogs",
    "util-linux",
    "mount",
    "ca-certificates",
    "curl",
    "netcat-openbsd",
    # Every JVM service of the platform needs Java; baked in, it is downloaded once per image
    # instead of once per host and scenario. The roles still ensure it (a no-op here).
    java.DEFAULT_PACKAGE,
    # The monitoring role's packages, baked in for the same reason; the image leaves their
    # services disabled, so only the hosts the role runs on start them.
    "prometheus",
    "prometheus-alertmanager",
    "prometheus-node-exporter",
)

# Units that cannot work, or must not run, in a container: udev and the gettys have no devices,
# remount-fs/binfmt/debug mounts would need privileges we do not grant (or touch the machine),
# the audit socket needs CAP_AUDIT_READ, and apt's timers would grab the dpkg lock in the middle
# of a playbook run.
MASKED_UNITS: tuple[str, ...] = (
    "systemd-udevd.service",
    "systemd-udevd-control.socket",
    "systemd-udevd-kernel.socket",
    "systemd-udev-trigger.service",
    "systemd-udev-settle.service",
    "getty@tty1.service",
    "getty.target",
    "console-getty.service",
    "serial-getty@.service",
    "systemd-remount-fs.service",
    "systemd-binfmt.service",
    "proc-sys-fs-binfmt_misc.automount",
    "proc-sys-fs-binfmt_misc.mount",
    "sys-kernel-debug.mount",
    "sys-kernel-tracing.mount",
    "sys-kernel-config.mount",
    "sys-fs-fuse-connections.mount",
    "dev-hugepages.mount",
    "systemd-journald-audit.socket",
    "systemd-timesyncd.service",
    "systemd-firstboot.service",
    "apt-daily.timer",
    "apt-daily-upgrade.timer",
    "fstrim.timer",
    "e2scrub_all.timer",
)

# Runs inside the new root filesystem (chroot) after debootstrap and after sources_list() is
# written. Part of the recipe hash.
SETUP_SCRIPT = f"""\
set -eu
# Keep the image lean: no manuals or docs, now or from later apt installs.
cat > /etc/dpkg/dpkg.cfg.d/01-kafkaform-nodoc <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
EOF
find /usr/share/doc -mindepth 1 -not -name copyright -not -type d -delete
rm -rf /usr/share/man/* /usr/share/info/*
for unit in {" ".join(MASKED_UNITS)}; do ln -sf /dev/null "/etc/systemd/system/$unit"; done
rm -f /etc/systemd/system/multi-user.target.wants/prometheus*.service
# An empty machine-id makes systemd generate a fresh one per container at boot.
: > /etc/machine-id
rm -f /var/lib/dbus/machine-id /etc/hostname
update-ca-certificates >/dev/null
apt-get clean
rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/lib/apt/periodic/update-success-stamp
# Empty lists dated "now" make apt's cache_valid_time skip the update and find no packages.
touch -d @0 /var/lib/apt/lists
"""

# debootstrap repeats these for every package; show only its stage lines.
_NOISY = re.compile(
    r"^I: (Retrieving|Validating|Extracting|Unpacking|Configuring)"
    r" [a-z0-9][a-z0-9+.-]+( \S+)?(\.\.\.)?$"
)


# --------------------------------------------------------------------------------------------
# The machine's apt sources: where the image's Debian comes from


@dataclass(frozen=True, slots=True)
class AptSource:
    """One (type, URI, suite) an apt source file declares, with its components."""

    kind: str
    uri: str
    suite: str
    components: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DebianMirrors:
    """The archives the image is built from: main (debootstrap) and security (may be absent)."""

    main: str
    security: str | None


def parse_one_line_sources(text: str) -> list[AptSource]:
    """Entries of a sources.list file: `deb [options] URI SUITE [COMPONENT...]` lines."""
    found: list[AptSource] = []
    for raw in text.splitlines():
        parts = raw.split("#", 1)[0].split(maxsplit=1)
        if len(parts) < 2:
            continue
        kind, rest = parts
        if rest.startswith("["):
            rest = rest.partition("]")[2]
        fields = rest.split()
        if len(fields) >= 2:
            found.append(AptSource(kind, fields[0], fields[1], tuple(fields[2:])))
    return found


def deb822_stanzas(text: str) -> list[dict[str, str]]:
    """The stanzas of a deb822 file as {lower-cased field: value}, continuation lines joined."""
    stanzas: list[dict[str, str]] = []
    current: dict[str, str] = {}
    field = ""
    for line in [*text.splitlines(), ""]:
        if line.startswith("#"):
            continue
        if not line.strip():
            if current:
                stanzas.append(current)
            current, field = {}, ""
        elif line[0].isspace() and field:
            current[field] += "\n" + line.strip()
        else:
            name, _colon, value = line.partition(":")
            field = name.strip().lower()
            current[field] = value.strip()
    return stanzas


def parse_deb822_sources(text: str) -> list[AptSource]:
    """Entries of a .sources file: each combination of Types, URIs and Suites of a stanza.

    Stanzas with `Enabled: no` are skipped, as apt skips them.
    """
    found: list[AptSource] = []
    for stanza in deb822_stanzas(text):
        if stanza.get("enabled", "yes").lower() == "no":
            continue
        components = tuple(stanza.get("components", "").split())
        lists = (stanza.get(name, "").split() for name in ("types", "uris", "suites"))
        for kind, uri, suite in itertools.product(*lists):
            found.append(AptSource(kind, uri, suite, components))
    return found


def parse_apt_sources(name: str, text: str) -> list[AptSource]:
    """Entries of one apt source file, in the format its name says (`.sources`: deb822)."""
    if name.endswith(".sources"):
        return parse_deb822_sources(text)
    return parse_one_line_sources(text)


def apt_source_files(apt_dir: Path = APT_DIR) -> list[Path]:
    """The files apt reads its sources from, in apt's order; other names are ignored as by apt."""
    parts = apt_dir / "sources.list.d"
    files = [apt_dir / "sources.list"]
    if parts.is_dir():
        files += sorted(p for p in parts.iterdir() if p.suffix in (".list", ".sources"))
    return [path for path in files if path.is_file()]


def archive_serving(sources: list[AptSource], suite: str) -> str | None:
    """The URI of the first binary (`deb`) source serving `suite` with its main component."""
    for source in sources:
        if source.kind == "deb" and source.suite == suite and "main" in source.components:
            return source.uri
    return None


def mirror_from_env(name: str) -> str | None:
    """A mirror URI set in the environment, or None when unset."""
    uri = os.environ.get(name, "").strip()
    if uri and any(char.isspace() for char in uri):
        raise CommandError(f"{name}={uri!r} is not a single URI")
    return uri or None


def debian_mirrors(apt_dir: Path = APT_DIR) -> DebianMirrors:
    """The Debian archives of this machine's apt sources, unless the environment names them."""
    files = apt_source_files(apt_dir)
    sources = [entry for path in files for entry in parse_apt_sources(path.name, path.read_text())]
    main = mirror_from_env(MIRROR_ENV) or archive_serving(sources, SUITE)
    if main is None:
        read = ", ".join(str(path) for path in files) or f"no source file under {apt_dir}"
        raise CommandError(
            f"no apt source of this machine serves Debian {SUITE} (read: {read}); add an apt"
            f" source for Debian {SUITE}, or set {MIRROR_ENV}=URI"
        )
    security = mirror_from_env(SECURITY_MIRROR_ENV) or archive_serving(sources, f"{SUITE}-security")
    return DebianMirrors(main, security)


def sources_list(mirrors: DebianMirrors) -> str:
    """The image's /etc/apt/sources.list: the archives the image was built from."""
    lines = [f"deb {mirrors.main} {SUITE} main", f"deb {mirrors.main} {SUITE}-updates main"]
    if mirrors.security:
        lines.append(f"deb {mirrors.security} {SUITE}-security main")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# Building


def host_ca_certificates() -> list[Path]:
    """The machine's extra CA certificates, which HTTPS to PyPI needs from inside containers."""
    return sorted(HOST_CA_DIR.glob("*.crt")) if HOST_CA_DIR.is_dir() else []


def recipe_hash(certificates: list[Path], mirrors: DebianMirrors | None = None) -> str:
    """Hash of everything that shapes the image; a change in any of it forces a rebuild.

    `mirrors` defaults to this machine's (debian_mirrors()): another archive rebuilds the image.
    """
    if mirrors is None:
        mirrors = debian_mirrors()
    digest = hashlib.sha256()
    parts = (SUITE, mirrors.main, sources_list(mirrors), " ".join(sorted(PACKAGES)), SETUP_SCRIPT)
    for part in parts:
        digest.update(part.encode() + b"\0")
    for cert in certificates:
        digest.update(cert.name.encode() + b"\0" + cert.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def image_is_current(recipe: str) -> bool:
    """Whether the image exists and was built from this recipe."""
    return image_label(IMAGE, RECIPE_LABEL) == recipe


def ensure_image(cache: Path, *, force: bool = False) -> None:
    """Build the base image unless an image of the same recipe exists."""
    certificates = host_ca_certificates()
    mirrors = debian_mirrors()
    recipe = recipe_hash(certificates, mirrors)
    if not force and image_is_current(recipe):
        say(f"image {IMAGE} is current (recipe {recipe})")
        return
    if mirrors.security is None:
        say(
            f"note: no apt source serves {SUITE}-security (set {SECURITY_MIRROR_ENV}=URI to add"
            " one); the image gets no security archive"
        )
    start = time.monotonic()
    workdir = cache / "lab" / "image-build"
    rootfs = workdir / "rootfs"
    remove_rootfs(rootfs)
    rootfs.mkdir(parents=True)
    try:
        debootstrap(rootfs, cache / "lab" / "debs", start, mirrors.main)
        configure(rootfs, certificates, mirrors)
        say(f"[{time.monotonic() - start:5.1f}s] importing into podman as {IMAGE}")
        import_rootfs(rootfs, recipe)
    finally:
        remove_rootfs(rootfs)
    say(f"[{time.monotonic() - start:5.1f}s] image {IMAGE} built (recipe {recipe})")


def debootstrap(rootfs: Path, deb_cache: Path, start: float, mirror: str) -> None:
    """Bootstrap a minimal Debian from `mirror` into rootfs, streaming its stage lines."""
    if shutil.which("debootstrap") is None:
        raise CommandError("debootstrap not installed: run ./dev install")
    # Keeping the downloaded .debs makes a rebuild after a recipe change mostly offline.
    deb_cache.mkdir(parents=True, exist_ok=True)
    args = [
        "debootstrap",
        "--variant=minbase",
        f"--include={','.join(PACKAGES)}",
        f"--cache-dir={deb_cache}",
        SUITE,
        str(rootfs),
        mirror,
    ]
    say(
        f"[{0:5.1f}s] debootstrap {SUITE} from {mirror} into {rootfs}"
        f" ({len(PACKAGES)} extra packages)"
    )
    lines: list[str] = []
    with subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as proc:
        if proc.stdout is None:
            raise RuntimeError("debootstrap was started without a pipe for its output")
        for raw in proc.stdout:
            line = raw.rstrip()
            lines.append(line)
            if line and not _NOISY.match(line):
                say(f"[{time.monotonic() - start:5.1f}s] {line}")
    if proc.returncode != 0:
        tail = "\n".join(lines[-15:])
        raise CommandError(
            f"debootstrap failed ({proc.returncode}); is {mirror} reachable?\n{tail}"
        )


def configure(rootfs: Path, certificates: list[Path], mirrors: DebianMirrors) -> None:
    """Write the apt sources, copy the host's CA certificates in and run the setup script."""
    (rootfs / "etc/apt/sources.list").write_text(sources_list(mirrors))
    target = rootfs / HOST_CA_DIR.relative_to("/")
    target.mkdir(parents=True, exist_ok=True)
    for cert in certificates:
        shutil.copyfile(cert, target / cert.name)
    proc = subprocess.run(
        ["chroot", str(rootfs), "/bin/sh", "-c", SETUP_SCRIPT],
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"},
    )
    if proc.returncode != 0:
        raise CommandError(f"image setup script failed: {proc.stderr.strip()}")


def import_rootfs(rootfs: Path, recipe: str) -> None:
    """Stream the root filesystem as a tarball into `podman import`, labelled with the recipe."""
    tar = subprocess.Popen(
        [
            "tar",
            "--numeric-owner",
            "--xattrs",
            "-C",
            str(rootfs),
            "--exclude=./proc/*",
            "--exclude=./sys/*",
            "--exclude=./dev/*",
            "-c",
            ".",
        ],
        stdout=subprocess.PIPE,
    )
    if tar.stdout is None:
        raise RuntimeError("tar was started without a pipe for its output")
    proc = subprocess.run(
        [
            "podman",
            "import",
            "--change",
            'CMD ["/sbin/init"]',
            # systemd shuts down cleanly on SIGRTMIN+3, not on SIGTERM.
            "--change",
            "STOPSIGNAL SIGRTMIN+3",
            "--change",
            f"LABEL {RECIPE_LABEL}={recipe}",
            "-",
            IMAGE,
        ],
        stdin=tar.stdout,
        capture_output=True,
        text=True,
        check=False,
    )
    tar.stdout.close()
    if tar.wait() != 0 or proc.returncode != 0:
        raise CommandError(f"podman import failed: {proc.stderr.strip()}")
    # Old builds of the same tag become dangling; drop them so they do not pile up.
    podman("image", "prune", "--force", "--filter", f"label={RECIPE_LABEL}", check=False)


def remove_rootfs(rootfs: Path) -> None:
    """Delete a build tree, unmounting first anything an interrupted debootstrap left mounted."""
    if not rootfs.exists():
        return
    prefix = str(rootfs.resolve()) + "/"
    with open("/proc/self/mounts") as mounts:
        points = [line.split()[1] for line in mounts if line.split()[1].startswith(prefix)]
    for point in sorted(points, reverse=True):
        subprocess.run(["umount", "-l", point], check=False)
    # --one-file-system: never follow a mount that is still there into the host's /dev or /proc.
    subprocess.run(["rm", "-rf", "--one-file-system", str(rootfs)], check=False)
    if os.path.exists(rootfs):
        raise CommandError(f"could not remove {rootfs}; remove it by hand and retry")
