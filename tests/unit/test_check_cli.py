"""`kafkaform check` and playbooks/preflight.yml: the same rules, from a shell and from Ansible."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "inventory" / "lab"
BIN = Path(sys.executable).parent


def kafkaform(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "kafkaform"), *args], capture_output=True, text=True,
                          check=False, cwd=ROOT)


def bad_inventory(tmp_path: Path) -> Path:
    """The lab inventory with a rack holding two ZooKeeper members and a duplicate broker id,
    and hosts that cannot be reached: a run that touched them would fail differently."""
    inventory = yaml.safe_load((LAB / "hosts.yml").read_text())
    children = inventory["all"]["children"]
    children["zookeeper"]["hosts"]["kf-zk3"]["rack"] = "lab-a"
    children["kafka_broker"]["hosts"]["kf-kafka3"]["kafka_broker_id"] = 2
    directory = tmp_path / "inventory"
    (directory / "group_vars").mkdir(parents=True)
    (directory / "hosts.yml").write_text(yaml.safe_dump(inventory))
    (directory / "group_vars" / "all.yml").write_text(yaml.safe_dump({
        "ansible_connection": "ssh", "ansible_host": "unreachable.invalid",
        "kafka_cluster_name": "bad", "kafka_topics": [{"name": "kf.events", "partitions": 6,
                                                       "replication_factor": 3}]}))
    return directory


def test_lab_inventory_is_valid() -> None:
    result = kafkaform("check", "-i", str(LAB))
    assert result.returncode == 0, result.stderr
    assert "8 hosts, no errors" in result.stderr


def test_kraft_lab_inventory_is_valid() -> None:
    result = kafkaform("check", "-i", str(ROOT / "inventory" / "lab-kraft"))
    assert result.returncode == 0, result.stderr
    # As for the lab: the controllers take the ensemble's place.
    assert "8 hosts, no errors" in result.stderr


def test_bad_inventory_exits_1_naming_hosts_and_rules(tmp_path: Path) -> None:
    result = kafkaform("check", "-i", str(bad_inventory(tmp_path)))
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert any("kf-zk1, kf-zk3 [ZK-07] rack lab-a holds 2 of 3" in line for line in lines)
    assert any("kf-kafka2, kf-kafka3 [KB-02] kafka_broker_id 2 is used by 2 hosts" in line
               for line in lines)


def test_json_format_for_ci(tmp_path: Path) -> None:
    result = kafkaform("check", "-i", str(bad_inventory(tmp_path)), "--format", "json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["valid"] is False
    assert {f["rule"] for f in report["findings"]} == {"ZK-07", "KB-02"}
    assert all(f["fix"] and f["hosts"] for f in report["findings"])


def test_a_controller_group_is_read_and_refused(tmp_path: Path) -> None:
    directory = bad_inventory(tmp_path)
    inventory = yaml.safe_load((directory / "hosts.yml").read_text())
    inventory["all"]["children"]["kafka_controller"] = {"hosts": {
        f"kf-ctl{i}": {"kafka_node_id": 3000 + i, "rack": f"lab-{rack}"}
        for i, rack in enumerate("aab", start=1)}}
    (directory / "hosts.yml").write_text(yaml.safe_dump(inventory))
    result = kafkaform("check", "-i", str(directory), "--format", "json")
    assert result.returncode == 1
    found = {(f["rule"], tuple(f["hosts"])) for f in json.loads(result.stdout)["findings"]}
    assert {("KR-03", ("kf-ctl1", "kf-ctl2")),
            ("KR-05", ("kf-ctl1", "kf-ctl2", "kf-ctl3"))} <= found


def test_missing_inventory_is_a_usage_error(tmp_path: Path) -> None:
    result = kafkaform("check", "-i", str(tmp_path / "nope"))
    assert result.returncode == 2
    assert "does not exist" in result.stderr


def test_inventory_values_are_templated(tmp_path: Path) -> None:
    directory = bad_inventory(tmp_path)
    hosts = yaml.safe_load((directory / "hosts.yml").read_text())
    children = hosts["all"]["children"]
    children["zookeeper"]["hosts"]["kf-zk3"]["rack"] = "lab-c"
    children["kafka_broker"]["hosts"]["kf-kafka3"]["kafka_broker_id"] = "{{ 1 + 2 }}"
    (directory / "hosts.yml").write_text(yaml.safe_dump(hosts))
    result = kafkaform("check", "-i", str(directory))
    assert result.returncode == 0, result.stderr


def test_a_value_that_cannot_be_templated_names_host_and_variable(tmp_path: Path) -> None:
    directory = bad_inventory(tmp_path)
    hosts = yaml.safe_load((directory / "hosts.yml").read_text())
    broker = hosts["all"]["children"]["kafka_broker"]["hosts"]["kf-kafka3"]
    broker["kafka_broker_heap_mb"] = "{{ nothing_defines_this + 1 }}"
    (directory / "hosts.yml").write_text(yaml.safe_dump(hosts))
    result = kafkaform("check", "-i", str(directory))
    assert result.returncode == 2, result.stderr
    assert "kf-kafka3: kafka_broker_heap_mb cannot be templated" in result.stderr
    assert "nothing_defines_this" in result.stderr and "Fix:" in result.stderr


def test_an_inventory_plugin_configuration_is_read_beside_plain_files(tmp_path: Path) -> None:
    """The check tries the yaml plugin before auto; a plugin configuration file (here Ansible's
    generator) must still reach its plugin, and its hosts join the plain file's groups."""
    directory = bad_inventory(tmp_path)
    hosts = yaml.safe_load((directory / "hosts.yml").read_text())
    children = hosts["all"]["children"]
    children["zookeeper"]["hosts"]["kf-zk3"]["rack"] = "lab-c"
    del children["kafka_broker"]["hosts"]["kf-kafka3"]
    (directory / "hosts.yml").write_text(yaml.safe_dump(hosts))
    (directory / "more.generator.yml").write_text(yaml.safe_dump({
        "plugin": "ansible.builtin.generator",
        "hosts": {"name": "kf-kafka{{ n }}", "parents": [{"name": "kafka_broker"}]},
        "layers": {"n": ["3", "4"]}}))
    result = kafkaform("check", "-i", str(directory))
    # The generated brokers have no rack: found only if the generator ran.
    assert result.returncode == 1
    assert "kf-kafka3, kf-kafka4 [RA-01]" in result.stderr, result.stderr


#: Run in its own interpreter: parsing initialises Ansible's collection loader, process-wide.
COMPARE_WITH_VARIABLE_MANAGER = """
import json, sys
from ansible.vars.manager import VariableManager
from kafkaform import inventory
loader, manager, variables = inventory._parse(sys.argv[1])
manager_vars = VariableManager(loader=loader, inventory=manager)
hosts = manager.get_hosts()
print(json.dumps({
    "hosts": len(hosts),
    "differ": [h.name for h in hosts
               if variables(h) != manager_vars.get_vars(host=h, include_hostvars=False)],
    "levels": {h.name: variables(h).get("kafkaform_level") for h in hosts}}))
"""


def test_each_hosts_variables_are_those_of_ansibles_variable_manager(tmp_path: Path) -> None:
    """The check computes a host's group part once per set of groups; it must give what
    VariableManager.get_vars gives every host, whatever level sets a value: all, a parent and a
    child group, a host, in an INI and a YAML source, group_vars/ and host_vars/ files."""
    directory = bad_inventory(tmp_path)
    (directory / "racks.ini").write_text(
        "[rack_a]\nkf-kafka1\nkf-kafka2 kafkaform_level=ini_host\n\n[rack_a:vars]\n"
        "kafkaform_level=ini_group\nkafka_broker_heap_mb=1024\n\n[racks:children]\nrack_a\n"
        "\n[racks:vars]\nkafkaform_level=ini_parent\nkafkaform_parent_only=1\n")
    for name, values in {"group_vars/racks.yml": {"kafkaform_level": "group_vars_parent"},
                         "group_vars/rack_a.yml": {"kafkaform_level": "group_vars_child",
                                                   "kafkaform_nested": {"a": 1}},
                         "group_vars/kafka_broker.yml": {"kafkaform_nested": {"b": 2}},
                         "host_vars/kf-kafka1.yml": {"kafkaform_level": "host_vars"}}.items():
        (directory / name).parent.mkdir(exist_ok=True)
        (directory / name).write_text(yaml.safe_dump(values))
    ran = subprocess.run([sys.executable, "-c", COMPARE_WITH_VARIABLE_MANAGER, str(directory)],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    found = json.loads(ran.stdout)
    assert (found["hosts"], found["differ"]) == (9, [])
    levels = found["levels"]
    assert (levels["kf-kafka1"], levels["kf-kafka2"], levels["kf-kafka3"]) == (
        "host_vars", "ini_host", None)


def ansible_playbook(playbook: str, inventory: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=f"{BIN}:{os.environ['PATH']}")
    return subprocess.run([str(BIN / "ansible-playbook"), "-i", str(inventory),
                           str(ROOT / "playbooks" / playbook)],
                          capture_output=True, text=True, check=False, cwd=ROOT, env=env)


#: Every playbook a user runs; each imports the preflight first.
PLAYBOOKS = sorted(p.name for p in (ROOT / "playbooks").glob("*.yml"))


def test_every_playbook_is_covered() -> None:
    assert {"preflight.yml", "site.yml", "zookeeper.yml", "kafka_broker.yml"} <= set(PLAYBOOKS)


@pytest.mark.parametrize("playbook", PLAYBOOKS)
def test_playbooks_stop_on_a_bad_inventory_before_touching_a_host(
        tmp_path: Path, playbook: str) -> None:
    result = ansible_playbook(playbook, bad_inventory(tmp_path))
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "[ZK-07] rack lab-a holds 2 of 3" in output
    assert "[KB-02] kafka_broker_id 2 is used by 2 hosts" in output
    assert "UNREACHABLE" not in output
    assert output.count("PLAY [") == 1, "no play after the preflight may run"


def test_preflight_passes_the_lab_inventory_without_contacting_it() -> None:
    # The lab's containers need not exist: the preflight reads the inventory only.
    result = ansible_playbook("preflight.yml", LAB)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "unreachable=0" in result.stdout and "failed=0" in result.stdout


# Exit codes: 2 for input kafkaform cannot use, one line naming the path and the fix, no traceback.
@pytest.mark.parametrize("command", ["check", "verify"])
def test_a_cloud_spec_given_as_an_inventory_is_an_input_error(command: str) -> None:
    spec = ROOT / "inventory" / "aws" / "cluster.yml"
    result = kafkaform(command, "-i", str(spec))
    assert result.returncode == 2, result.stderr
    assert "is a kafkaform cloud spec, not an inventory" in result.stderr
    assert "kafkaform cloud inventory" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("command", ["check", "verify"])
def test_a_binary_file_is_not_an_inventory(command: str, tmp_path: Path) -> None:
    blob = tmp_path / "inventory.bin"
    blob.write_bytes(bytes(range(256)) * 4)
    result = kafkaform(command, "-i", str(blob))
    assert result.returncode == 2, result.stderr
    assert "is a binary file, not an Ansible inventory" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_file_no_inventory_plugin_parses_is_an_input_error(tmp_path: Path) -> None:
    broken = tmp_path / "hosts.yml"
    broken.write_text("all:\n  children: [unclosed\n")
    result = kafkaform("check", "-i", str(broken))
    assert result.returncode == 2, result.stderr
    assert "is not an Ansible inventory" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_inventory_without_kafkaform_groups_is_an_input_error(tmp_path: Path) -> None:
    other = tmp_path / "hosts.yml"
    other.write_text("all:\n  children:\n    web:\n      hosts:\n        www1:\n")
    result = kafkaform("check", "-i", str(other))
    assert result.returncode == 2, result.stderr
    assert "has no host in any of the kafkaform groups" in result.stderr


def test_verify_refuses_a_limit_that_matches_no_host() -> None:
    result = kafkaform("verify", "-i", str(LAB), "--limit", "no-such-host")
    assert result.returncode == 2, result.stderr
    assert "matches --limit 'no-such-host'" in result.stderr


def test_verify_refuses_an_inventory_that_breaks_a_rule_before_any_host(tmp_path: Path) -> None:
    result = kafkaform("verify", "-i", str(bad_inventory(tmp_path)))
    assert result.returncode == 1, result.stderr
    assert "[ZK-07]" in result.stderr
    assert "fix it first" in result.stderr


def test_verify_names_an_unknown_check_as_a_usage_error() -> None:
    result = kafkaform("verify", "-i", str(LAB), "--checks", "kafka")
    assert result.returncode == 2
    assert "unknown check(s) kafka" in result.stderr


def test_an_unexpected_error_is_one_line_with_exit_70() -> None:
    # A bug inside kafkaform (here: the inventory reader raising) is neither input nor a rule.
    script = ("import sys; from kafkaform import cli, inventory\n"
              "def broken(*args, **kwargs): raise RuntimeError('boom')\n"
              "inventory.load = broken\n"
              f"sys.exit(cli.main(['check', '-i', {str(LAB)!r}]))\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=False)
    assert result.returncode == 70, result.stderr
    assert "unexpected RuntimeError: boom" in result.stderr
    assert "Traceback" not in result.stderr
