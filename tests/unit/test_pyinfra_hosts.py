"""The @kafkaform pyinfra connector's inventory bridge: hosts, groups, data, connections and the
preflight (kafkaform.deploys.hosts)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kafkaform import checks, inventory
from kafkaform.deploys import hosts
from tests.unit.test_check_cli import bad_inventory

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "inventory" / "lab"
BIN = Path(sys.executable).parent


def test_lab_hosts_keep_their_groups_variables_and_podman_connection() -> None:
    found = {h.name: h for h in hosts.pyinfra_hosts(LAB)}
    assert list(found) == [h.name for h in inventory.load_hosts(LAB)[1]]
    zk1 = found["kf-zk1"]
    assert zk1.groups == ("zookeeper",)
    assert zk1.data["zookeeper_id"] == 1 and zk1.data["zookeeper_heap_mb"] == 256
    assert zk1.data["kafka_cluster_name"] == "lab"  # group_vars/all.yml
    assert zk1.data[hosts.CONNECTION] == hosts.PODMAN
    assert zk1.data["docker_identifier"] == "kf-zk1"
    assert not hosts.MAGIC_VARIABLES & set(zk1.data)
    assert type(zk1.data["kafka_topics"][0]["name"]) is str  # Ansible's tagged types made plain


@pytest.mark.parametrize(("variables", "expected"), [
    ({}, {hosts.CONNECTION: hosts.SSH, "ssh_hostname": "h1"}),
    ({"ansible_host": "10.0.0.5", "ansible_user": "admin", "ansible_port": "2222",
      "ansible_ssh_private_key_file": "~/.ssh/k", "ansible_become": "yes"},
     {hosts.CONNECTION: hosts.SSH, "ssh_hostname": "10.0.0.5", "ssh_user": "admin",
      "ssh_port": 2222, "ssh_key": "~/.ssh/k", "_sudo": True}),
    ({"ansible_connection": "containers.podman.podman", "ansible_host": "ctr"},
     {hosts.CONNECTION: hosts.PODMAN, "docker_identifier": "ctr"}),
    ({"ansible_connection": "local"}, {hosts.CONNECTION: hosts.LOCAL}),
])
def test_ansible_connection_variables_map_to_pyinfra_connector_data(
        variables: dict[str, object], expected: dict[str, object]) -> None:
    assert hosts.connection_data("h1", variables) == expected


def test_a_connection_pyinfra_cannot_make_is_refused() -> None:
    with pytest.raises(hosts.InventoryRefused, match="h1: ansible_connection winrm"):
        hosts.connection_data("h1", {"ansible_connection": "winrm"})


def test_a_bad_inventory_yields_no_host_and_prints_what_kafkaform_check_prints(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = bad_inventory(tmp_path)
    with pytest.raises(hosts.InventoryRefused, match="no host was touched"):
        list(hosts.pyinfra_hosts(source))
    expected = [f.text() for f in checks.check(inventory.load(source))]
    assert expected and capsys.readouterr().err.splitlines() == expected


def test_pyinfra_refuses_a_bad_inventory_before_connecting(tmp_path: Path) -> None:
    source = bad_inventory(tmp_path)
    run = subprocess.run([str(BIN / "pyinfra"), "-y", f"@kafkaform/{source}",
                          "exec", "--", "true"],
                         capture_output=True, text=True, check=False, cwd=ROOT)
    check = subprocess.run([str(BIN / "kafkaform"), "check", "-i", str(source)],
                           capture_output=True, text=True, check=False, cwd=ROOT)
    assert run.returncode != 0
    assert "Connecting to hosts" not in run.stderr + run.stdout
    for line in check.stderr.splitlines():
        assert line in run.stderr


def test_the_site_deploy_stops_on_a_missing_data_disk_before_any_operation(
        tmp_path: Path) -> None:
    """As the role's disks_check.yml: a declared device the host lacks stops the run in the
    prepare stage, naming host and device (this machine, reached locally with --dry, only
    answers the read-only probes)."""
    source = tmp_path / "inventory"
    source.mkdir()
    (source / "hosts.yml").write_text(yaml.safe_dump({"all": {
        "vars": {"ansible_connection": "local", "kafkaform_allow_single_zookeeper": True},
        "children": {"zookeeper": {"hosts": {"zk1": {
            "zookeeper_id": 1,
            "os_tuning_data_disks": [{"device": "/dev/kafkaform-no-such-disk",
                                      "mount": "/var/lib/zookeeper/txnlog",
                                      "purpose": "zookeeper_txn_log"}]}}}}}}))
    run = subprocess.run([str(BIN / "pyinfra"), "--dry", f"@kafkaform/{source}",
                          "kafkaform.deploys.site.site"],
                         capture_output=True, text=True, check=False, cwd=ROOT)
    assert run.returncode != 0
    said = run.stderr + run.stdout
    assert "zk1" in said and "/dev/kafkaform-no-such-disk" in said, said
    assert "Starting operation" not in said


def test_variables_only_another_tool_can_template_are_left_out(tmp_path: Path) -> None:
    """As in molecule's inventories: a variable that reads that tool's environment."""
    source = tmp_path / "inventory"
    shutil.copytree(LAB, source)
    with (source / "group_vars" / "all.yml").open("a", encoding="utf-8") as handle:
        handle.write("molecule_yml: \"{{ lookup('file', 'no-such-file.yml') | from_yaml }}\"\n")
    found = {h.name: h for h in hosts.pyinfra_hosts(source)}
    assert "molecule_yml" not in found["kf-zk1"].data
    assert found["kf-zk1"].data["kafka_cluster_name"] == "lab"


def test_a_kafkaform_input_that_cannot_be_templated_stops_the_run(tmp_path: Path) -> None:
    source = tmp_path / "inventory"
    shutil.copytree(LAB, source)
    with (source / "group_vars" / "all.yml").open("a", encoding="utf-8") as handle:
        handle.write("kafkaform_tls_ca_cert: \"{{ lookup('file', 'no-such-ca.pem') }}\"\n")
    with pytest.raises(hosts.InventoryRefused, match=r"no-such-ca\.pem"):
        list(hosts.pyinfra_hosts(source))
