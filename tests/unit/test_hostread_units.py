"""The host read's questions about systemd units (kafkaform.plans.hostread.unit_states): what
``systemctl is-enabled`` and ``systemctl is-active`` print, each on its labelled line, and which
units an "enable and start" (or a "disable and stop") would leave as they are."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from kafkaform.plans import hostread


def systemctl_stub(bin_dir: Path, states: Mapping[str, tuple[str, str]]) -> dict[str, str]:
    """A ``systemctl`` in ``bin_dir`` answering ``is-enabled`` and ``is-active`` for the units
    of ``states`` (unit to its two answers) as systemctl(1) does, and for any other unit as for
    one that does not exist; returns an environment that finds it first."""
    bin_dir.mkdir(exist_ok=True)
    cases = "".join(f'  "is-enabled {unit}") echo {enabled} ;;\n'
                    f'  "is-active {unit}") echo {active} ;;\n'
                    for unit, (enabled, active) in states.items())
    stub = bin_dir / "systemctl"
    stub.write_text("#!/bin/sh\ncase \"$1 $2\" in\n" + cases
                    + '  is-enabled*) echo "Failed to get unit file state for $2" >&2; exit 1 ;;\n'
                    + "  is-active*) echo inactive; exit 3 ;;\nesac\n")
    stub.chmod(0o755)
    return dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")


def _answers(lines: Mapping[str, tuple[str, str]]) -> dict[str, str]:
    return hostread.answers("\n".join(
        f"enabled:{unit} {enabled}\nactive:{unit} {active}"
        for unit, (enabled, active) in lines.items()))


#: What systemctl answers (is-enabled, is-active), whether an "enable and start" would leave
#: the unit as it is (running) and whether a "disable and stop" would (stopped).
UNIT_STATES = [
    ("enabled", "active", True, False),
    ("disabled", "active", False, False),
    ("enabled", "inactive", False, False),
    ("enabled", "failed", False, False),  # KR-11: a controller's unit failed its start
    ("enabled", "activating", False, False),
    ("static", "active", False, False),  # the module decides: it is asked
    ("disabled", "inactive", False, True),  # KR-09: a controller stopped for good
    ("", "inactive", False, False),  # no such unit: a new host
    ("", "", False, False),  # no systemctl
]
#: Each answer pair, and whether a role enables and starts the unit.
STARTS = [(enabled, active, not running) for enabled, active, running, _ in UNIT_STATES]


@pytest.mark.parametrize(("enabled", "active", "running", "stopped"), UNIT_STATES)
def test_a_unit_runs_only_when_enabled_and_active(enabled: str, active: str, running: bool,
                                                  stopped: bool) -> None:
    found = _answers({"kafka.service": (enabled, active)})
    assert ("kafka.service" in hostread.running_units(found)) is running
    assert ("kafka.service" in hostread.stopped_units(found)) is stopped


def test_a_unit_without_its_lines_is_neither() -> None:
    assert hostread.running_units({}) == hostread.stopped_units({}) == frozenset()
    assert hostread.running_units({"enabled:kafka.service": "enabled"}) == frozenset()


def test_each_unit_is_read_by_its_own_labels() -> None:
    found = _answers({"spark-master.service": ("enabled", "active"),
                      "spark-worker.service": ("enabled", "inactive")})
    assert hostread.running_units(found) == {"spark-master.service"}


def test_the_questions_run_under_sh_with_systemctl_as_it_answers(tmp_path: Path) -> None:
    env = systemctl_stub(tmp_path / "bin", {"zookeeper.service": ("enabled", "active"),
                                            "zookeeper-purge.timer": ("disabled", "inactive")})
    units = ["zookeeper.service", "zookeeper-purge.timer", "kafka.service"]
    ran = subprocess.run(hostread.command(hostread.unit_states(units)), capture_output=True,
                         text=True, check=True, env=env)
    found = hostread.answers(ran.stdout)
    assert found == {"enabled:zookeeper.service": "enabled", "active:zookeeper.service": "active",
                     "enabled:zookeeper-purge.timer": "disabled",
                     "active:zookeeper-purge.timer": "inactive",
                     "enabled:kafka.service": "", "active:kafka.service": "inactive"}
    assert hostread.running_units(found) == {"zookeeper.service"}
    assert hostread.stopped_units(found) == {"zookeeper-purge.timer"}
