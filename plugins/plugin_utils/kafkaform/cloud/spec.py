"""The cloud cluster spec: a YAML file loaded into frozen dataclasses and validated before any call.

Every problem is reported at once, each naming the field and the fix. A spec that loads is also
run through the preflight (:func:`kafkaform.checks.check`) on the hosts it would create, so a count
that breaks a cluster rule (an even ensemble, too few brokers for the replication factor) is
caught by the same rules that guard an ordinary inventory.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml

from .. import model
from ..rules import cite

#: The groups a spec may declare: the cluster's, and the monitoring host(s).
SPEC_GROUPS = (*model.GROUPS, model.MONITORING)

#: EBS volume types and the settings each accepts (AWS EC2 CreateVolume).
VOLUME_TYPES: dict[str, dict[str, Any]] = {
    "gp2": {"size": (1, 16384), "iops": None, "throughput": None},
    "gp3": {"size": (1, 16384), "iops": (3000, 16000), "throughput": (125, 1000)},
    "io1": {"size": (4, 16384), "iops": (100, 64000), "throughput": None},
    "io2": {"size": (4, 65536), "iops": (100, 256000), "throughput": None},
    "st1": {"size": (125, 16384), "iops": None, "throughput": None},
    "sc1": {"size": (125, 16384), "iops": None, "throughput": None},
    "standard": {"size": (1, 1024), "iops": None, "throughput": None},
}

#: Volume types that need an IOPS figure.
IOPS_REQUIRED = ("io1", "io2")

#: Groups whose hosts take data volumes, and the purpose (os_tuning) a volume serves there.
VOLUME_PURPOSES = {model.ZOOKEEPER: model.ZOOKEEPER_TXN_LOG,
                   model.KAFKA_BROKER: model.KAFKA_LOG_DIR}

#: The whole Internet, for each IP version.
INTERNET_V4 = ipaddress.IPv4Network("0.0.0.0/0")
INTERNET_V6 = ipaddress.IPv6Network("::/0")
_Network = TypeVar("_Network", ipaddress.IPv4Network, ipaddress.IPv6Network)

#: A KMS key as EC2 takes it: key id, multi-Region key id, alias, or the ARN of either.
KMS_KEY = re.compile(r"^(arn:aws[a-z-]*:kms:\S+|alias/[\w/+=,.@-]+|mrk-[0-9a-f]{32}|"
                     r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")


class SpecError(Exception):
    """A spec that cannot be used; ``problems`` lists every one, each with its fix."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"{source}: {len(problems)} problem(s) in the cloud spec:\n{lines}")


@dataclass(frozen=True)
class Zone:
    name: str
    subnet: str


@dataclass(frozen=True)
class Volume:
    type: str
    size_gb: int
    count: int = 1
    iops: int | None = None
    throughput_mbps: int | None = None


@dataclass(frozen=True)
class Group:
    name: str
    count: int
    instance_type: str
    volumes: tuple[Volume, ...] = ()


@dataclass(frozen=True)
class Spec:
    name: str
    region: str
    zones: tuple[Zone, ...]
    groups: tuple[Group, ...]
    image: str
    key_pair: str
    admin_cidrs: tuple[str, ...]
    client_cidrs: tuple[str, ...]
    ssh_user: str = "admin"
    #: client_cidrs may cover the whole Internet (SE-12).
    allow_public_clients: bool = False
    #: The KMS key encrypting the EBS volumes; None: the account's default key for EBS (SE-13).
    kms_key_id: str | None = None
    tags: Mapping[str, str] = field(default_factory=dict)
    #: Cluster settings written to group_vars/all (kafka_default_replication_factor, ...).
    settings: Mapping[str, Any] = field(default_factory=dict)

    def group(self, name: str) -> Group | None:
        return next((g for g in self.groups if g.name == name), None)

    def zone(self, name: str) -> Zone:
        return next(z for z in self.zones if z.name == name)


NAME = re.compile(r"^[a-z][a-z0-9-]{0,39}$")


class _Reader:
    """Collects problems while reading raw YAML data, so every one is reported at once."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def fail(self, where: str, message: str, fix: str) -> None:
        self.problems.append(f"{where}: {message}. Fix: {fix}.")

    def text(self, data: Mapping[str, Any], key: str, where: str, fix: str) -> str:
        value = data.get(key)
        if not isinstance(value, str) or not value.strip():
            self.fail(f"{where}{key}", f"is {value!r}, not a non-empty string", fix)
            return ""
        return value.strip()

    def integer(self, data: Mapping[str, Any], key: str, where: str, low: int,
                high: int | None = None, default: int | None = None) -> int | None:
        value = data.get(key, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < low or (
                high is not None and value > high):
            span = f"from {low} to {high}" if high is not None else f"of at least {low}"
            self.fail(f"{where}{key}", f"is {value!r}", f"use an integer {span}")
            return None
        return value

    def cidrs(self, data: Mapping[str, Any], key: str) -> tuple[str, ...]:
        value = data.get(key)
        if not isinstance(value, list) or not value:
            self.fail(key, f"is {value!r}, not a list of CIDR blocks",
                      f"list at least one CIDR block, e.g. {key}: [10.0.0.0/16]")
            return ()
        found = []
        for index, item in enumerate(value):
            try:
                found.append(str(ipaddress.ip_network(str(item), strict=True)))
            except ValueError:
                self.fail(f"{key}[{index}]", f"{item!r} is not a CIDR block",
                          "write a network such as 10.0.0.0/16 or fd00::/64 (host bits zero)")
        return tuple(found)

    def flag(self, data: Mapping[str, Any], key: str, default: bool) -> bool:
        value = data.get(key, default)
        if not isinstance(value, bool):
            self.fail(key, f"is {value!r}, not true or false", f"write {key}: true or false")
            return default
        return value

    def internet_refused(self, key: str, cidrs: Iterable[str], rule: str, opens: str,
                         fix: str) -> None:
        """Fail ``key`` once for each IP version whose whole Internet ``cidrs`` cover together."""
        for internet, blocks in internet_covered(cidrs):
            # One block covering everything is the /0 itself; several are named with their sum.
            what = internet if len(blocks) == 1 else (
                f"{', '.join(blocks)} together cover {internet}, which")
            self.fail(key, f"{what} opens {opens} to the whole Internet ({rule})", fix)


def internet_covered(cidrs: Iterable[str]) -> list[tuple[str, list[str]]]:
    """Each whole Internet (0.0.0.0/0, ::/0) that ``cidrs`` cover, with the blocks covering it.

    The blocks of each IP version are collapsed: 0.0.0.0/1 and 128.0.0.0/1 merge into 0.0.0.0/0,
    so a list that adds up to everything is caught, not only the literal /0.
    """
    networks = [ipaddress.ip_network(c) for c in cidrs]
    v4 = [n for n in networks if isinstance(n, ipaddress.IPv4Network)]
    v6 = [n for n in networks if isinstance(n, ipaddress.IPv6Network)]
    covered = []
    if _whole(INTERNET_V4, v4):
        covered.append((str(INTERNET_V4), [str(n) for n in v4]))
    if _whole(INTERNET_V6, v6):
        covered.append((str(INTERNET_V6), [str(n) for n in v6]))
    return covered


def _whole(internet: _Network, blocks: list[_Network]) -> bool:
    return list(ipaddress.collapse_addresses(blocks)) == [internet]


def _volume(reader: _Reader, raw: Any, where: str) -> Volume | None:
    if not isinstance(raw, Mapping):
        reader.fail(where, f"is {raw!r}, not a mapping",
                    "declare {type, size_gb, count, iops, throughput_mbps}")
        return None
    vtype = raw.get("type")
    if vtype not in VOLUME_TYPES:
        reader.fail(f"{where}.type", f"volume type {vtype!r} does not exist",
                    f"use one of {', '.join(VOLUME_TYPES)}")
        return None
    limits = VOLUME_TYPES[vtype]
    low, high = limits["size"]
    size = reader.integer(raw, "size_gb", f"{where}.", low, high)
    if "size_gb" not in raw:
        reader.fail(f"{where}.size_gb", "is missing", f"set the size in GiB ({low}-{high})")
    count = reader.integer(raw, "count", f"{where}.", 1, 8, default=1)
    settings: dict[str, int | None] = {}
    for key, limit_key in (("iops", "iops"), ("throughput_mbps", "throughput")):
        if raw.get(key) is None:
            settings[key] = None
            if key == "iops" and vtype in IOPS_REQUIRED:
                reader.fail(f"{where}.iops", f"is required for {vtype}",
                            f"set iops ({limits['iops'][0]}-{limits['iops'][1]})")
            continue
        if limits[limit_key] is None:
            reader.fail(f"{where}.{key}", f"is not settable on {vtype} volumes",
                        f"remove {key}, or use a volume type that takes it (gp3)")
            settings[key] = None
            continue
        settings[key] = reader.integer(raw, key, f"{where}.", *limits[limit_key])
    unknown = set(raw) - {"type", "size_gb", "count", "iops", "throughput_mbps"}
    for key in sorted(unknown):
        reader.fail(f"{where}.{key}", "is not a volume setting",
                    "use type, size_gb, count, iops, throughput_mbps")
    if size is None or count is None:
        return None
    return Volume(vtype, size, count, settings["iops"], settings["throughput_mbps"])


def _group(reader: _Reader, name: str, raw: Any) -> Group | None:
    where = f"groups.{name}"
    if name not in SPEC_GROUPS:
        reader.fail(where, f"unknown group {name!r}", f"use one of {', '.join(SPEC_GROUPS)}")
        return None
    if not isinstance(raw, Mapping):
        reader.fail(where, f"is {raw!r}, not a mapping", "declare {count, instance_type, volumes}")
        return None
    count = reader.integer(raw, "count", f"{where}.", 0, 100)
    if "count" not in raw:
        reader.fail(f"{where}.count", "is missing", "set how many hosts the group has")
    instance_type = reader.text(raw, "instance_type", f"{where}.",
                                "set an EC2 instance type, e.g. m5.large")
    volumes = []
    raw_volumes = raw.get("volumes", []) or []
    if not isinstance(raw_volumes, list):
        reader.fail(f"{where}.volumes", "is not a list", "list the data volumes of each host")
        raw_volumes = []
    for index, entry in enumerate(raw_volumes):
        volume = _volume(reader, entry, f"{where}.volumes[{index}]")
        if volume is not None:
            volumes.append(volume)
    per_host = sum(v.count for v in volumes)
    if per_host and name not in VOLUME_PURPOSES:
        reader.fail(f"{where}.volumes", f"{name} hosts have no data-disk purpose in os_tuning",
                    "remove the volumes (only zookeeper and kafka_broker take data volumes)")
    if name == model.ZOOKEEPER and per_host > 1:
        reader.fail(f"{where}.volumes", f"declares {per_host} volumes per member; ZooKeeper "
                    "writes one transaction log (dataLogDir)", "declare one volume")
    if per_host > 11:
        reader.fail(f"{where}.volumes", f"declares {per_host} volumes per host",
                    "use at most 11 (device names /dev/sdf to /dev/sdp)")
    if count is None or not instance_type:
        return None
    return Group(name, count, instance_type, tuple(volumes))


def _kms_key(reader: _Reader, data: Mapping[str, Any]) -> str | None:
    if data.get("kms_key_id") is None:
        return None
    key = reader.text(data, "kms_key_id", "", "name a KMS key, or remove kms_key_id to use the "
                      "account's default EBS key")
    if key and not KMS_KEY.match(key):
        reader.fail("kms_key_id", f"{key!r} is not a KMS key id, alias or ARN",
                    "write a key id (1234abcd-...), an alias (alias/NAME) or a key ARN")
    return key or None


def _name(reader: _Reader, data: Mapping[str, Any]) -> str:
    name = reader.text(data, "name", "", "name the cluster (lower case, digits, dashes)")
    if name and not NAME.match(name):
        reader.fail("name", f"{name!r} is not a cluster name",
                    "use lower case letters, digits and dashes, starting with a letter, "
                    "at most 40 characters")
    return name


def _zones(reader: _Reader, data: Mapping[str, Any], region: str) -> list[Zone]:
    """The availability zones, each in the spec's region and listed once."""
    zones: list[Zone] = []
    raw_zones = data.get("zones")
    if not isinstance(raw_zones, list) or not raw_zones:
        reader.fail("zones", f"is {raw_zones!r}", "list the availability zones, each with "
                    "{name, subnet}")
        raw_zones = []
    for index, entry in enumerate(raw_zones):
        where = f"zones[{index}]."
        if not isinstance(entry, Mapping):
            reader.fail(f"zones[{index}]", f"is {entry!r}", "declare {name, subnet}")
            continue
        zone = reader.text(entry, "name", where, "name the availability zone, e.g. eu-west-1a")
        subnet = reader.text(entry, "subnet", where, "set the zone's subnet id (subnet-...)")
        if zone and region and not zone.startswith(region):
            reader.fail(f"{where}name", f"zone {zone} is not in region {region}",
                        f"use zones of {region}, or change the region")
        if zone and subnet:
            zones.append(Zone(zone, subnet))
    for zone_name in sorted({z.name for z in zones if [y.name for y in zones].count(z.name) > 1}):
        reader.fail("zones", f"zone {zone_name} is listed twice", "list each zone once")
    return zones


def _groups(reader: _Reader, data: Mapping[str, Any]) -> list[Group]:
    groups: list[Group] = []
    raw_groups = data.get("groups")
    if not isinstance(raw_groups, Mapping) or not raw_groups:
        reader.fail("groups", f"is {raw_groups!r}", f"declare groups among {SPEC_GROUPS}")
        raw_groups = {}
    for group_name, raw in raw_groups.items():
        group = _group(reader, str(group_name), raw)
        if group is not None:
            groups.append(group)
    return groups


def _networks(reader: _Reader,
              data: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    """The administrators' and the clients' networks, none of them the whole internet unless the
    spec makes the brokers public (SE-11, SE-12)."""
    admin = reader.cidrs(data, "admin_cidrs")
    clients = reader.cidrs(data, "client_cidrs")
    public_clients = reader.flag(data, "allow_public_clients", default=False)
    reader.internet_refused("admin_cidrs", admin, cite("SE-11"),
                            "SSH and ZooKeeper's client port",
                            "list only the administrators' networks (a VPN's or office's range)")
    if not public_clients:
        reader.internet_refused("client_cidrs", clients, cite("SE-12"), "Kafka's client port",
                                "list only the clients' networks, or set "
                                "allow_public_clients: true if the brokers are meant to be public")
    return admin, clients, public_clients


def _tags(reader: _Reader, data: Mapping[str, Any]) -> Mapping[Any, Any]:
    """The spec's own tags; the keys kafkaform finds its resources by are refused."""
    tags = data.get("tags", {}) or {}
    if not isinstance(tags, Mapping):
        reader.fail("tags", f"is {tags!r}", "declare a mapping of tag keys to values")
        tags = {}
    for key in tags:
        if str(key).startswith(("kafkaform:", "aws:")) or str(key) == "Name":
            reader.fail(f"tags.{key}", "is reserved (kafkaform finds its resources by it)",
                        "use another tag key")
    return tags


def _settings(reader: _Reader, data: Mapping[str, Any]) -> Mapping[Any, Any]:
    settings = data.get("settings", {}) or {}
    if not isinstance(settings, Mapping):
        reader.fail("settings", f"is {settings!r}", "declare a mapping of cluster settings")
        settings = {}
    return settings


def _unknown_fields(reader: _Reader, data: Mapping[str, Any]) -> None:
    known = {"name", "region", "zones", "groups", "image", "key_pair", "admin_cidrs",
             "client_cidrs", "allow_public_clients", "kms_key_id", "ssh_user", "tags", "settings"}
    for key in sorted(set(data) - known):
        reader.fail(str(key), "is not a spec field", f"use {', '.join(sorted(known))}")


def _zones_hold_the_ensemble(reader: _Reader, zones: list[Zone], groups: list[Group]) -> None:
    """No zone holds a majority of a ZooKeeper ensemble or a KRaft quorum, so losing one zone
    keeps the quorum (ZK-07, KR-03)."""
    for name, what in ((model.ZOOKEEPER, "a ZooKeeper ensemble"),
                       (model.KAFKA_CONTROLLER, "a KRaft controller quorum")):
        voters = next((g for g in groups if g.name == name), None)
        if voters is not None and voters.count > 1 and zones and len(zones) < 3:
            reader.fail("zones", f"{len(zones)} zone(s) cannot hold {what} of {voters.count}: "
                        "one zone would hold a majority, and losing it loses the quorum",
                        "list at least 3 availability zones")


def parse(data: Any, source: str = "spec") -> Spec:
    """A validated :class:`Spec` from raw YAML data; raises :class:`SpecError` with every problem.

    + data: the spec as YAML loads it (see inventory/aws/cluster.yml)
    + source: names the spec in error messages, usually its path

    Pure:
        Makes no AWS call, so a bad spec fails before anything is touched.

    Example:
        spec = parse(yaml.safe_load(Path("inventory/aws/cluster.yml").read_text()))
    """
    reader = _Reader()
    if not isinstance(data, Mapping):
        raise SpecError(source, ["the spec is not a mapping. Fix: start from "
                                 "inventory/aws/cluster.yml."])
    # Each part in the order its problems are listed.
    name = _name(reader, data)
    region = reader.text(data, "region", "", "set the AWS region, e.g. eu-west-1")
    image = reader.text(data, "image", "", "set the AMI id of the hosts' image (ami-...)")
    key_pair = reader.text(data, "key_pair", "", "name an existing EC2 key pair")
    ssh_user = str(data.get("ssh_user", "admin"))
    zones = _zones(reader, data, region)
    groups = _groups(reader, data)
    admin, clients, public_clients = _networks(reader, data)
    kms_key_id = _kms_key(reader, data)
    tags = _tags(reader, data)
    settings = _settings(reader, data)
    _unknown_fields(reader, data)
    _zones_hold_the_ensemble(reader, zones, groups)
    if reader.problems:
        raise SpecError(source, reader.problems)
    spec = Spec(name=name, region=region, zones=tuple(zones), groups=tuple(groups), image=image,
                key_pair=key_pair, admin_cidrs=admin, client_cidrs=clients, ssh_user=ssh_user,
                allow_public_clients=public_clients, kms_key_id=kms_key_id,
                tags={str(k): str(v) for k, v in tags.items()}, settings=dict(settings))
    preflight(spec, source)
    return spec


def preflight(spec: Spec, source: str) -> None:
    """Run the inventory preflight on the hosts the spec would create; raise on any error."""
    # Imported here: placement and inventory import this module's dataclasses.
    from .. import checks
    from ..cloud import inventory, placement

    hosts = placement.place(spec)
    view = inventory.view(spec, hosts, addresses={})
    problems = [f"preflight {f.rule} on the planned hosts ({', '.join(f.hosts) or 'cluster'}): "
                f"{f.message}. Fix: {f.fix} (change the counts or settings in the spec)."
                for f in checks.errors(checks.check(view))]
    if problems:
        raise SpecError(source, problems)


def load(path: str | Path) -> Spec:
    """Read and validate the spec file at ``path`` (raises :class:`SpecError`)."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise SpecError(source, [f"cannot read the spec ({error.strerror}). Fix: pass an "
                                 "existing file with --spec."]) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise SpecError(source, [f"not valid YAML: {error}. Fix: correct the syntax."]) from None
    return parse(data, source)
