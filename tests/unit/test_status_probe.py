"""How `kafkaform status` reads hosts (kafkaform.status_probe): the probe run for real on this
machine, and a real `ansible` ad-hoc call against localhost and a host it cannot reach."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kafkaform import inventory
from kafkaform.status_probe import Answer, Ask, Tool, answer, answers, ask_hosts


def test_the_probe_reads_files_the_newest_numbered_entry_and_the_tools_output(
        tmp_path: Path) -> None:
    (tmp_path / "cert.pem").write_text("PEM")
    commits = tmp_path / "commits"
    commits.mkdir()
    for name in ("9", "10", ".10.crc", "tmp"):  # Spark's checksum files are not batches
        (commits / name).write_text("v1")
    os.utime(commits / "10", (1_700_000_000, 1_700_000_000))
    ask = Ask(files=[str(tmp_path / "cert.pem"), str(tmp_path / "missing.pem")],
              newest=[str(commits), str(tmp_path / "none")],
              run={"ok": [sys.executable, "-c", "print('{\"a\": 1}')"],
                   "missing": [str(tmp_path / "no-such-tool")]})
    argv = ask.argv()
    argv[0] = sys.executable  # "python3" on the hosts
    found = json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)
    parsed = answer("here", {"stdout": json.dumps(found), "rc": 0})
    assert parsed.files[str(tmp_path / "cert.pem")] == {"text": "PEM"}
    assert "No such file" in parsed.files[str(tmp_path / "missing.pem")]["error"]
    assert parsed.newest[str(commits)] == {"name": "10", "mtime": 1_700_000_000}
    assert "error" in parsed.newest[str(tmp_path / "none")]
    assert parsed.tool("ok").json() == {"a": 1}
    assert parsed.tool("missing").rc is None and "no-such-tool" in parsed.tool("missing").why()
    assert parsed.tool("never asked").why().startswith("exit None: not run")


@pytest.mark.parametrize(("result", "problem"), [
    ({"unreachable": True, "msg": "Failed to connect to the host via ssh: refused\nmore"},
     "Ansible cannot reach it: Failed to connect to the host via ssh: refused"),
    ({"failed": True, "rc": 127, "stdout": "", "stderr": "python3: not found"},
     "the probe failed: python3: not found"),
    ({"failed": True, "msg": "Task failed: Finalization of task args failed"},
     "the probe failed: Task failed: Finalization of task args failed"),
])
def test_a_host_without_an_answer_says_why(result: dict[str, object], problem: str) -> None:
    assert answer("kf-x", result).problem == problem


def test_a_host_missing_from_ansibles_report_is_named() -> None:
    found = answers({"plays": [{"tasks": [{"hosts": {}}]}]}, ["kf-x"])
    assert found == {"kf-x": Answer("kf-x", "Ansible gave no answer for it")}


def test_a_tool_answers_with_its_last_json_line() -> None:
    assert Tool(0, "log line\n{\"a\": 1}\n", "").json() == {"a": 1}
    assert Tool(1, "{not json\n", "").json() is None
    assert Tool(2, "", "usage: x\nx: error: invalid choice\n").why() == \
        "exit 2: x: error: invalid choice"


@pytest.mark.parametrize("callbacks", ["", "ansible.posix.profile_tasks"])
def test_ansible_asks_every_host_at_once_and_names_the_one_it_cannot_reach(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, callbacks: str) -> None:
    """One real ad-hoc call: a host reached (a local connection) answers with its own probe,
    one Ansible cannot reach (nothing listens on its SSH port) is named with why; also with a
    callback of the operator's printing beside the report."""
    if callbacks:
        monkeypatch.setenv("ANSIBLE_CALLBACKS_ENABLED", callbacks)
    else:
        monkeypatch.delenv("ANSIBLE_CALLBACKS_ENABLED", raising=False)
    hosts = tmp_path / "hosts.yml"
    hosts.write_text(
        "all:\n  hosts:\n"
        f"    here: {{ansible_connection: local, ansible_python_interpreter: {sys.executable}}}\n"
        "    nowhere: {ansible_host: 127.0.0.1, ansible_port: 1, ansible_user: nobody,"
        " ansible_ssh_common_args: '-o BatchMode=yes -o ConnectTimeout=3'}\n")
    (tmp_path / "seen.txt").write_text("here's file")
    asks = {"here": Ask(files=[str(tmp_path / "seen.txt")],
                        run={"echo": ["sh", "-c", "echo '{\"host\": \"here\"}'"]}),
            "nowhere": Ask(run={"echo": ["true"]})}
    found = ask_hosts(inventory.Sources((str(hosts),)), asks)
    assert found["here"].problem == "", found["here"]
    assert found["here"].tool("echo").json() == {"host": "here"}
    assert found["here"].files[str(tmp_path / "seen.txt")] == {"text": "here's file"}
    assert found["nowhere"].problem.startswith("Ansible cannot reach it: "), found["nowhere"]


def _vaulted_host(tmp_path: Path, password: bytes) -> Path:
    """An inventory whose one host has its connection vault-encrypted (local): the ad-hoc call
    reaches it only when the child decrypts it with the secret the command was given."""
    from ansible.parsing.vault import VaultLib, VaultSecret

    sealed = VaultLib([("default", VaultSecret(password))]).encrypt("local").decode()
    hosts = tmp_path / "hosts.yml"
    hosts.write_text("all:\n  hosts:\n    here:\n      ansible_connection: !vault |\n"
                     + "".join(f"        {line}\n" for line in sealed.splitlines()))
    return hosts


@pytest.mark.parametrize("prompted", [False, True])
def test_the_ad_hoc_call_decrypts_with_the_secret_the_command_was_given(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prompted: bool) -> None:
    """A password file reaches the child through ANSIBLE_VAULT_IDENTITY_LIST, a secret typed at
    the prompt through a pipe it inherits; without either it cannot read the host's variables."""
    from ansible.parsing.vault import PromptVaultSecret

    monkeypatch.delenv("ANSIBLE_VAULT_PASSWORD_FILE", raising=False)
    monkeypatch.delenv("ANSIBLE_VAULT_IDENTITY_LIST", raising=False)
    hosts = _vaulted_host(tmp_path, b"s3cret")
    asks = {"here": Ask(run={"echo": ["sh", "-c", "echo '{\"ok\": 1}'"]})}
    if prompted:
        typed = PromptVaultSecret(_bytes=b"s3cret", vault_id="default")
        monkeypatch.setattr(inventory.Sources, "secrets", lambda self, loader: [("default", typed)])
        sources = inventory.Sources((str(hosts),), ask_vault_pass=True)
    else:
        secret = tmp_path / "vault-password"
        secret.write_text("s3cret\n")
        sources = inventory.Sources((str(hosts),), vault_password_files=(str(secret),))
    found = ask_hosts(sources, asks)
    assert found["here"].problem == "", found["here"]
    assert found["here"].tool("echo").json() == {"ok": 1}
    without = ask_hosts(inventory.Sources((str(hosts),)), asks)
    assert without["here"].problem, "the host was reached without its vault secret"


def test_the_probe_reads_the_certificate_a_tls_listener_serves(tmp_path: Path) -> None:
    """A real TLS listener on loopback (a Spark UI's part): the probe reads the certificate it
    presents, as a browser would, and says why for a port where nothing listens."""
    import socket
    import ssl
    import threading
    from datetime import UTC, datetime

    from kafkaform.pki.authority import generate_ca
    from kafkaform.pki.files import certificates_pem, key_pem
    from kafkaform.status_collect import certificate

    served = generate_ca("probe-test", 30, datetime.now(UTC))
    (tmp_path / "cert.pem").write_bytes(certificates_pem(served.cert))
    (tmp_path / "key.pem").write_bytes(key_pem(served.key))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    listener = socket.create_server(("127.0.0.1", 0))
    closed = socket.create_server(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()

    def serve() -> None:
        connection, _ = listener.accept()
        try:
            with context.wrap_socket(connection, server_side=True):
                pass
        except (OSError, ssl.SSLError):
            pass  # the client leaves after the handshake

    threading.Thread(target=serve, daemon=True).start()
    url, nowhere = (f"https://127.0.0.1:{listener.getsockname()[1]}",
                    f"https://127.0.0.1:{closed_port}")
    argv = Ask(served=[url, nowhere]).argv()
    argv[0] = sys.executable
    found = answer("here", {"stdout": subprocess.run(argv, capture_output=True, text=True,
                                                     check=True).stdout, "rc": 0})
    listener.close()
    read = certificate("here", url, found.served[url]["text"])
    assert read.not_after == served.cert.not_valid_after_utc, read
    assert "refused" in found.served[nowhere]["error"].lower()
