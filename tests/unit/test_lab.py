"""Pure logic of `kafkaform lab`: inventory -> hosts -> container specs, device mapping, state."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
import yaml

from kafkaform import inventory, lab, lab_hosts, lab_image, lab_state, model
from kafkaform.catalog import CATALOG
from kafkaform.podman import CommandError

REPO = Path(__file__).resolve().parents[2]
BROKER_DISKS = [
    {"device": "/dev/kfdata0", "mount": "/a"},
    {"device": "/dev/kfdata1", "mount": "/b"},
]


def test_parse_hosts_takes_groups_rack_disks_and_the_spark_shared_dir() -> None:
    hosts = lab_hosts.parse_hosts(
        {"kf-kafka1": {"rack": "lab-a", "os_tuning_data_disks": BROKER_DISKS}, "kf-s": {},
         "kf-w": {"spark_node_shared_dir": "/nfs/spark"}},
        {"kf-kafka1": ["all", "kafka_broker"], "kf-s": ["ungrouped", "spark_master"],
         "kf-w": ["spark_worker"]},
    )
    assert hosts == [
        lab_hosts.LabHost("kf-kafka1", ("kafka_broker",), "lab-a",
                          ("/dev/kfdata0", "/dev/kfdata1")),
        lab_hosts.LabHost("kf-s", ("spark_master",), None, (), "/srv/kafkaform/shared"),
        lab_hosts.LabHost("kf-w", ("spark_worker",), None, (), "/nfs/spark"),
    ]


def test_only_spark_nodes_mount_the_shared_volume() -> None:
    spark = lab_hosts.LabHost("kf-s", ("spark_master",), None, (), "/srv/kafkaform/shared")
    broker = lab_hosts.LabHost("kf-kafka1", ("kafka_broker",), "lab-a", ())
    spark_args = lab_hosts.host_run_args(spark, {}, "kflab", "img")
    assert "kflab-shared:/srv/kafkaform/shared" in spark_args
    assert not any("shared" in a for a in lab_hosts.host_run_args(broker, {}, "kflab", "img"))


@pytest.mark.parametrize(
    "disks",
    [
        [{"device": "kfdata0"}],  # not under /dev
        [{"mount": "/x"}],  # no device
        ["/dev/kfdata0"],  # not a mapping
        [{"device": "/dev/kfdata0"}, {"device": "/dev/kfdata0"}],  # twice
    ],
)
def test_parse_hosts_rejects_bad_disks(disks: list[object]) -> None:
    with pytest.raises(CommandError):
        lab_hosts.parse_hosts({"h": {"os_tuning_data_disks": disks}}, {})


def test_parse_hosts_rejects_names_podman_refuses() -> None:
    with pytest.raises(CommandError, match="container name"):
        lab_hosts.parse_hosts({"bad/name": {}}, {})


def test_the_lab_inventory_maps_to_the_expected_hosts() -> None:
    hosts = {h.name: h for h in lab_hosts.load_inventory(REPO / "inventory" / "lab")}
    assert set(hosts) >= {"kf-zk1", "kf-zk2", "kf-zk3", "kf-kafka1", "kf-kafka2", "kf-kafka3"}
    assert hosts["kf-kafka1"].disks == ("/dev/kfdata0", "/dev/kfdata1")
    assert hosts["kf-zk2"].disks == ("/dev/kfdata0",)
    assert hosts["kf-zk2"].groups == ("zookeeper",)
    assert hosts["kf-kafka3"].rack == "lab-b"


def test_the_kraft_lab_runs_the_catalogs_newest_kafka_on_the_lab_platform() -> None:
    """inventory/lab-kraft: the same platform as inventory/lab (its settings are that file),
    3 controllers in 3 racks instead of the ensemble, on the release new KRaft clusters run."""
    kraft = REPO / "inventory" / "lab-kraft"
    hosts = {h.name: h for h in lab_hosts.load_inventory(kraft)}
    zookeeper_lab = {h.name for h in lab_hosts.load_inventory(REPO / "inventory" / "lab")}
    assert set(hosts) == {n for n in zookeeper_lab if not n.startswith("kf-zk")} | {
        "kf-ctl1", "kf-ctl2", "kf-ctl3"}
    assert {hosts[f"kf-ctl{i}"].rack for i in (1, 2, 3)} == {"lab-a", "lab-b", "lab-c"}
    assert (kraft / "group_vars" / "all" / "common.yml").resolve() == \
        REPO / "inventory" / "lab" / "group_vars" / "all.yml"
    settings = yaml.safe_load((kraft / "group_vars" / "all" / "kraft.yml").read_text())
    assert "kafka_broker_version" not in settings  # a new KRaft cluster's default
    view, _hosts = inventory.load_hosts(str(kraft))
    assert model.kafka_release(view) == CATALOG.kafka_upgrade.version


def test_disk_files_are_per_host_and_device(tmp_path: Path) -> None:
    assert lab_hosts.disk_file(tmp_path, "kf-zk1", "/dev/kfdata0") == (
        tmp_path / "lab" / "disks" / "kf-zk1-kfdata0.img"
    )


def test_each_loop_device_goes_in_under_its_stable_name_and_its_own() -> None:
    args = lab_hosts.device_args({"/dev/kfdata1": "/dev/loop7", "/dev/kfdata0": "/dev/loop3"})
    assert args == [
        "--device", "/dev/loop3:/dev/kfdata0:rwm", "--device", "/dev/loop3:/dev/loop3:rwm",
        "--device", "/dev/loop7:/dev/kfdata1:rwm", "--device", "/dev/loop7:/dev/loop7:rwm",
    ]  # fmt: skip


def test_host_containers_run_systemd_unprivileged_with_sys_admin_only() -> None:
    host = lab_hosts.LabHost("kf-zk1", ("zookeeper",), "lab-a", ("/dev/kfdata0",))
    args = lab_hosts.host_run_args(host, {"/dev/kfdata0": "/dev/loop0"}, "net", "img")
    assert args[:4] == ["--name", "kf-zk1", "--hostname", "kf-zk1"]
    assert "--systemd=always" in args
    assert args[args.index("--network") + 1] == "net"
    assert args[args.index("--cap-add") + 1] == "SYS_ADMIN"
    assert args.count("--cap-add") == 1
    assert not any("privileged" in a for a in args)
    assert args[-2:] == ["img", "/sbin/init"]


def test_the_mirror_serves_its_directory_read_only() -> None:
    args = lab_hosts.mirror_run_args("kf-mirror", "net", "img", Path("/c/mirror"))
    assert "/c/mirror:/srv/mirror:ro" in args
    assert args[-6:] == ["python3", "-m", "http.server", "8000", "--directory", "/srv/mirror"]


def test_spec_hash_changes_with_definition_and_image() -> None:
    base = lab_hosts.spec_hash(["--name", "a"], "img1")
    assert base == lab_hosts.spec_hash(["--name", "a"], "img1")
    assert base != lab_hosts.spec_hash(["--name", "a", "--device", "x"], "img1")
    assert base != lab_hosts.spec_hash(["--name", "a"], "img2")


def test_state_round_trips_through_its_file(tmp_path: Path) -> None:
    state = lab_state.LabState(
        network="n",
        created_network=True,
        containers=["kf-zk1", "kf-mirror"],
        loops={"/dev/loop3": "/c/lab/disks/kf-zk1-kfdata0.img"},
        files=["/c/lab/disks/kf-zk1-kfdata0.img"],
        dirs=["/c/lab/disks"],
        host_sysctls={"vm.swappiness": "60"},
    )
    lab_state.save_state(tmp_path, state)
    assert lab_state.load_state(tmp_path, "other") == state
    assert lab_state.load_state(tmp_path / "empty", "n2") == lab_state.LabState(network="n2")


def test_a_state_file_of_another_format_is_refused() -> None:
    with pytest.raises(CommandError, match="format"):
        lab_state.LabState.from_json('{"version": 99}')


def test_remember_adds_once() -> None:
    state = lab_state.LabState()
    state.remember(state.containers, "a")
    state.remember(state.containers, "a")
    assert state.containers == ["a"]


def test_sysctl_values_are_read_from_proc_and_drift_is_reported(tmp_path: Path) -> None:
    (tmp_path / "vm").mkdir()
    (tmp_path / "vm" / "swappiness").write_text("60\n")
    (tmp_path / "vm" / "dirty_ratio").write_text("20\n")
    current = lab_state.read_sysctls(["vm.swappiness", "vm.dirty_ratio", "vm.absent"],
                                     proc=tmp_path)
    assert current == {"vm.swappiness": "60", "vm.dirty_ratio": "20"}
    assert lab_state.sysctl_drift(current, current) == []
    drift = lab_state.sysctl_drift(current, {**current, "vm.swappiness": "1"})
    assert drift == ["sysctl -w vm.swappiness='60'  # now '1'"]


def test_status_table_aligns_columns() -> None:
    table = lab.format_table(["A", "BB"], [["xxx", "y"]])
    assert table.splitlines() == ["A    BB", "xxx  y"]


def test_container_address_reads_the_lab_network() -> None:
    info = {"NetworkSettings": {"Networks": {"net": {"IPAddress": "10.89.0.2"}}}}
    assert lab.container_address(info, "net") == "10.89.0.2"
    assert lab.container_address(info, "other") == "-"


def test_image_recipe_hash_covers_packages_and_certificates(tmp_path: Path) -> None:
    cert = tmp_path / "a.crt"
    cert.write_text("one")
    first = lab_image.recipe_hash([cert])
    assert first == lab_image.recipe_hash([cert])
    cert.write_text("two")
    assert first != lab_image.recipe_hash([cert])
    assert lab_image.recipe_hash([]) != first


def test_image_recipe_has_what_ansible_and_the_roles_need() -> None:
    for package in ("systemd", "systemd-sysv", "python3", "python3-apt", "xfsprogs", "sudo"):
        assert package in lab_image.PACKAGES
    assert "touch -d @0 /var/lib/apt/lists" in lab_image.SETUP_SCRIPT
    assert ": > /etc/machine-id" in lab_image.SETUP_SCRIPT


def test_cli_registers_the_lab_actions() -> None:
    parser = argparse.ArgumentParser()
    lab.add_commands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["lab", "up", "--network", "n", "--mirror", ""])
    assert (args.network, args.mirror, args.timeout) == ("n", "", 120.0)
    assert callable(args.handler)
    assert parser.parse_args(["lab", "image", "--force"]).force
    assert parser.parse_args(["lab", "down"]).network == "kafkaform-lab"
