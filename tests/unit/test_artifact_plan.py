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
    # SE-19: the signature beside the archive, the project's KEYS two levels up, as Apache has them.
    assert (p.verify_signature, p.signature_url, p.keys_url) == (
        True, f"{URL}.asc", "http://kf-mirror:8080/kafka/KEYS")
    assert (p.signature_file, p.keys_file) == (f"{p.cached}.asc",
                                               "/var/cache/kafkaform/artifacts/kafka-KEYS")
    pinned = artifact_plan({**SETTINGS, "artifact_keys_url": "https://keys.example/kafka-KEYS",
                            "artifact_verify_signature": False}, ArtifactHost())
    assert (pinned.keys_url, pinned.verify_signature) == ("https://keys.example/kafka-KEYS", False)
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


def _zookeeper(settings: dict[str, Any], stdout: str | None) -> Any:
    from kafkaform.plans import zookeeper
    from tests.unit.test_zookeeper_context import cluster
    if stdout is None:
        return zookeeper.host_read(cluster(), "kf-zk2", settings)
    return zookeeper.zookeeper_plan(cluster(), "kf-zk2", settings, zookeeper.parse_host(stdout))


def _kafka_broker(settings: dict[str, Any], stdout: str | None) -> Any:
    from kafkaform.plans import kafka_broker
    from tests.unit.test_kafka_broker_plan import zk_cluster
    if stdout is None:
        return kafka_broker.host_read(zk_cluster(), "k1", settings)
    return kafka_broker.install_plan(settings, kafka_broker.parse_host(stdout))


def _spark_node(settings: dict[str, Any], stdout: str | None) -> Any:
    from kafkaform.plans import spark_node
    from tests.unit.test_spark import cluster
    if stdout is None:
        return spark_node.host_read(cluster(), "sw1", settings)
    return spark_node.spark_node_plan(cluster(), "sw1", settings, spark_node.parse_host(stdout))


@pytest.mark.parametrize(("role", "read_or_plan"), [
    ("zookeeper", _zookeeper), ("kafka_broker", _kafka_broker), ("spark_node", _spark_node)])
def test_a_role_includes_the_artifact_role_exactly_when_it_would_install(
        role: str, read_or_plan: Any, tmp_path: Path) -> None:
    """Each including role asks for its release's marker in its own host read (run here, on
    each state a host can be in) and includes the artifact role only where the artifact role's
    own read and plan would install: a run with nothing to change skips the include."""
    needed = {}
    for state in STATES:
        root = tmp_path / state.replace(" ", "-")
        settings = {f"{role}_install_dir": str(root / "kafka")}
        release = read_or_plan(settings, "").release
        assert release["artifact_link"] == str(root / "kafka")
        assert release["artifact_install_root"] == str(root)
        versioned = root / f"kafka-{release['artifact_version']}"
        if state != "fresh":
            versioned.mkdir(parents=True)
            written = release_marker(release["artifact_name"], release["artifact_version"],
                                     release["artifact_url"], "ab" * 64)
            if state == "other release behind the link":
                written = [line.replace(release["artifact_version"], "0.0.1") for line in written]
            (versioned / MARKER).write_text("".join(f"{line}\n" for line in written))
            if state != "unlinked":
                (root / "kafka").symlink_to(versioned)
        ran = subprocess.run(read_or_plan(settings, None), capture_output=True, text=True,
                             check=True)
        needed[state] = read_or_plan(settings, ran.stdout).install_release
        given = {**release, "artifact_cache_dir": str(root / "cache")}
        own = subprocess.run(host_read(given), capture_output=True, text=True, check=True)
        assert artifact_plan(given, parse_host(own.stdout)).install is needed[state], state
    assert needed == {"fresh": True, "in place": False, "other release behind the link": True,
                      "unlinked": True}
