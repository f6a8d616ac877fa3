"""kafkaform.platform.install_files: several files in one call to the host, written only where
their content, owner, group or mode differ; the logic on its own, then the task through
ansible-playbook on this machine."""

from __future__ import annotations

import grp
import importlib.util
import json
import os
import pwd
import stat
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kafkaform.plans import hostread

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent



def _module_utils() -> ModuleType:
    """The module_utils file by its path: importing it as ansible_collections.kafkaform.platform
    here would claim the ansible_collections package before Ansible's collection loader, which
    the roles' defaults are then templated through in this process."""
    path = ROOT / "plugins" / "module_utils" / "install_files.py"
    spec = importlib.util.spec_from_file_location("kafkaform_install_files", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


install = _module_utils().install

OWNER = pwd.getpwuid(os.getuid()).pw_name
GROUP = grp.getgrgid(os.getgid()).gr_name


def spec(dest: Path, content: bytes, mode: str = "0640") -> dict[str, Any]:
    return {"dest": str(dest), "content": content, "owner": OWNER, "group": GROUP, "mode": mode}


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_writes_missing_files_then_changes_nothing(tmp_path: Path) -> None:
    files = [spec(tmp_path / "a.pem", b"cert\n"), spec(tmp_path / "k.p12", b"\0\x01binary")]
    first = install(files)
    assert first["changed"]
    assert [f["changes"] for f in first["files"]] == [["content"], ["content"]]
    assert (tmp_path / "k.p12").read_bytes() == b"\0\x01binary"
    assert mode_of(tmp_path / "a.pem") == 0o640
    before = (tmp_path / "a.pem").stat().st_mtime_ns
    second = install(files)
    assert not second["changed"]
    assert (tmp_path / "a.pem").stat().st_mtime_ns == before
    # Nothing but the two files: the temporary file was renamed over the destination.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.pem", "k.p12"]


def test_fixes_only_the_mode_of_a_file_with_the_right_content(tmp_path: Path) -> None:
    path = tmp_path / "key.pem"
    path.write_bytes(b"key\n")
    path.chmod(0o644)
    inode = path.stat().st_ino
    result = install([spec(path, b"key\n", mode="0600")])
    assert result["files"][0]["changes"] == ["mode"]
    assert mode_of(path) == 0o600
    assert path.stat().st_ino == inode


def test_a_changed_file_is_replaced_with_its_mode_already_set(tmp_path: Path) -> None:
    path = tmp_path / "key.pem"
    path.write_bytes(b"old key\n")
    path.chmod(0o644)
    install([spec(path, b"new key\n", mode="0600")])
    assert path.read_bytes() == b"new key\n"
    assert mode_of(path) == 0o600


def test_check_mode_reports_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "job.py"
    path.write_bytes(b"print(1)\n")
    result = install([spec(path, b"print(2)\n"), spec(tmp_path / "new.py", b"x\n")],
                     check_mode=True, want_diff=True)
    assert result["changed"]
    assert path.read_bytes() == b"print(1)\n"
    assert not (tmp_path / "new.py").exists()
    assert result["diff"][0]["before"] == "print(1)\n"
    assert result["diff"][0]["after"] == "print(2)\n"
    assert result["diff"][1]["before_header"] == "(absent)"


def test_binary_content_gets_no_text_diff(tmp_path: Path) -> None:
    result = install([spec(tmp_path / "k.p12", b"\0\x02")], want_diff=True)
    assert "binary" in result["diff"][0]["after"]


def directory(path: Path, mode: str = "0750") -> dict[str, Any]:
    return {"path": str(path), "owner": OWNER, "group": GROUP, "mode": mode}


def test_makes_directories_and_their_parents_then_the_files_in_them(tmp_path: Path) -> None:
    conf, data = tmp_path / "etc" / "svc", tmp_path / "data"
    data.mkdir(mode=0o755)
    calls = {"directories": [directory(conf), directory(data, "0700")],
             "files": [spec(conf / "svc.conf", b"a=1\n")]}
    first = install(**calls)
    assert [d["changes"] for d in first["directories"]] == [["created"], ["mode"]]
    # Missing parents get the directory's attributes, as ansible.builtin.file gives them.
    assert mode_of(tmp_path / "etc") == mode_of(conf) == 0o750
    assert mode_of(data) == 0o700
    assert (conf / "svc.conf").read_bytes() == b"a=1\n"
    second = install(**calls)
    assert not second["changed"]
    assert [d["changes"] for d in second["directories"]] == [[], []]


def test_check_mode_plans_directories_and_their_files_and_makes_nothing(tmp_path: Path) -> None:
    conf = tmp_path / "etc" / "svc"
    result = install([spec(conf / "svc.conf", b"a=1\n")], check_mode=True,
                     directories=[directory(conf)])
    assert result["changed"]
    assert result["directories"][0]["changes"] == ["created"]
    assert result["files"][0]["changes"] == ["content"]
    assert not (tmp_path / "etc").exists()


def test_a_file_where_a_directory_should_be_is_refused(tmp_path: Path) -> None:
    (tmp_path / "conf").write_bytes(b"not a directory")
    with pytest.raises(ValueError, match="conf: exists and is not a directory"):
        install([], directories=[directory(tmp_path / "conf")])
    assert (tmp_path / "conf").read_bytes() == b"not a directory"


@pytest.mark.parametrize(("field", "value", "message"), [
    ("owner", "no-such-user-kf", "owner 'no-such-user-kf' does not exist"),
    ("group", "no-such-group-kf", "group 'no-such-group-kf' does not exist"),
    ("mode", "rw-r", "mode 'rw-r' is not an octal number"),
    ("dest", "/nonexistent-kf/dir/file", "its directory does not exist"),
])
def test_bad_input_names_the_file_and_the_fix(tmp_path: Path, field: str, value: str,
                                              message: str) -> None:
    item = {**spec(tmp_path / "f", b"x"), field: value}
    with pytest.raises(ValueError, match=message):
        install([item])
    assert not (tmp_path / "f").exists()


def test_validate_sees_the_new_content_before_it_replaces_the_file(tmp_path: Path) -> None:
    path = tmp_path / "rules.yml"
    path.write_bytes(b"old: rules\n")
    # grep accepts the new file only if it holds the new content, so the command saw it.
    item = {**spec(path, b"groups: []\n"), "validate": "grep -q groups %s"}
    assert install([item])["files"][0]["changes"] == ["content"]
    assert path.read_bytes() == b"groups: []\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rules.yml"]


def test_a_refused_content_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "prometheus.yml"
    path.write_bytes(b"good: config\n")
    path.chmod(0o640)
    item = {**spec(path, b"broken\n"), "validate": "grep -q good: %s"}
    refusal = r"prometheus.yml: the new content fails `grep -q good: %s` \(exit 1\), so the file"
    with pytest.raises(ValueError, match=refusal):
        install([item])
    assert path.read_bytes() == b"good: config\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prometheus.yml"]
    # Check mode reports the change and, as ansible.builtin.template, runs no validation.
    assert install([item], check_mode=True)["changed"]
    # An unchanged content is not validated again.
    assert not install([{**spec(path, b"good: config\n"), "validate": "false %s"}])["changed"]


def test_a_validate_command_without_the_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="must contain %s"):
        install([{**spec(tmp_path / "f", b"x"), "validate": "promtool check rules"}])
    assert not (tmp_path / "f").exists()


def run_task(tmp_path: Path, task: dict[str, Any], *flags: str) -> dict[str, Any]:
    """The task on this machine through ansible-playbook; its registered result."""
    playbook = tmp_path / "play.yml"
    result_file = tmp_path / "result.json"
    playbook.write_text(json.dumps([{
        "hosts": "localhost", "gather_facts": False, "connection": "local",
        "tasks": [{**task, "register": "installed"},
                  {"ansible.builtin.copy": {"content": "{{ installed | to_json }}",
                                            "dest": str(result_file)},
                   "check_mode": False, "diff": False}]}]))
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", PATH=f"{BIN}:{os.environ['PATH']}")
    run = subprocess.run([str(BIN / "ansible-playbook"), "-i", "localhost,", str(playbook),
                          "-e", f"ansible_python_interpreter={sys.executable}", *flags],
                         capture_output=True, text=True, check=False, cwd=ROOT, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    return dict(json.loads(result_file.read_text()))


def test_the_task_installs_sources_and_content_in_one_call(tmp_path: Path) -> None:
    source = tmp_path / "keystore.p12"
    source.write_bytes(bytes(range(256)))
    target = tmp_path / "host"
    task = {"kafkaform.platform.install_files": {
        "owner": OWNER, "group": GROUP, "mode": "0640",
        "directories": [{"path": str(target), "mode": "0750"}],
        "files": [{"src": str(source), "dest": str(target / "keystore.p12")},
                  {"content": "", "dest": str(target / "__init__.py"), "mode": "0644"}]}}
    dry = run_task(tmp_path, task, "--check")
    assert dry["changed"] and not target.exists()
    first = run_task(tmp_path, task)
    assert first["changed"]
    assert mode_of(target) == 0o750
    assert (target / "keystore.p12").read_bytes() == bytes(range(256))
    assert mode_of(target / "keystore.p12") == 0o640
    assert mode_of(target / "__init__.py") == 0o644
    assert not run_task(tmp_path, task)["changed"]


def test_a_task_with_a_missing_source_fails_naming_it(tmp_path: Path) -> None:
    playbook = tmp_path / "play.yml"
    playbook.write_text(json.dumps([{"hosts": "localhost", "gather_facts": False,
                                     "connection": "local", "tasks": [
        {"kafkaform.platform.install_files": {
            "files": [{"src": str(tmp_path / "absent.pem"), "dest": str(tmp_path / "x")}]}}]}]))
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=f"{BIN}:{os.environ['PATH']}")
    run = subprocess.run([str(BIN / "ansible-playbook"), "-i", "localhost,", str(playbook)],
                         capture_output=True, text=True, check=False, cwd=ROOT, env=env)
    assert run.returncode != 0
    assert "absent.pem" in run.stdout
    assert not (tmp_path / "x").exists()


def test_a_template_renders_as_the_template_module_renders_it(tmp_path: Path) -> None:
    template = tmp_path / "server.properties.j2"
    template.write_text("# {{ name }}\n{% for n in range(2) %}\nid.{{ n }}={{ ident }}\n"
                        "{% endfor %}\nlast=line\n\n")
    target = tmp_path / "host"
    target.mkdir()
    common = {"owner": OWNER, "group": GROUP}
    run_task(tmp_path, {"ansible.builtin.template": {
        "src": str(template), "dest": str(target / "by-template"), **common},
        "vars": {"name": "broker", "ident": 7}})
    run_task(tmp_path, {"kafkaform.platform.install_files": {
        **common, "files": [{"template": str(template), "dest": str(target / "by-install"),
                             "vars": {"ident": 7}}]},
        "vars": {"name": "broker"}})
    assert (target / "by-install").read_bytes() == (target / "by-template").read_bytes()
    assert b"id.1=7\n" in (target / "by-install").read_bytes()


def _host_state(*paths: Path) -> dict[str, str]:
    """What a role's host read finds of ``paths`` on this machine (hostread.path_states)."""
    ran = subprocess.run(hostread.command(hostread.path_states(str(p) for p in paths)),
                         capture_output=True, text=True, check=True)
    return hostread.found_paths(hostread.answers(ran.stdout))


def test_a_host_state_that_matches_skips_the_call_and_one_that_differs_does_not(
        tmp_path: Path) -> None:
    """Handed what the host read found, the action compares on the control node: where every
    file and directory matches, it reports no change and asks the host nothing (a file edited
    after that read stays as it is, so no call was made); where anything differs or is
    missing from the read, the module compares and writes as always."""
    template = tmp_path / "zoo.cfg.j2"
    template.write_text("tickTime={{ tick }}\n")
    target = tmp_path / "host"
    conf, script = target / "zoo.cfg", target / "probe"
    files = [{"template": str(template), "dest": str(conf), "vars": {"tick": 2000}},
             {"content": "#!/bin/sh\n", "dest": str(script), "mode": "0755"}]
    task = {"owner": OWNER, "group": GROUP, "mode": "0640",
            "directories": [{"path": str(target), "mode": "0750"}], "files": files}

    def run(state: dict[str, str] | None) -> dict[str, Any]:
        given = task if state is None else {**task, "host_state": state}
        return run_task(tmp_path, {"kafkaform.platform.install_files": given})

    assert run(None)["changed"]
    state = _host_state(target, conf, script)
    assert state[str(script)].startswith(f"755 {OWNER} {GROUP} ")
    assert state[str(target)] == f"750 {OWNER} {GROUP} directory"
    assert not run(state)["changed"]
    conf.write_text("tickTime=1\n")  # after the read: the skip does not see it
    assert not run(state)["changed"] and conf.read_text() == "tickTime=1\n"
    assert run(_host_state(target, conf, script))["changed"]  # read again: restored
    assert conf.read_text() == "tickTime=2000\n"
    script.chmod(0o700)
    assert run(_host_state(target, conf, script))["changed"] and mode_of(script) == 0o755
    conf.write_text("tickTime=1\n")
    assert run(_host_state(target, script))["changed"]  # the read missed a file: asked
    assert conf.read_text() == "tickTime=2000\n"
    target.chmod(0o755)
    assert run(_host_state(target, conf, script))["changed"] and mode_of(target) == 0o750
    assert not run(_host_state(target, conf, script))["changed"]
