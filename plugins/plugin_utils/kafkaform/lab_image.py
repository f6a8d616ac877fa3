"""Build the lab's Debian 12 base image offline: debootstrap + `podman import`.

No container registry is reachable here, so the image every lab host and molecule scenario runs
(`localhost/kafkaform-debian12:latest`) is bootstrapped from deb.debian.org. The build is skipped
when the image already carries the hash of the current recipe in its label.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from .podman import CommandError, image_label, podman, say

IMAGE = "localhost/kafkaform-debian12:latest"
RECIPE_LABEL = "org.kafkaform.recipe"
SUITE = "bookworm"
DEBIAN_MIRROR = "http://deb.debian.org/debian"
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
    # Every JVM service of the platform needs Java 17; baked in, it is downloaded once per image
    # instead of once per host and scenario. The roles still ensure it (a no-op here).
    "openjdk-17-jre-headless",
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

# Runs inside the new root filesystem (chroot) after debootstrap. Part of the recipe hash.
SETUP_SCRIPT = f"""\
set -eu
cat > /etc/apt/sources.list <<'EOF'
deb {DEBIAN_MIRROR} {SUITE} main
deb {DEBIAN_MIRROR} {SUITE}-updates main
deb http://deb.debian.org/debian-security {SUITE}-security main
EOF
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


def host_ca_certificates() -> list[Path]:
    """The machine's extra CA certificates, which HTTPS to PyPI needs from inside containers."""
    return sorted(HOST_CA_DIR.glob("*.crt")) if HOST_CA_DIR.is_dir() else []


def recipe_hash(certificates: list[Path]) -> str:
    """Hash of everything that shapes the image; a change in any of it forces a rebuild."""
    digest = hashlib.sha256()
    for part in (SUITE, DEBIAN_MIRROR, " ".join(sorted(PACKAGES)), SETUP_SCRIPT):
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
    recipe = recipe_hash(certificates)
    if not force and image_is_current(recipe):
        say(f"image {IMAGE} is current (recipe {recipe})")
        return
    start = time.monotonic()
    workdir = cache / "lab" / "image-build"
    rootfs = workdir / "rootfs"
    remove_rootfs(rootfs)
    rootfs.mkdir(parents=True)
    try:
        debootstrap(rootfs, cache / "lab" / "debs", start)
        configure(rootfs, certificates)
        say(f"[{time.monotonic() - start:5.1f}s] importing into podman as {IMAGE}")
        import_rootfs(rootfs, recipe)
    finally:
        remove_rootfs(rootfs)
    say(f"[{time.monotonic() - start:5.1f}s] image {IMAGE} built (recipe {recipe})")


def debootstrap(rootfs: Path, deb_cache: Path, start: float) -> None:
    """Bootstrap a minimal Debian into rootfs, streaming its stage lines as progress."""
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
        DEBIAN_MIRROR,
    ]
    say(f"[{0:5.1f}s] debootstrap {SUITE} into {rootfs} ({len(PACKAGES)} extra packages)")
    lines: list[str] = []
    with subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as proc:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.rstrip()
            lines.append(line)
            if line and not _NOISY.match(line):
                say(f"[{time.monotonic() - start:5.1f}s] {line}")
    if proc.returncode != 0:
        tail = "\n".join(lines[-15:])
        raise CommandError(
            f"debootstrap failed ({proc.returncode}); is http://deb.debian.org reachable?\n{tail}"
        )


def configure(rootfs: Path, certificates: list[Path]) -> None:
    """Copy the host's CA certificates in and run the setup script inside the new root."""
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
    assert tar.stdout is not None
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
