"""The facts pyinfra's deploys read from hosts (kafkaform.deploys.facts), their commands run
here on real files."""

from __future__ import annotations

import grp
import hashlib
import os
import pwd
import subprocess
from pathlib import Path

from kafkaform.deploys.facts import FILE_STATES_MAX_KIB, FileStates, parse_file_states


def file_states(directory: Path) -> dict[str, tuple[int, str, str, str]]:
    command = FileStates().command(str(directory))
    ran = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=True)
    return parse_file_states(ran.stdout.splitlines())


def test_one_command_gives_mode_owner_group_and_sha1_of_each_small_file(tmp_path: Path) -> None:
    (tmp_path / "server.properties").write_text("broker.id=1\n")
    (tmp_path / "server.properties").chmod(0o640)
    (tmp_path / "kafka.service").write_text("[Unit]\n")
    (tmp_path / "kafka.service").chmod(0o644)
    (tmp_path / "big.jar").write_bytes(b"x" * (FILE_STATES_MAX_KIB * 1024 + 1))
    (tmp_path / "conf.d").mkdir()
    (tmp_path / "conf.d" / "nested.conf").write_text("not listed\n")
    (tmp_path / "link").symlink_to(tmp_path / "kafka.service")
    owner, group = pwd.getpwuid(os.getuid()).pw_name, grp.getgrgid(os.getgid()).gr_name
    assert file_states(tmp_path) == {
        "server.properties": (0o640, owner, group, hashlib.sha1(b"broker.id=1\n").hexdigest()),
        "kafka.service": (0o644, owner, group, hashlib.sha1(b"[Unit]\n").hexdigest()),
    }


def test_a_missing_directory_has_no_files(tmp_path: Path) -> None:
    assert file_states(tmp_path / "absent") == {}


def test_a_file_without_both_lines_is_left_out() -> None:
    digest = "a" * 40
    lines = ["stat 644 root root only-stat", f"{digest}  ./only-sum",
             "stat 600 kafka kafka both", f"{digest}  ./both"]
    assert parse_file_states(lines) == {"both": (0o600, "kafka", "kafka", digest)}
