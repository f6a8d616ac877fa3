"""`kafkaform cloud` against moto in server mode: a real HTTP endpoint, real boto3 and botocore.

One moto server on 127.0.0.1 (random port) for the module; each test provisions a cluster of its
own name in a VPC the fixture creates, since kafkaform takes the VPC and subnets from the spec.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml

from kafkaform import model
from kafkaform.cli import main
from kafkaform.cloud import inventory, provision
from kafkaform.cloud.placement import place
from kafkaform.cloud.spec import Spec, parse

moto_server = pytest.importorskip("moto.server")
# A server on loopback, no container: tests/run-all runs these in the lane with room for them.
pytestmark = pytest.mark.no_hosts

REGION = "eu-west-1"
ZONES = ("eu-west-1a", "eu-west-1b", "eu-west-1c")
SECRET = "kafkaform-test-secret-never-printed"
KAFKAFORM = Path(sys.executable).parent / "kafkaform"


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    saved = {k: os.environ.get(k) for k in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID",
                                            "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE")}
    # Fake credentials and the endpoint through the environment only: boto3 reads
    # AWS_ENDPOINT_URL itself, which is what this fixture verifies.
    os.environ.update(AWS_ENDPOINT_URL=url, AWS_ACCESS_KEY_ID="testing",
                      AWS_SECRET_ACCESS_KEY=SECRET)
    os.environ.pop("AWS_PROFILE", None)
    yield url
    server.stop()
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture
def ec2(endpoint: str) -> Any:
    client = boto3.session.Session(region_name=REGION).client("ec2")
    assert client.meta.endpoint_url == endpoint
    return client


def write_spec(ec2: Any, tmp_path: Path, name: str, brokers: int = 6,
               **fields: Any) -> tuple[Path, Spec]:
    """The example spec as cluster ``name`` in a new VPC, with ``fields`` replacing its own."""
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    zones = [{"name": zone, "subnet": ec2.create_subnet(
        VpcId=vpc, CidrBlock=f"10.0.{index}.0/24", AvailabilityZone=zone)["Subnet"]["SubnetId"]}
        for index, zone in enumerate(ZONES)]
    data = yaml.safe_load((Path(__file__).parents[2] / "inventory/aws/cluster.yml").read_text())
    data.update(name=name, zones=zones, **fields)
    data["groups"]["kafka_broker"]["count"] = brokers
    path = tmp_path / "cluster.yml"
    path.write_text(yaml.safe_dump(data))
    return path, parse(data)


def tagged(ec2: Any, name: str) -> dict[str, list[str]]:
    """Every live resource carrying the cluster's tag, by kind."""
    flt = [{"Name": f"tag:{provision.CLUSTER_TAG}", "Values": [name]}]
    instances = [i["InstanceId"] for r in ec2.describe_instances(Filters=flt)["Reservations"]
                 for i in r["Instances"] if i["State"]["Name"] != "terminated"]
    volumes = [v["VolumeId"] for v in ec2.describe_volumes(Filters=flt)["Volumes"]]
    groups = [g["GroupId"] for g in ec2.describe_security_groups(Filters=flt)["SecurityGroups"]]
    return {"instances": instances, "volumes": volumes, "groups": groups}


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(KAFKAFORM), *args], capture_output=True, text=True, check=False,
                          env=os.environ.copy(), timeout=120)


def test_up_creates_tagged_resources_and_places_by_zone(ec2: Any, tmp_path: Path) -> None:
    _, spec = write_spec(ec2, tmp_path, "alpha")
    changes = provision.up(ec2, spec, waiter_delay=1)
    assert changes
    seen = provision.observe(ec2, spec)
    hosts = place(spec)
    assert sorted(seen.instances) == sorted(h.name for h in hosts)
    for host in hosts:
        instance = seen.instances[host.name]
        tags = provision.tags_of(instance)
        assert tags[provision.ROLE_TAG] == host.group
        assert tags["owner"] == "data-platform"
        assert instance["Placement"]["AvailabilityZone"] == host.zone
    members = [h.zone for h in hosts if h.group == model.ZOOKEEPER]
    assert max(members.count(z) for z in ZONES) < len(members) // 2 + 1
    brokers = [h.zone for h in hosts if h.group == model.KAFKA_BROKER]
    assert brokers == [ZONES[i % 3] for i in range(len(brokers))]
    # 3 members x 1 volume + 6 brokers x 2 volumes, each attached to its host.
    assert len(seen.volumes) == 15
    for volume in seen.volumes.values():
        owner = seen.instances[provision.tags_of(volume)[provision.HOST_TAG]]
        assert volume["Attachments"][0]["InstanceId"] == owner["InstanceId"]
        assert volume["AvailabilityZone"] == owner["Placement"]["AvailabilityZone"]
    zk_rules = provision.existing_rules(seen.groups[model.ZOOKEEPER], seen.group_ids())
    assert ("tcp", 2182, 2182, "sg:kafka_broker") in zk_rules
    assert ("tcp", 2888, 2888, "sg:zookeeper") in zk_rules
    assert ("tcp", 22, 22, "cidr:10.0.0.0/24") in zk_rules
    assert not any(r[3] == "cidr:0.0.0.0/0" for r in zk_rules)


def test_second_up_makes_no_mutating_call(ec2: Any, tmp_path: Path) -> None:
    _, spec = write_spec(ec2, tmp_path, "beta")
    provision.up(ec2, spec, waiter_delay=1)
    before = tagged(ec2, "beta")
    counter = provision.CallCounter().attach(ec2)
    assert provision.up(ec2, spec, waiter_delay=1) == []
    assert counter.mutating == []
    assert tagged(ec2, "beta") == before
    assert provision.plan(ec2, spec) == []


def listed(source: Path) -> dict[str, Any]:
    """``ansible-inventory --list`` of ``source``: the aws_ec2 plugin reaches moto through
    AWS_ENDPOINT_URL, as boto3 does for kafkaform."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    result = subprocess.run([str(KAFKAFORM.with_name("ansible-inventory")), "-i", str(source),
                             "--list"], capture_output=True, text=True, check=False, env=env,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = plain(json.loads(result.stdout))
    return data


def plain(value: Any) -> Any:
    """ansible-inventory's JSON without its marks of untrusted text (``__ansible_unsafe``)."""
    if isinstance(value, dict):
        if set(value) == {"__ansible_unsafe"}:
            return value["__ansible_unsafe"]
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def test_an_aws_ec2_inventory_yields_what_cloud_inventory_writes(ec2: Any, tmp_path: Path) -> None:
    path, spec = write_spec(ec2, tmp_path, "dynamic", brokers=4)
    up = run_cli("cloud", "up", "--spec", str(path), "--waiter-delay", "1")
    assert up.returncode == 0, up.stderr
    written = {}
    for name, extra in (("static", []), ("dynamic", ["--dynamic"])):
        written[name] = tmp_path / name
        result = run_cli("cloud", "inventory", "--spec", str(path), "--output",
                         str(written[name]), *extra)
        assert result.returncode == 0, result.stderr
    assert (written["dynamic"] / inventory.AWS_EC2_FILE).is_file()
    assert not (written["dynamic"] / "hosts.yml").exists()
    static, dynamic = listed(written["static"]), listed(written["dynamic"])
    hostvars = static["_meta"]["hostvars"]
    assert sorted(dynamic["_meta"]["hostvars"]) == sorted(hostvars) == sorted(
        h.name for h in place(spec))
    for group in (model.ZOOKEEPER, model.KAFKA_BROKER, model.SPARK_MASTER, model.SPARK_WORKER):
        assert sorted(dynamic.get(group, {}).get("hosts", [])) == sorted(
            static.get(group, {}).get("hosts", [])), group
    for host, variables in hostvars.items():
        found = dynamic["_meta"]["hostvars"][host]
        assert {k: found.get(k) for k in variables} == variables, host
    disks = hostvars["kafka2"]["os_tuning_data_disks"]
    assert len(disks) == 2 and disks[0]["device"].startswith("/dev/disk/by-id/nvme-")
    # The shipped example is the configuration the example spec gives.
    example = parse(yaml.safe_load((Path(__file__).parents[2] / "inventory/aws/cluster.yml")
                                   .read_text()))
    shipped = Path(__file__).parents[2] / "inventory/aws" / inventory.AWS_EC2_FILE
    assert yaml.safe_load(shipped.read_text()) == inventory.aws_ec2_config(example)
    # Idempotent: the tags are in place, the next up changes nothing.
    assert provision.plan(ec2, spec) == []


def test_up_puts_drifted_ingress_rules_back(ec2: Any, tmp_path: Path) -> None:
    _, spec = write_spec(ec2, tmp_path, "drift")
    provision.up(ec2, spec, waiter_delay=1)
    group = provision.observe(ec2, spec).group_ids()[model.ZOOKEEPER]
    # By hand: open a port to the world, and close the brokers' TLS client port.
    ec2.authorize_security_group_ingress(GroupId=group, IpPermissions=[{
        "IpProtocol": "tcp", "FromPort": 8080, "ToPort": 8080,
        "IpRanges": [{"CidrIp": "0.0.0.0/0"}]}])
    brokers = provision.observe(ec2, spec).group_ids()[model.KAFKA_BROKER]
    ec2.revoke_security_group_ingress(GroupId=group, IpPermissions=[{
        "IpProtocol": "tcp", "FromPort": 2182, "ToPort": 2182,
        "UserIdGroupPairs": [{"GroupId": brokers}]}])
    planned = [(c.action, c.detail) for c in provision.plan(ec2, spec)]
    assert planned == [("authorize", "sg:kafka_broker 2182-2182"),
                       ("revoke", "cidr:0.0.0.0/0 8080-8080 (nothing of the cluster listens "
                                  "there for it: SE-20)")]
    assert [c.action for c in provision.up(ec2, spec, waiter_delay=1)] == ["authorize", "revoke"]
    seen = provision.observe(ec2, spec)
    rules = provision.existing_rules(seen.groups[model.ZOOKEEPER], seen.group_ids())
    assert ("tcp", 2182, 2182, "sg:kafka_broker") in rules
    assert not any(r[3] == "cidr:0.0.0.0/0" for r in rules)
    assert provision.plan(ec2, spec) == []


def test_cli_up_inventory_check_and_down(ec2: Any, tmp_path: Path) -> None:
    path, _ = write_spec(ec2, tmp_path, "gamma")
    up = run_cli("cloud", "up", "--spec", str(path), "--waiter-delay", "1")
    assert up.returncode == 0, up.stderr
    again = run_cli("cloud", "up", "--spec", str(path), "--waiter-delay", "1")
    assert again.returncode == 0, again.stderr
    assert "0 change(s)" in again.stderr and " 0 mutating" in again.stderr
    output = tmp_path / "inventory"
    written = run_cli("cloud", "inventory", "--spec", str(path), "--output", str(output))
    assert written.returncode == 0, written.stderr
    check = run_cli("check", "-i", str(output))
    assert check.returncode == 0, check.stderr
    hosts = yaml.safe_load((output / "hosts.yml").read_text())["all"]["children"]
    broker = hosts["kafka_broker"]["hosts"]["kafka2"]
    assert broker["rack"] == "eu-west-1b" and broker["kafka_broker_id"] == 2
    assert broker["ansible_host"].startswith("10.0.1.")
    assert broker["os_tuning_data_disks"][0]["device"].startswith(
        "/dev/disk/by-id/nvme-Amazon_Elastic_Block_Store_vol")
    refused = subprocess.run([str(KAFKAFORM), "cloud", "down", "--spec", str(path)],
                             capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False)
    assert refused.returncode == 1 and "--yes" in refused.stderr
    down = run_cli("cloud", "down", "--spec", str(path), "--yes", "--waiter-delay", "1")
    assert down.returncode == 0, down.stderr
    assert tagged(ec2, "gamma") == {"instances": [], "volumes": [], "groups": []}
    for result in (up, again, written, down):
        assert SECRET not in result.stdout + result.stderr


def test_down_leaves_other_clusters_alone(ec2: Any, tmp_path: Path) -> None:
    _, keep = write_spec(ec2, tmp_path, "keep", brokers=3)
    _, drop = write_spec(ec2, tmp_path, "drop", brokers=3)
    provision.up(ec2, keep, waiter_delay=1)
    provision.up(ec2, drop, waiter_delay=1)
    before = tagged(ec2, "keep")
    provision.down(ec2, drop, waiter_delay=1)
    assert tagged(ec2, "drop") == {"instances": [], "volumes": [], "groups": []}
    assert tagged(ec2, "keep") == before


class Interrupted(Exception):
    pass


def test_interrupted_up_resumes_without_duplicates(ec2: Any, tmp_path: Path) -> None:
    _, spec = write_spec(ec2, tmp_path, "delta")
    launched: list[str] = []

    def stop_after_four(**_: Any) -> None:
        launched.append("RunInstances")
        if len(launched) == 4:
            raise Interrupted("simulated interruption after 4 instances")

    ec2.meta.events.register("after-call.ec2.RunInstances", stop_after_four)
    with pytest.raises(Interrupted):
        provision.up(ec2, spec, waiter_delay=1)
    ec2.meta.events.unregister("after-call.ec2.RunInstances", stop_after_four)
    assert len(tagged(ec2, "delta")["instances"]) == 4
    provision.up(ec2, spec, waiter_delay=1)
    seen = provision.observe(ec2, spec)
    assert len(tagged(ec2, "delta")["instances"]) == len(place(spec)) == len(seen.instances)
    assert len(tagged(ec2, "delta")["volumes"]) == 15
    counter = provision.CallCounter().attach(ec2)
    assert provision.up(ec2, spec, waiter_delay=1) == []
    assert counter.mutating == []


def test_shrunk_spec_reports_strays_and_keeps_them(ec2: Any, tmp_path: Path) -> None:
    _, spec = write_spec(ec2, tmp_path, "epsilon", brokers=4)
    provision.up(ec2, spec, waiter_delay=1)
    _, smaller = write_spec(ec2, tmp_path, "epsilon", brokers=3)
    seen = provision.observe(ec2, spec)
    warnings: list[str] = []
    assert provision.up(ec2, smaller, waiter_delay=1, warn=warnings.append) == []
    assert len(warnings) == 1 and warnings[0].startswith("kafka4 ")
    assert len(tagged(ec2, "epsilon")["instances"]) == len(seen.instances)


def test_down_asks_for_the_cluster_name(ec2: Any, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    path, spec = write_spec(ec2, tmp_path, "zeta", brokers=3)
    provision.up(ec2, spec, waiter_delay=1)
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt: "not-zeta")
    assert main(["cloud", "down", "--spec", str(path)]) == 1
    assert tagged(ec2, "zeta")["instances"]
    monkeypatch.setattr("builtins.input", lambda prompt: "zeta")
    assert main(["cloud", "down", "--spec", str(path), "--waiter-delay", "1"]) == 0
    assert tagged(ec2, "zeta") == {"instances": [], "volumes": [], "groups": []}


def test_missing_subnet_is_a_clear_error(ec2: Any, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = write_spec(ec2, tmp_path, "eta")
    data = yaml.safe_load(path.read_text())
    data["zones"][0]["subnet"] = "subnet-0000000000000dead"
    path.write_text(yaml.safe_dump(data))
    assert main(["cloud", "up", "--spec", str(path)]) == 1
    err = capsys.readouterr().err
    assert "subnet subnet-0000000000000dead (zone eu-west-1a) does not exist" in err
    assert tagged(ec2, "eta") == {"instances": [], "volumes": [], "groups": []}


def described(ec2: Any, name: str) -> dict[str, list[dict[str, Any]]]:
    """The cluster's live instances, volumes and security groups as EC2 describes them."""
    flt = [{"Name": f"tag:{provision.CLUSTER_TAG}", "Values": [name]}]
    return {
        "instances": [i for r in ec2.describe_instances(Filters=flt)["Reservations"]
                      for i in r["Instances"] if i["State"]["Name"] != "terminated"],
        "volumes": ec2.describe_volumes(Filters=flt)["Volumes"],
        "groups": ec2.describe_security_groups(Filters=flt)["SecurityGroups"],
    }


def test_ipv6_cidrs_land_in_ipv6_ranges(ec2: Any, tmp_path: Path) -> None:
    _, spec = write_spec(ec2, tmp_path, "sixes", brokers=3,
                         admin_cidrs=["10.0.0.0/24", "fd00:1::/64"],
                         client_cidrs=["10.0.0.0/16", "2001:DB8:10::/48"])
    provision.up(ec2, spec, waiter_delay=1)
    groups = {provision.tags_of(g)[provision.ID_TAG]: g["IpPermissions"]
              for g in described(ec2, "sixes")["groups"]}

    def sources(role: str, port: int, ranges: str, key: str) -> list[str]:
        return sorted(r[key] for p in groups[role] if p.get("FromPort") == port
                      for r in p.get(ranges, []))

    assert sources(model.KAFKA_BROKER, 9092, "Ipv6Ranges", "CidrIpv6") == ["2001:db8:10::/48"]
    assert sources(model.KAFKA_BROKER, 9092, "IpRanges", "CidrIp") == ["10.0.0.0/16"]
    for role in groups:
        assert sources(role, 22, "Ipv6Ranges", "CidrIpv6") == ["fd00:1::/64"]
        assert sources(role, 22, "IpRanges", "CidrIp") == ["10.0.0.0/24"]
    counter = provision.CallCounter().attach(ec2)
    assert provision.up(ec2, spec, waiter_delay=1) == []
    assert counter.mutating == []
    assert provision.plan(ec2, spec) == []


def test_up_encrypts_volumes_and_requires_imdsv2(ec2: Any, tmp_path: Path) -> None:
    _, spec = write_spec(ec2, tmp_path, "secure", brokers=3, kms_key_id="alias/kafkaform")
    provision.up(ec2, spec, waiter_delay=1)
    found = described(ec2, "secure")
    assert len(found["instances"]) == len(place(spec))
    for instance in found["instances"]:
        options = instance["MetadataOptions"]
        assert (options["HttpTokens"], options["HttpEndpoint"],
                options["HttpPutResponseHopLimit"]) == ("required", "enabled", 1)
    # 3 members x 1 volume + 3 brokers x 2 volumes.
    assert len(found["volumes"]) == 9
    assert {(v["Encrypted"], v["KmsKeyId"]) for v in found["volumes"]} == {
        (True, "alias/kafkaform")}
    counter = provision.CallCounter().attach(ec2)
    warnings: list[str] = []
    assert provision.up(ec2, spec, waiter_delay=1, warn=warnings.append) == []
    assert counter.mutating == [] and warnings == []
    assert provision.plan(ec2, spec) == []


def test_insecure_resources_found_are_kept_and_reported(ec2: Any, tmp_path: Path) -> None:
    path, spec = write_spec(ec2, tmp_path, "legacy", brokers=3)
    host = place(spec)[0]
    volume = inventory.volumes(spec, host)[0]
    # Made as an older kafkaform made them: no encryption, IMDSv1 allowed.
    old_volume = ec2.create_volume(
        AvailabilityZone=host.zone, Size=volume.size_gb, VolumeType=volume.type,
        TagSpecifications=provision.tag_spec(spec, "volume", host.group, volume.id,
                                             {provision.HOST_TAG: host.name}))["VolumeId"]
    old_instance = ec2.run_instances(
        ImageId=spec.image, InstanceType=host.instance_type, MinCount=1, MaxCount=1,
        SubnetId=spec.zone(host.zone).subnet, MetadataOptions={"HttpTokens": "optional"},
        TagSpecifications=provision.tag_spec(spec, "instance", host.group, host.name),
    )["Instances"][0]["InstanceId"]
    planned = {(c.action, c.kind, c.name) for c in provision.plan(ec2, spec)}
    assert ("create", "volume", volume.id) not in planned
    assert ("create", "instance", host.name) not in planned
    assert ("attach", "volume", volume.id) in planned
    cli_plan = run_cli("cloud", "plan", "--spec", str(path))
    assert cli_plan.returncode == 0, cli_plan.stderr
    assert f"warning: volume {volume.id} ({old_volume}) is not encrypted (SE-13)" \
        in cli_plan.stderr
    assert f"warning: instance {host.name} ({old_instance}) does not require IMDSv2 tokens " \
        "(SE-14)" in cli_plan.stderr
    warnings: list[str] = []
    provision.up(ec2, spec, waiter_delay=1, warn=warnings.append)
    assert [w.split(" (")[0] for w in warnings] == [f"volume {volume.id}", f"instance {host.name}"]
    kept = ec2.describe_volumes(VolumeIds=[old_volume])["Volumes"][0]
    assert kept["Encrypted"] is False
    assert kept["Attachments"][0]["InstanceId"] == old_instance
    others = [v for v in described(ec2, "legacy")["volumes"] if v["VolumeId"] != old_volume]
    assert others and all(v["Encrypted"] for v in others)
    counter = provision.CallCounter().attach(ec2)
    assert provision.up(ec2, spec, waiter_delay=1) == []
    assert counter.mutating == []


def test_a_kraft_cluster_with_monitoring_grows_zone_by_zone_into_a_scale_out(
        ec2: Any, tmp_path: Path) -> None:
    path, _ = write_spec(ec2, tmp_path, "grow", brokers=3)
    data = yaml.safe_load(path.read_text())
    del data["groups"]["zookeeper"]
    data["groups"].update(kafka_controller={"count": 3, "instance_type": "m5.large"},
                          monitoring={"count": 1, "instance_type": "m5.large"})
    path.write_text(yaml.safe_dump(data))
    up = run_cli("cloud", "up", "--spec", str(path), "--waiter-delay", "1")
    assert up.returncode == 0, up.stderr
    assert "scale_out" not in up.stderr  # a new cluster: every broker starts empty together
    static, dynamic = tmp_path / "static", tmp_path / "dynamic"
    for output, extra in ((static, []), (dynamic, ["--dynamic"])):
        written = run_cli("cloud", "inventory", "--spec", str(path), "--output", str(output),
                          *extra)
        assert written.returncode == 0, written.stderr
    check = run_cli("check", "-i", str(static))
    assert check.returncode == 0, check.stderr
    hosts = yaml.safe_load((static / "hosts.yml").read_text())["all"]["children"]
    assert hosts["kafka_controller"]["hosts"]["ctl2"]["kafka_node_id"] == 3002
    assert hosts["kafka_controller"]["hosts"]["ctl2"]["rack"] == "eu-west-1b"
    assert list(hosts["monitoring"]["hosts"]) == ["monitor1"]
    found = listed(dynamic)
    for group in (model.KAFKA_CONTROLLER, model.MONITORING):
        assert sorted(found[group]["hosts"]) == sorted(hosts[group]["hosts"]), group
    assert found["_meta"]["hostvars"]["ctl3"]["kafka_node_id"] == 3003
    before = {name: i["InstanceId"] for name, i in
              provision.observe(ec2, parse(data)).instances.items()}

    data["groups"]["kafka_broker"]["count"] = 5
    path.write_text(yaml.safe_dump(data))
    planned = run_cli("cloud", "plan", "--spec", str(path))
    assert planned.returncode == 0, planned.stderr
    assert [line for line in planned.stdout.splitlines()
            if line.startswith("create instance")] == [
        "create instance kafka4: m5.2xlarge in eu-west-1a",
        "create instance kafka5: m5.2xlarge in eu-west-1b"], planned.stdout
    assert all(" kafka4" in line or " kafka5" in line for line in planned.stdout.splitlines()
               if line.split()[0] in ("create", "attach"))
    grown = run_cli("cloud", "up", "--spec", str(path), "--waiter-delay", "1")
    assert grown.returncode == 0, grown.stderr
    assert ("kafkaform.platform.scale_out -e kafka_broker_scale_out_hosts=kafka4,kafka5"
            in grown.stderr), grown.stderr
    after = provision.observe(ec2, parse(data)).instances
    assert {name: after[name]["InstanceId"] for name in before} == before  # none replaced
    again = run_cli("cloud", "up", "--spec", str(path), "--waiter-delay", "1")
    assert "0 change(s)" in again.stderr and "scale_out" not in again.stderr, again.stderr
