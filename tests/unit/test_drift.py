"""`kafkaform drift`: a real check run (ansible-playbook --check --diff with the collection's
drift callback) of a small playbook on this machine, summarised per host and file; the exit code
says whether anything differs (1), nothing does (0), or the run could not tell (2)."""

from __future__ import annotations

import grp
import json
import os
import pwd
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kafkaform.drift_cli import MONITORING, SITE, default_playbooks
from kafkaform.model import InventoryView

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
#: What the no_log task writes; it must never be printed.
SECRET = "hunter2-never-printed"
HIDDEN = "(content hidden: no_log)"


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "plugins" / "plugin_utils"),
            "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"), "PATH": f"{BIN}:{os.environ['PATH']}"}


def drift(*argv: str) -> subprocess.CompletedProcess[str]:
    """The command in its own interpreter: reading an inventory sets up Ansible process-wide."""
    return subprocess.run([sys.executable, "-m", "kafkaform", "drift", *argv],
                          capture_output=True, text=True, check=False, cwd=ROOT,
                          env=environment())


def write_inventory(tmp_path: Path, extra: str = "") -> Path:
    inventory = tmp_path / "hosts"
    inventory.write_text(f"localhost ansible_connection=local "
                         f"ansible_python_interpreter={sys.executable}\n{extra}")
    return inventory


def write_playbook(tmp_path: Path, tasks: list[dict[str, Any]], hosts: str = "all") -> Path:
    playbook = tmp_path / "play.yml"
    playbook.write_text(yaml.safe_dump([{"hosts": hosts, "gather_facts": False,
                                         "tasks": tasks}]))
    return playbook


@pytest.fixture
def managed(tmp_path: Path) -> tuple[Path, Path]:
    """A playbook managing files under tmp_path/etc with copy, template, lineinfile,
    install_files and a no_log copy, and its inventory (this machine)."""
    etc = tmp_path / "etc"
    etc.mkdir()
    (tmp_path / "broker.j2").write_text("broker.id={{ 40 + 2 }}\nlog.dirs=/data\n")
    owner = pwd.getpwuid(os.getuid()).pw_name
    group = grp.getgrgid(os.getgid()).gr_name
    tasks = [
        {"name": "Write the client config",
         "ansible.builtin.copy": {"dest": f"{etc}/client.conf", "mode": "0644",
                                  "content": "acks=all\nretries=5\n"}},
        {"name": "Render the broker config",
         "ansible.builtin.template": {"src": str(tmp_path / "broker.j2"), "mode": "0644",
                                      "dest": f"{etc}/broker.properties"}},
        {"name": "Set the heap",
         "ansible.builtin.lineinfile": {"path": f"{etc}/env.sh", "line": "KAFKA_HEAP=6g",
                                        "create": True, "mode": "0644"}},
        {"name": "Install the scripts",
         "kafkaform.platform.install_files": {
             "owner": owner, "group": group,
             "files": [{"dest": f"{etc}/start.sh", "content": "exec kafka\n", "mode": "0755"},
                       {"dest": f"{etc}/stop.sh", "content": "kill kafka\n", "mode": "0755"}]}},
        {"name": "Write the keystore password", "no_log": True,
         "ansible.builtin.copy": {"dest": f"{etc}/password", "mode": "0600",
                                  "content": f"{SECRET}\n"}},
    ]
    return write_inventory(tmp_path), write_playbook(tmp_path, tasks)


def test_drift_reports_missing_then_nothing_then_a_hand_edit(
        tmp_path: Path, managed: tuple[Path, Path]) -> None:
    inventory, playbook = managed
    etc = tmp_path / "etc"
    options = ["-i", str(inventory), "--playbook", str(playbook)]

    before = drift(*options, "--diff")
    assert before.returncode == 1, before.stdout + before.stderr
    for name in ("client.conf", "broker.properties", "env.sh", "start.sh", "stop.sh"):
        assert f"{etc}/{name}  [task: " in before.stdout
    assert "+broker.id=42" in before.stdout  # the template's rendered text, as a diff
    assert "+exec kafka" in before.stdout  # install_files' diff
    assert f"[task: Write the keystore password]\n      {HIDDEN}" in before.stdout
    assert SECRET not in before.stdout + before.stderr
    assert not list(etc.iterdir())  # check mode wrote nothing

    applied = subprocess.run([str(BIN / "ansible-playbook"), "-i", str(inventory), str(playbook)],
                             capture_output=True, text=True, check=False, cwd=ROOT,
                             env=environment())
    assert applied.returncode == 0, applied.stdout + applied.stderr

    after = drift(*options)
    assert after.returncode == 0, after.stdout + after.stderr
    assert after.stdout == "localhost: in line\n"

    (etc / "broker.properties").write_text("broker.id=7\nlog.dirs=/data\n")
    (etc / "password").write_text("typed-by-hand\n")
    (etc / "stop.sh").chmod(0o700)
    edited = drift(*options, "--format", "json")
    assert edited.returncode == 1, edited.stdout + edited.stderr
    [host] = json.loads(edited.stdout)["hosts"]
    assert host["host"] == "localhost"
    assert host["state"] == "drift"
    files = {entry["path"]: entry for entry in host["files"]}
    assert set(files) == {f"{etc}/broker.properties", f"{etc}/stop.sh", None}
    assert files[f"{etc}/stop.sh"]["notes"] == ["changes: mode"]  # install_files' own report
    diff = files[f"{etc}/broker.properties"]["diff"].splitlines()
    assert "-broker.id=7" in diff
    assert "+broker.id=42" in diff
    assert " log.dirs=/data" in diff  # context, not a changed line
    assert files[None] == {"path": None, "task": "Write the keystore password", "hidden": True,
                           "notes": [HIDDEN], "diff": ""}
    assert "typed-by-hand" not in edited.stdout + edited.stderr
    assert SECRET not in edited.stdout + edited.stderr


def test_a_failed_task_or_unreachable_host_is_no_answer(tmp_path: Path) -> None:
    # A failure the playbook plans for (ignore_errors, a rescued block) is not one.
    tasks = [
        {"name": "Probe that may fail", "ansible.builtin.command": "false",
         "check_mode": False, "changed_when": False, "ignore_errors": True},
        {"block": [{"name": "Try", "ansible.builtin.fail": {"msg": "planned"}}],
         "rescue": [{"name": "Recover", "ansible.builtin.debug": {"msg": "ok"}}]},
        {"name": "Refuse the inventory",
         "ansible.builtin.assert": {"that": ["false"], "fail_msg": "kafka_rack is missing"}},
    ]
    inventory = write_inventory(
        tmp_path, "nowhere ansible_connection=ssh ansible_host=127.0.0.1 ansible_port=9\n")
    playbook = write_playbook(tmp_path, tasks)

    run = drift("-i", str(inventory), "--playbook", str(playbook), "--format", "json")
    assert run.returncode == 2, run.stdout + run.stderr
    report = json.loads(run.stdout)
    problems = {(p["host"], p["task"], p["status"]) for p in report["problems"]}
    assert problems == {("localhost", "Refuse the inventory", "failed"),
                        ("nowhere", "Probe that may fail", "unreachable")}
    assert "could not tell: localhost: task 'Refuse the inventory' failed: kafka_rack is " \
           "missing" in run.stderr
    assert {host["host"]: host["state"] for host in report["hosts"]} == {
        "localhost": "unknown", "nowhere": "unknown"}
    assert "in line" not in run.stdout + run.stderr


def test_a_playbook_ansible_refuses_is_no_answer(tmp_path: Path) -> None:
    playbook = tmp_path / "broken.yml"
    playbook.write_text("- hosts: all\n  tasks:\n    - ansible.builtin.no_such_module: {}\n")
    run = drift("-i", str(write_inventory(tmp_path)), "--playbook", str(playbook))
    assert run.returncode == 2, run.stdout + run.stderr
    assert "ansible-playbook stopped (exit" in run.stderr
    assert "no_such_module" in run.stderr.rsplit("ansible-playbook stopped", 1)[1]
    assert "in line" not in run.stdout


@pytest.mark.parametrize(("argv", "said"), [
    (["--playbook", "no/such/play.yml"], "--playbook no/such/play.yml: no such file"),
    (["--limit", "kafka-9"], "matches --limit 'kafka-9'"),
])
def test_input_errors_exit_2_before_any_run(tmp_path: Path, argv: list[str], said: str) -> None:
    run = drift("-i", str(write_inventory(tmp_path)), *argv)
    assert run.returncode == 2
    assert said in run.stderr
    assert "check mode on" not in run.stderr  # refused before ansible-playbook started


def test_a_collection_playbook_is_found_by_its_name_anywhere(tmp_path: Path) -> None:
    # Outside the checkout and its ansible.cfg: the collection comes with the command.
    env = {key: value for key, value in environment().items() if key != "ANSIBLE_CONFIG"}
    run = subprocess.run([sys.executable, "-m", "kafkaform", "drift", "-i",
                          str(write_inventory(tmp_path)), "--playbook",
                          "kafkaform.platform.preflight"], capture_output=True, text=True,
                         check=False, cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "play 1: Check the inventory against the cluster rules on 1 host(s)" in run.stderr
    assert run.stdout == "localhost: in line\n"


def test_the_site_playbook_wants_platform_hosts(tmp_path: Path) -> None:
    run = drift("-i", str(write_inventory(tmp_path)))
    assert run.returncode == 2
    assert "is in a kafkaform group" in run.stderr
    assert "check mode on" not in run.stderr


def test_several_playbooks_are_checked_in_one_run_in_order(tmp_path: Path) -> None:
    """--playbook repeated: one check run of both (the default does so with the site and the
    monitoring playbooks), each one's changes under its host."""
    first, second = tmp_path / "first.yml", tmp_path / "second.yml"
    for playbook, name in ((first, "one.conf"), (second, "two.conf")):
        playbook.write_text(yaml.safe_dump([{"hosts": "all", "gather_facts": False, "tasks": [
            {"name": f"Write {name}", "ansible.builtin.copy": {
                "dest": str(tmp_path / name), "content": "x\n", "mode": "0644"}}]}]))
    run = drift("-i", str(write_inventory(tmp_path)), "--playbook", str(first),
                "--playbook", str(second), "--format", "json")
    assert run.returncode == 1, run.stdout + run.stderr
    report = json.loads(run.stdout)
    assert report["playbooks"] == [str(first), str(second)]
    (host,) = report["hosts"]
    files = [change["path"] for change in host["files"]]
    assert files == [str(tmp_path / "one.conf"), str(tmp_path / "two.conf")]
    assert f"{first}, {second} in check mode on 1 host(s)" in run.stderr


def test_the_whole_platform_is_site_then_monitoring_where_monitoring_hosts_are() -> None:
    groups = {"zookeeper": ["zk1"], "kafka_broker": ["k1"]}
    hostvars: dict[str, dict[str, Any]] = {"zk1": {}, "k1": {}, "mon": {}}
    assert default_playbooks(InventoryView(groups=groups, hostvars=hostvars)) == [SITE]
    assert default_playbooks(InventoryView(groups={**groups, "monitoring": ["mon"]},
                                           hostvars=hostvars)) == [SITE, MONITORING]
