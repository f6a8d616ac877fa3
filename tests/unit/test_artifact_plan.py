"""The artifact role's plan (kafkaform.plans.artifact): its host read, parsed by label; whether a
release is in place and what is unpacked; and both engines deciding alike from the same read."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from kafkaform.deploys import artifact as deploy
from kafkaform.deploys.facts import CommandOutput
from kafkaform.plans.artifact import ArtifactHost, artifact_plan, host_read, parse_host
from kafkaform.release_marker import MARKER, release_marker
from tests.unit.test_plan_parity import _run as run_playbook

URL = "http://kf-mirror:8080/kafka/3.9.2/kafka_2.13-3.9.2.tgz?mirror=lab"
SETTINGS = {"artifact_name": "kafka", "artifact_version": "3.9.2", "artifact_url": URL}
WRITTEN = "".join(f"{line}\n" for line in release_marker("kafka", "3.9.2", URL, "ab" * 64))


def _line(label: str, text: str) -> str:
    return f"{label} {base64.b64encode(text.encode()).decode()}"


@pytest.mark.parametrize(("stdout", "expected"), [
    ("", ArtifactHost()),
    (_line("marker", WRITTEN), ArtifactHost(marker=WRITTEN)),
    (f"unpacked yes\n{_line('marker', WRITTEN)}", ArtifactHost(marker=WRITTEN, unpacked=True)),
    ("marker ", ArtifactHost(marker="")),  # a marker base64 could not read: not this release
    ("marker !!not-base64", ArtifactHost()),
    ("unpacked no", ArtifactHost()),
])
def test_each_answer_is_read_by_its_label(stdout: str, expected: ArtifactHost) -> None:
    assert parse_host(stdout) == expected


@pytest.mark.parametrize(("marker", "install"), [
    (None, True),
    ("", True),
    (WRITTEN, False),
    ("name=kafka\nversion=3.9.2\narchive=kafka_2.13-3.9.2.tgz\n", False),
    (WRITTEN.replace("3.9.2", "4.1.2"), True),
    (WRITTEN.replace("2.13", "2.12"), True),
    (WRITTEN.replace("name=kafka", "name=zookeeper"), True),
])
def test_a_release_is_in_place_only_when_the_marker_names_it(marker: str | None,
                                                           install: bool) -> None:
    assert artifact_plan(SETTINGS, ArtifactHost(marker=marker)).install is install


@pytest.mark.parametrize("unpacked", [False, True])
def test_the_archive_is_unpacked_only_into_a_directory_without_the_marker(unpacked: bool) -> None:
    assert artifact_plan(SETTINGS, ArtifactHost(unpacked=unpacked)).unpack is not unpacked


def test_the_paths_follow_the_role_defaults_and_inputs() -> None:
    p = artifact_plan(SETTINGS, ArtifactHost())
    assert (p.dir, p.link, p.marker) == ("/opt/kafkaform/kafka-3.9.2", "/opt/kafkaform/kafka",
                                         f"/opt/kafkaform/kafka-3.9.2/{MARKER}")
    assert (p.cache_dir, p.cached) == ("/var/cache/kafkaform/artifacts",
                                       "/var/cache/kafkaform/artifacts/kafka_2.13-3.9.2.tgz")
    assert (p.checksum_url, p.archive) == (f"{URL}.sha512", "kafka_2.13-3.9.2.tgz")
    assert (p.owner, p.group, p.timeout, p.validate_certs) == ("root", "root", 60, True)
    assert p.marker_content("ab" * 64) == WRITTEN
    moved = artifact_plan({**SETTINGS, "artifact_install_root": "/srv", "artifact_link": "/srv/k",
                           "artifact_validate_certs": "false"}, ArtifactHost())
    assert (moved.dir, moved.link, moved.validate_certs) == ("/srv/kafka-3.9.2", "/srv/k", False)


def _layout(root: Path, state: str) -> dict[str, Any]:
    """A host's release as ``state`` leaves it under ``root``; the settings that install there."""
    settings = {**SETTINGS, "artifact_install_root": str(root),
                "artifact_cache_dir": str(root / "cache")}
    versioned = root / "kafka-3.9.2"
    if state == "fresh":
        return settings
    versioned.mkdir(parents=True)
    marker = WRITTEN if state == "in place" else WRITTEN.replace("3.9.2", "3.9.1")
    (versioned / MARKER).write_text(marker)
    if state != "unlinked":
        (root / "kafka").symlink_to(versioned)
    return settings


STATES = ("fresh", "in place", "other release behind the link", "unlinked")


def test_the_read_runs_and_parses_on_this_machine(tmp_path: Path) -> None:
    found = {}
    for state in STATES:
        settings = _layout(tmp_path / state.replace(" ", "-"), state)
        ran = subprocess.run(host_read(settings), capture_output=True, text=True, check=True)
        found[state] = artifact_plan(settings, parse_host(ran.stdout))
    assert {state: (p.install, p.unpack) for state, p in found.items()} == {
        "fresh": (True, True), "in place": (False, False),
        "other release behind the link": (True, False), "unlinked": (True, False)}


class _Host:
    """pyinfra's current host, asking this machine: what the deploy's plan reads."""

    name = "localhost"

    def get_fact(self, fact: type, argv: tuple[str, ...]) -> str:
        assert fact is CommandOutput
        return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


def test_both_engines_decide_alike_from_the_same_host(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The role's read and plan (tasks/read.yml, run by ansible-playbook here) and the deploy's
    (deploys/artifact.py's plan) give the same plan on each host state."""
    monkeypatch.setattr(deploy, "host", _Host())
    monkeypatch.setattr(deploy, "host_variables", lambda _host: {})
    plays, by_deploy = [], {}
    for state in STATES:
        root = tmp_path / state.replace(" ", "-")
        settings = _layout(root, state)
        by_deploy[state] = deploy.plan(settings).as_vars()
        plays += [{"name": f"Read and plan, {state}", "ansible.builtin.include_role": {
                       "name": "kafkaform.platform.artifact", "tasks_from": "read"},
                   "vars": settings},
                  {"name": f"Keep the plan, {state}", "ansible.builtin.copy": {
                      "content": "{{ artifact_plan | to_json }}", "dest": f"{root}.json"}}]
    playbook = tmp_path / "read.yml"
    playbook.write_text(yaml.safe_dump([{"name": "Plan the artifact role", "hosts": "localhost",
                                         "gather_facts": False, "connection": "local",
                                         "tasks": plays}], sort_keys=False))
    run_playbook(playbook)
    by_role = {state: json.loads(Path(f"{tmp_path / state.replace(' ', '-')}.json").read_text())
               for state in STATES}
    assert by_role == by_deploy
    assert [by_role[state]["install"] for state in STATES] == [True, False, True, True]
