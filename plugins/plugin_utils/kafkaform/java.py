"""Java, in one place for every role and both engines: which Debian package runs the platform's
JVMs and where that package puts its ``java``.

Debian installs OpenJDK N for architecture A under ``/usr/lib/jvm/java-N-openjdk-A`` (its
``openjdk-N`` source packages, https://packages.debian.org/bookworm/openjdk-17-jre-headless),
so the home follows from the package and the host's ``dpkg --print-architecture``.
"""

from __future__ import annotations

import re

#: The JRE of Debian 12 (bookworm) that every JVM of the platform runs on, without X11 or sound.
DEFAULT_PACKAGE = "openjdk-17-jre-headless"

#: Debian's architectures that build OpenJDK (``dpkg --print-architecture``).
DEBIAN_ARCHITECTURES = frozenset({"amd64", "arm64", "armel", "armhf", "i386", "mips64el",
                                  "ppc64el", "riscv64", "s390x", "loong64"})

_OPENJDK = re.compile(r"^openjdk-(?P<major>\d+)-(?:jre|jdk)(?:-headless)?$")


def java_major(package: str) -> int | None:
    """The Java release of one of Debian's OpenJDK packages (17 for openjdk-17-jre-headless),
    None for any other package."""
    found = _OPENJDK.match(package)
    return int(found["major"]) if found else None


def java_home(package: str, architecture: str, role_input: str, given: str = "") -> str:
    """Where Debian's ``package`` puts the JVM on a host of ``architecture``; ``given`` (the
    value of the role's ``*_java_home``, named by ``role_input``) wins when set.

    Raises ValueError naming ``role_input`` when the package is not one of Debian's OpenJDK
    packages or the architecture is not one Debian builds OpenJDK for.
    """
    if given:
        return given
    found = _OPENJDK.match(package)
    if found is None:
        raise ValueError(f"{package} is not one of Debian's OpenJDK packages "
                         f"(openjdk-N-jre-headless): set {role_input} to the directory holding "
                         "its bin/java")
    if architecture not in DEBIAN_ARCHITECTURES:
        raise ValueError(f"dpkg reports the architecture {architecture!r}, for which Debian builds "
                         f"no OpenJDK: set {role_input} to the directory holding bin/java")
    return f"/usr/lib/jvm/java-{found['major']}-openjdk-{architecture}"


#: The Java home of a context built without reading a host (golden samples, unit tests).
UNREAD_HOME = java_home(DEFAULT_PACKAGE, "amd64", "")


def java_binary(home: str) -> str:
    """The ``java`` of a Java home."""
    return f"{home.rstrip('/')}/bin/java"


def java_home_filter(package: str, architecture: str, role_input: str, given: str = "") -> str:
    """:func:`java_home` for the roles, its errors as Ansible shows a filter's."""
    return java_home(package, str(architecture).strip(), role_input, str(given or ""))
