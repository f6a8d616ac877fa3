"""The syntax of each role input that a service or the OS parses, checked before any host.

The argument specs say an input is a string; what reads it wants more: Prometheus its own
durations and sizes, useradd a user name, systemd and the services absolute paths, the JVM an IP
address. A value that breaks that syntax would pass the type check and fail on a host, half-way
through a run (a Prometheus that does not start, a unit that refuses its path). Each format says
what it wants with an example, for the finding's fix.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any


@dataclass(frozen=True)
class Format:
    """One syntax: what it is, an example, and the test a value must pass."""

    what: str
    example: str
    accepts: Callable[[str], bool]


#: Prometheus's durations (model.ParseDuration: units from years to milliseconds, largest first,
#: each at most once); 0 is no duration.
_PROMETHEUS_DURATION = re.compile(
    r"(\d+y)?(\d+w)?(\d+d)?(\d+h)?(\d+m)?(\d+s)?(\d+ms)?")
#: Prometheus's sizes (units.Base2Bytes, as --storage.tsdb.retention.size takes them).
_PROMETHEUS_SIZE = re.compile(r"\d+(B|KB|MB|GB|TB|PB|EB)")
#: A system user or group name as Debian's adduser accepts it (NAME_REGEX), 32 characters at most.
_SYSTEM_NAME = re.compile(r"[a-z_][a-z0-9_-]{0,31}")
#: A file mode as the roles give it to Ansible: octal digits, as a string.
_MODE = re.compile(r"0?[0-7]{3,4}")


def _duration(value: str) -> bool:
    return bool(value) and _PROMETHEUS_DURATION.fullmatch(value) is not None \
        and any(digit != "0" for digit in re.sub(r"[a-z]", "", value))


def _absolute(value: str) -> bool:
    parts = value.split("/")
    return value.startswith("/") and value != "/" and ".." not in parts \
        and value == value.strip() and "//" not in value


def _ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


PROMETHEUS_DURATION = Format("a Prometheus duration (units y, w, d, h, m, s, ms, largest "
                             "first, not 0)", "15s, 1h30m, 15d", _duration)
PROMETHEUS_SIZE = Format("a Prometheus size (a whole number and B, KB, MB, GB, TB, PB or EB)",
                         "10GB", lambda v: _PROMETHEUS_SIZE.fullmatch(v) is not None)
ABSOLUTE_PATH = Format("an absolute path without '..'", "/var/lib/kafka", _absolute)
SYSTEM_NAME = Format("a system user or group name (lower-case letters, digits, '_' and '-', "
                     "starting with a letter or '_', at most 32 characters)", "kafka",
                     lambda v: _SYSTEM_NAME.fullmatch(v) is not None)
IP_ADDRESS = Format("an IP address", "127.0.0.1", _ip)
FILE_MODE = Format("an octal file mode, quoted", "'0750'", lambda v: _MODE.fullmatch(v) is not None)

#: Inputs by exact name.
BY_NAME = {
    "monitoring_scrape_interval": PROMETHEUS_DURATION,
    "monitoring_evaluation_interval": PROMETHEUS_DURATION,
    "monitoring_retention_time": PROMETHEUS_DURATION,
    "monitoring_retention_size": PROMETHEUS_SIZE,
    "kafka_broker_jmx_address": IP_ADDRESS,
    "os_tuning_data_dir_mode": FILE_MODE,
    "artifact_owner": SYSTEM_NAME,
    "artifact_group": SYSTEM_NAME,
}
#: Inputs by the end of their name: every role names its paths and accounts alike.
BY_SUFFIX = (("_dir", ABSOLUTE_PATH), ("_java_home", ABSOLUTE_PATH),
             ("_python_env", ABSOLUTE_PATH), ("_user", SYSTEM_NAME), ("_group", SYSTEM_NAME))
#: Inputs whose empty value means "let the role decide".
EMPTY_MEANS_DEFAULT = ("_java_home",)


#: Inputs whose rule checks more than their syntax (SP-05: not /tmp either).
CHECKED_BY_THEIR_RULE = frozenset({"spark_node_shared_dir"})


def format_of(name: str) -> Format | None:
    if name in CHECKED_BY_THEIR_RULE:
        return None
    if name in BY_NAME:
        return BY_NAME[name]
    return next((fmt for suffix, fmt in BY_SUFFIX if name.endswith(suffix)), None)


@cache
def _problem(name: str, value: str) -> str:
    wanted = format_of(name)
    if wanted is None or wanted.accepts(value):
        return ""
    if value == "" and name.endswith(EMPTY_MEANS_DEFAULT):
        return ""
    return f"{name} is {value!r}, not {wanted.what}; e.g. {wanted.example}"


def problem(name: str, value: Any) -> str:
    """Why ``value`` is not in the syntax ``name``'s reader wants ("" when it is, or when the
    input has no such syntax, or is not a string: its type check says so)."""
    if not isinstance(value, str):
        return ""
    return _problem(name, value)
