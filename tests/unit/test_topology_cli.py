"""`kafkaform topology`: its text and JSON, its picture's structure (racks as columns, every host
inside its rack, a verdict under each), the README's picture kept current, and its exit codes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from kafkaform.cloud import inventory as cloud_inventory
from kafkaform.cloud.placement import place
from kafkaform.cloud.spec import load as load_spec
from kafkaform.topology import Topology, topology
from kafkaform.topology_draw import render, svg_id

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "inventory" / "lab"
LAB_KRAFT = ROOT / "inventory" / "lab-kraft"
AWS_SPEC = ROOT / "inventory" / "aws" / "cluster.yml"
LAB_SVG = ROOT / "docs" / "topology-lab.svg"
SVG = "{http://www.w3.org/2000/svg}"


def kafkaform(*argv: str) -> subprocess.CompletedProcess[str]:
    """The command in its own interpreter: reading an inventory sets up Ansible process-wide."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins" / "plugin_utils")}
    return subprocess.run([sys.executable, "-m", "kafkaform", "topology", *argv],
                          capture_output=True, text=True, check=False, cwd=ROOT, env=env)


def three_zones() -> Topology:
    """The cluster the cloud placement writes for inventory/aws/cluster.yml (3 zones)."""
    spec = load_spec(AWS_SPEC)
    return topology(cloud_inventory.view(spec, place(spec), {}))


def boxes(svg: str) -> dict[str, tuple[float, float, float, float]]:
    """Each box the picture gives an id (racks and hosts): its left, top, right, bottom."""
    found = {}
    for group in ET.fromstring(svg).iter(f"{SVG}g"):
        gid = group.get("id", "")
        path = group.find(f"{SVG}path")
        if gid.startswith(("rack-", "host-")) and path is not None:
            numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", path.get("d", ""))]
            xs, ys = numbers[0::2], numbers[1::2]
            found[gid] = (min(xs), min(ys), max(xs), max(ys))
    return found


def texts(svg: str) -> dict[str, str]:
    """The text of each group whose id names a verdict or a rack's name."""
    return {g.get("id", ""): "".join(g.itertext()).strip()
            for g in ET.fromstring(svg).iter(f"{SVG}g")
            if g.get("id", "").startswith(("verdict-", "name-"))}


def assert_columns(svg: str, layout: Topology) -> None:
    """One box per rack, side by side, every host's box inside its rack's, a verdict under each."""
    found, words = boxes(svg), texts(svg)
    racks = [svg_id("rack", rack.name) for rack in layout.racks]
    assert sorted(k for k in found if k.startswith("rack-")) == sorted(racks)
    lefts = [found[r][0] for r in racks]
    assert lefts == sorted(lefts) and len(set(lefts)) == len(lefts)
    for rack in layout.racks:
        outer = found[svg_id("rack", rack.name)]
        assert words[svg_id("name", rack.name)] == rack.name
        for host in rack.hosts:
            inner = found[svg_id("host", host.name)]
            assert outer[0] < inner[0] and inner[2] < outer[2], host.name
            assert outer[1] < inner[1] and inner[3] < outer[3], host.name
        assert words[svg_id("verdict", rack.name)] == layout.verdict(rack).summary.upper()
    hosts = [k for k in found if k.startswith("host-")]
    assert len(hosts) == sum(len(rack.hosts) for rack in layout.racks)


def test_the_lab_in_text() -> None:
    done = kafkaform("-i", str(LAB))
    assert done.returncode == 0, done.stderr
    head, *rest = done.stdout.splitlines()
    assert head.endswith("any 1 host can fail; racks that can be lost: lab-b and lab-c, not lab-a")
    columns = rest[1]
    assert columns.split() == ["lab-a", "lab-b", "lab-c", "no", "rack"]
    assert re.search(r"^CANNOT BE LOST +CAN BE LOST +CAN BE LOST +RACK NOT SET$", done.stdout,
                     re.MULTILINE)
    assert "ZooKeeper: 3 voters, majority 2: any 1 can fail  [TP-01]" in done.stdout
    assert "topic kf.events (replication 3, min.insync.replicas 2): any 1 broker can fail" \
        in done.stdout
    assert "losing rack lab-a: ZooKeeper keeps 2 of 3 (majority held); brokers keep 1 of 3 " \
        "replicas of" in done.stdout


def test_the_kraft_lab_in_json() -> None:
    done = kafkaform("-i", str(LAB_KRAFT), "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [q["name"] for q in data["quorums"]] == ["the KRaft quorum"]
    assert {r["name"]: r["can_be_lost"] for r in data["racks"]} == {
        "lab-a": False, "lab-b": True, "lab-c": True, "no rack": None}
    assert data["margins"]["racks_can_be_lost"] == ["lab-b", "lab-c"]
    lab_a = data["racks"][0]
    assert [h["name"] for h in lab_a["hosts"]] == ["kf-ctl1", "kf-kafka1", "kf-kafka2"]
    assert lab_a["rules"] == ["TP-01", "TP-03"]


def test_the_readme_picture_is_the_labs(tmp_path: Path) -> None:
    # The picture is byte-stable (no date, fixed ids, pinned matplotlib): a change to the lab or
    # to the drawing shows here until docs/topology-lab.svg is rendered again.
    done = kafkaform("-i", str(LAB), "--format", "svg")
    assert done.returncode == 0, done.stderr
    assert done.stdout == LAB_SVG.read_text(encoding="utf-8"), \
        "docs/topology-lab.svg is stale: kafkaform topology -i inventory/lab --format svg " \
        "-o docs/topology-lab.svg (and the .png)"
    png = tmp_path / "lab.png"
    done = kafkaform("-i", str(LAB), "--format", "png", "-o", str(png))
    assert done.returncode == 0 and png.read_bytes().startswith(b"\x89PNG"), done.stderr


def test_the_lab_picture_has_its_racks_as_columns() -> None:
    svg = LAB_SVG.read_text(encoding="utf-8")
    words = texts(svg)
    assert words["verdict-lab-a"] == "CANNOT BE LOST"
    assert words["verdict-lab-b"] == words["verdict-lab-c"] == "CAN BE LOST"
    found = boxes(svg)
    assert {"host-kf-kafka1", "host-kf-kafka2", "host-kf-zk1"} == {
        h for h in found if h.startswith("host-")
        and found["rack-lab-a"][0] < found[h][0] < found["rack-lab-a"][2]}


def test_the_three_zone_cloud_cluster_picture() -> None:
    layout = three_zones()
    assert [rack.name for rack in layout.racks] == ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
    assert layout.racks_can_be_lost() == ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
    svg = render(layout, "svg")
    assert isinstance(svg, str)
    assert_columns(svg, layout)
    assert "any one of its 3 racks can be lost" in "".join(
        next(g for g in ET.fromstring(svg).iter(f"{SVG}g") if g.get("id") == "title").itertext())


def test_the_cloud_inventory_as_written_reads_the_same(tmp_path: Path) -> None:
    spec = load_spec(AWS_SPEC)
    cloud_inventory.write(tmp_path, spec, place(spec), {}, {})
    done = kafkaform("-i", str(tmp_path), "--format", "svg")
    assert done.returncode == 0, done.stderr
    assert_columns(done.stdout, three_zones())


@pytest.mark.parametrize(("argv", "words"), [
    (["-i", "inventory/lab", "--format", "png"], "--format png writes a binary picture"),
    (["-i", "inventory/none"], "inventory/none does not exist"),
    (["-i", "inventory/aws/cluster.yml"], "is a kafkaform cloud spec, not an inventory"),
])
def test_input_errors_exit_2(argv: list[str], words: str) -> None:
    done = kafkaform(*argv)
    assert done.returncode == 2
    assert words in done.stderr and "Fix:" in done.stderr
    assert done.stdout == ""


def test_a_replication_factor_that_is_no_number_exits_2(tmp_path: Path) -> None:
    hosts = {"all": {"children": {"kafka_broker": {"hosts": {"k1": {"rack": "a"}}}},
                     "vars": {"kafka_default_replication_factor": "three"}}}
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump(hosts), encoding="utf-8")
    done = kafkaform("-i", str(tmp_path / "hosts.yml"))
    assert done.returncode == 2
    assert "kafka_default_replication_factor is 'three', not a positive integer" in done.stderr


@pytest.mark.parametrize(("file_format", "code"), [("text", 0), ("json", 0), ("svg", 2)])
def test_without_matplotlib_only_a_picture_is_refused(file_format: str, code: int) -> None:
    # None in sys.modules makes `import matplotlib` fail as it does where it is not installed.
    script = ("import sys; sys.modules['matplotlib'] = None; from kafkaform import cli; "
              f"sys.exit(cli.main(['topology', '-i', 'inventory/lab', '--format', "
              f"'{file_format}']))")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins" / "plugin_utils")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=False, cwd=ROOT, env=env)
    assert done.returncode == code, done.stderr
    if code:
        assert "this command needs matplotlib" in done.stderr
        assert "pip install 'kafkaform[topology]'" in done.stderr
