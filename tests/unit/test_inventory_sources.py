"""One inventory loader for every command, read as ``ansible-playbook`` reads an inventory.

Each layout below is what operators keep: a directory, a file with ``group_vars/`` beside it
given relative, ``./`` or absolute, several ``-i``, INI with ``host_vars/``, a whole file and an
inline value encrypted with Ansible Vault, the secret given by every option and variable Ansible
takes. For each, the variables ``check``, ``verify`` and the pyinfra connector read must be
``ansible-inventory --list``'s, vault values decrypted; and a 5-character SCRAM password kept in
the vault must be refused by each command.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "inventory" / "lab"
BIN = Path(sys.executable).parent
PASSWORD = "kafkaform-vault-test"
SHORT = "short"  # below SE-06's 8 characters

#: Each command's variables of every host, printed as JSON by the command's own code path:
#: check and verify parse their options with their own parsers; pyinfra's connector reads the
#: inventory it is given, its vault secret from the environment.
READ_AS = """
import json, sys
from kafkaform import cli, inventory
command, argv = sys.argv[1], sys.argv[2:]
if command == "pyinfra":
    view, hosts = inventory.load_hosts(argv[0])
    found = {h.name: dict(h.variables) for h in hosts}
else:
    args = cli.build_parser(command).parse_args([command, *argv])
    view = inventory.load_every_host(inventory.Sources.from_args(args))
    found = {name: dict(variables) for name, variables in view.hostvars.items()}
print(json.dumps({"hostvars": found, "groups": dict(view.groups)}, default=str))
"""


def encrypt(text: str, vault_id: str = "default") -> str:
    from ansible.parsing.vault import VaultLib, VaultSecret

    secret = VaultSecret(PASSWORD.encode())
    return VaultLib([(vault_id, secret)]).encrypt(text, secret, vault_id).decode()


def decrypt(value: Any) -> Any:
    """ansible-inventory prints an inline vault value as ``{"__ansible_vault": text}``."""
    if isinstance(value, dict) and set(value) == {"__ansible_vault"}:
        from ansible.parsing.vault import VaultLib, VaultSecret

        return VaultLib([("any", VaultSecret(PASSWORD.encode()))]).decrypt(
            value["__ansible_vault"]).decode()
    if isinstance(value, dict):
        return {k: decrypt(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decrypt(v) for v in value]
    return value


@dataclass
class Layout:
    name: str
    cwd: Path
    options: list[str]  # -i and vault options, as ansible-playbook takes them
    env: dict[str, str] = field(default_factory=dict)
    pyinfra_source: str | None = None  # what `pyinfra @kafkaform/SOURCE` is given, if it can be

    def run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_VAULT")}
        env.pop("ANSIBLE_CONFIG", None)  # the repository's names inventory/lab by default
        return subprocess.run(argv, cwd=self.cwd, env={**env, **self.env}, capture_output=True,
                              text=True, check=False, timeout=120)


def lab_vars() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((LAB / "group_vars" / "all.yml").read_text())
    data["ansible_connection"] = "ssh"  # nothing here reaches a host
    for user in data["kafka_users"]:
        if user["name"] == "admin":
            user["password"] = SHORT
    return data


def write_vaulted_file(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(encrypt(yaml.safe_dump(data)))


def write_inline_vault(path: Path, data: dict[str, Any], vault_id: str) -> None:
    """``data`` as YAML with the admin's password an inline ``!vault`` value."""
    users = data.pop("kafka_users")
    text = yaml.safe_dump(data) + "kafka_users:\n"
    for user in users:
        if user["name"] == "admin":
            block = "\n".join(f"      {line}" for line in encrypt(SHORT, vault_id).splitlines())
            text += f"  - name: admin\n    superuser: true\n    password: !vault |\n{block}\n"
        else:
            text += f"  - {json.dumps(user)}\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def copy_lab(directory: Path) -> None:
    directory.mkdir(parents=True)
    shutil.copy(LAB / "hosts.yml", directory / "hosts.yml")
    for name in ("kafka_broker.yml", "zookeeper.yml"):
        (directory / "group_vars").mkdir(exist_ok=True)
        shutil.copy(LAB / "group_vars" / name, directory / "group_vars" / name)


@pytest.fixture(scope="module")
def layouts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Layout]:
    base = tmp_path_factory.mktemp("layouts")
    (base / "pw").write_text(PASSWORD + "\n")
    (base / "pw").chmod(0o600)
    found: dict[str, Layout] = {}

    vaulted = base / "vaulted"  # a directory, group_vars/all.yml encrypted whole
    copy_lab(vaulted)
    write_vaulted_file(vaulted / "group_vars" / "all.yml", lab_vars())
    found["directory, --vault-password-file"] = Layout(
        "dir", base, ["-i", "vaulted", "--vault-password-file", "pw"])
    found["directory, ANSIBLE_VAULT_PASSWORD_FILE"] = Layout(
        "dir-env", base, ["-i", str(vaulted)], {"ANSIBLE_VAULT_PASSWORD_FILE": str(base / "pw")},
        str(vaulted))
    found["file relative from its directory, --vault-id"] = Layout(
        "relative", vaulted, ["-i", "hosts.yml", "--vault-id", "../pw"])
    found["./file, ANSIBLE_VAULT_IDENTITY_LIST"] = Layout(
        "dot", vaulted, ["-i", "./hosts.yml"], {"ANSIBLE_VAULT_IDENTITY_LIST": f"{base}/pw"},
        "./hosts.yml")

    whole = base / "whole"  # the hosts file itself encrypted
    copy_lab(whole)
    (whole / "hosts.yml").write_text(encrypt((whole / "hosts.yml").read_text()))
    write_vaulted_file(whole / "group_vars" / "all.yml", lab_vars())
    found["encrypted hosts file, --vault-password-file"] = Layout(
        "whole", base, ["-i", "whole/hosts.yml", "--vault-password-file", "pw"])

    inline = base / "inline"  # a plain file beside an inline !vault value, labelled
    copy_lab(inline)
    write_inline_vault(inline / "group_vars" / "all.yml", lab_vars(), "prod")
    found["inline !vault, --vault-id LABEL@FILE"] = Layout(
        "inline", base, ["-i", str(inline / "hosts.yml"), "--vault-id", f"prod@{base}/pw"])
    found["inline !vault, ANSIBLE_VAULT_IDENTITY_LIST with a label"] = Layout(
        "inline-env", inline, ["-i", "."], {"ANSIBLE_VAULT_IDENTITY_LIST": f"prod@{base}/pw"},
        ".")
    found["inline !vault, --ask-vault-pass"] = Layout(
        "ask", base, ["-i", "inline", "--ask-vault-pass"])

    several = base / "several"  # two sources: YAML hosts, an INI file with host_vars/ beside it
    copy_lab(several / "yaml")
    hosts = yaml.safe_load((several / "yaml" / "hosts.yml").read_text())
    del hosts["all"]["children"]["spark_worker"]
    (several / "yaml" / "hosts.yml").write_text(yaml.safe_dump(hosts))
    write_vaulted_file(several / "yaml" / "group_vars" / "all.yml", lab_vars())
    (several / "ini").mkdir()
    (several / "ini" / "workers.ini").write_text("[spark_worker]\nkf-spark-worker1\n")
    write_vaulted_file(several / "ini" / "host_vars" / "kf-spark-worker1.yml",
                       {"spark_worker_cores": 1, "ansible_connection": "ssh"})
    found["several -i, INI with host_vars/"] = Layout(
        "several", several, ["-i", "yaml", "-i", "ini/workers.ini", "--vault-password-file",
                             "../pw"])

    plugin = base / "plugin"  # an inventory plugin's configuration beside a plain file
    copy_lab(plugin)
    hosts = yaml.safe_load((plugin / "hosts.yml").read_text())
    del hosts["all"]["children"]["spark_worker"]
    (plugin / "hosts.yml").write_text(yaml.safe_dump(hosts))
    write_vaulted_file(plugin / "group_vars" / "all.yml", lab_vars())
    (plugin / "workers.generator.yml").write_text(yaml.safe_dump({
        "plugin": "ansible.builtin.generator",
        "hosts": {"name": "kf-spark-worker{{ n }}", "parents": [{"name": "spark_worker"}]},
        "layers": {"n": ["1"]}}))
    found["inventory plugin beside a file, --vault-password-file"] = Layout(
        "plugin", base, ["-i", "plugin", "--vault-password-file", "pw"])
    return found


def listed(layout: Layout) -> dict[str, Any]:
    """``ansible-inventory --list``: each host's variables, vault values decrypted, and the
    hosts of each group (its children's included)."""
    result = layout.run(str(BIN / "ansible-inventory"), "--list", *layout.options)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)

    def members(group: str) -> list[str]:
        entry = data.get(group, {})
        hosts = list(entry.get("hosts", []))
        for child in entry.get("children", []):
            hosts += [h for h in members(child) if h not in hosts]
        return hosts

    return {"hostvars": {host: decrypt(variables)
                         for host, variables in data["_meta"]["hostvars"].items()},
            "groups": {group: members(group) for group in data if group != "_meta"}}


def read_by(layout: Layout, command: str) -> dict[str, Any]:
    argv = [layout.pyinfra_source or ""] if command == "pyinfra" else layout.options
    result = subprocess.run([sys.executable, "-c", READ_AS, command, *argv], cwd=layout.cwd,
                            env={**{k: v for k, v in os.environ.items()
                                    if not k.startswith("ANSIBLE_VAULT")
                                    and k != "ANSIBLE_CONFIG"}, **layout.env},
                            input=PASSWORD + "\n", capture_output=True, text=True, check=False,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    found: dict[str, Any] = json.loads(result.stdout)
    return found


def internal() -> frozenset[str]:
    from ansible import constants as C

    return frozenset(C.INTERNAL_STATIC_VARS) | {"ansible_facts", "ansible_config_file"}


LAYOUT_NAMES = [
    "directory, --vault-password-file",
    "directory, ANSIBLE_VAULT_PASSWORD_FILE",
    "file relative from its directory, --vault-id",
    "./file, ANSIBLE_VAULT_IDENTITY_LIST",
    "encrypted hosts file, --vault-password-file",
    "inline !vault, --vault-id LABEL@FILE",
    "inline !vault, ANSIBLE_VAULT_IDENTITY_LIST with a label",
    "inline !vault, --ask-vault-pass",
    "several -i, INI with host_vars/",
    "inventory plugin beside a file, --vault-password-file",
]


@pytest.mark.parametrize("name", LAYOUT_NAMES)
def test_every_command_reads_what_ansible_inventory_lists(layouts: dict[str, Layout],
                                                          name: str) -> None:
    layout = layouts[name]
    if name.endswith("--ask-vault-pass"):  # ansible-inventory prompts too: give it the answer
        expected = listed(Layout(layout.name, layout.cwd, ["-i", "inline", "--vault-id",
                                                            f"prod@{layout.cwd}/pw"]))
    else:
        expected = listed(layout)
    commands = ["check", "verify"] + (["pyinfra"] if layout.pyinfra_source else [])
    for command in commands:
        read = read_by(layout, command)
        found = read["hostvars"]
        assert sorted(found) == sorted(expected["hostvars"]), command
        for host, variables in expected["hostvars"].items():
            mine = {k: v for k, v in found[host].items() if k not in internal()}
            assert mine == variables, (command, host)
        for group, hosts in read["groups"].items():
            assert sorted(hosts) == sorted(expected["groups"].get(group, [])), (command, group)
        assert read["groups"]["spark_worker"] == ["kf-spark-worker1"], command
        admin = next(u for u in found["kf-kafka1"]["kafka_users"] if u["name"] == "admin")
        assert admin["password"] == SHORT, command  # decrypted, not the ciphertext


# verify refuses a secret typed at a prompt before anything else (the test below).
@pytest.mark.parametrize(("name", "command"), [
    *((name, command) for name in ["directory, --vault-password-file",
                                   "file relative from its directory, --vault-id",
                                   "several -i, INI with host_vars/"]
      for command in ["check", "verify"]),
    ("inline !vault, --ask-vault-pass", "check")])
def test_each_command_refuses_the_short_password_in_the_vault(
        layouts: dict[str, Layout], name: str, command: str) -> None:
    layout = layouts[name]
    result = subprocess.run([str(BIN / "kafkaform"), command, *layout.options],
                            cwd=layout.cwd, input=PASSWORD + "\n", capture_output=True,
                            text=True, check=False, timeout=120,
                            env={k: v for k, v in os.environ.items()
                                 if not k.startswith("ANSIBLE_VAULT") and k != "ANSIBLE_CONFIG"})
    assert result.returncode == 1, result.stderr
    assert "[SE-06] kafka_users: admin needs a password of at least 8 characters" in result.stderr


@pytest.mark.parametrize("prompted", [["--ask-vault-pass"], ["--vault-id", "prod@prompt"]])
def test_verify_refuses_a_secret_typed_at_a_prompt_before_asking_it(
        layouts: dict[str, Layout], prompted: list[str]) -> None:
    """testinfra runs Ansible once per host and check: a secret typed once cannot reach them."""
    layout = layouts["inline !vault, --ask-vault-pass"]
    result = layout.run(str(BIN / "kafkaform"), "verify", *layout.options[:2], *prompted)
    assert result.returncode == 2, result.stderr
    assert "Vault password" not in result.stderr + result.stdout  # refused before the prompt
    last = result.stderr.strip().splitlines()[-1]
    assert "typed at a prompt" in last and "--vault-id LABEL@FILE" in last, last


@pytest.mark.parametrize(("name", "names"), [
    ("directory, --vault-password-file", "vaulted/group_vars/all.yml is encrypted"),
    ("encrypted hosts file, --vault-password-file", "whole/hosts.yml is encrypted"),
    ("inline !vault, --vault-id LABEL@FILE", "kf-kafka1: kafka_users ("),
])
@pytest.mark.parametrize("command", ["check", "verify"])
def test_without_the_secret_one_line_names_the_file_and_the_option(
        layouts: dict[str, Layout], name: str, names: str, command: str) -> None:
    layout = layouts[name]
    given = layout.options[:2]  # -i SOURCE, no vault option
    result = layout.run(str(BIN / "kafkaform"), command, *given)
    assert result.returncode == 2, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert names in last and "Ansible Vault" in last and "--vault-password-file" in last, last


def test_pyinfra_reads_the_vault_from_the_environment_and_refuses(
        layouts: dict[str, Layout]) -> None:
    layout = layouts["directory, ANSIBLE_VAULT_PASSWORD_FILE"]
    result = layout.run(str(BIN / "pyinfra"), "-y", f"@kafkaform/{layout.pyinfra_source}",
                        "exec", "--", "true")
    assert result.returncode != 0
    assert "[SE-06] kafka_users: admin needs a password of at least 8 characters" in (
        result.stdout + result.stderr)
    without = Layout(layout.name, layout.cwd, layout.options, {})
    result = without.run(str(BIN / "pyinfra"), "-y", f"@kafkaform/{layout.pyinfra_source}",
                         "exec", "--", "true")
    assert result.returncode != 0
    assert "is encrypted with Ansible Vault" in result.stdout + result.stderr
