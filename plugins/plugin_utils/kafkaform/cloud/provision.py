"""Find or create a cluster's EC2 resources by tag, and delete exactly them again.

Every resource carries ``kafkaform:cluster`` (the spec's name), ``kafkaform:role`` (the group, or
the security group's role) and ``kafkaform:id`` (the host, volume or security group name), set in
the create call itself (``TagSpecifications``), so no resource ever exists untagged: an
interrupted :func:`up` finds what it made and carries on, and a second :func:`up` makes no
mutating call at all. The EC2 client is passed in (tests point it at moto in server mode).

Waiting
    Waiters, never sleeps. A waiter polls at once and sleeps only when the state is not reached,
    so against an endpoint where resources are immediately ready (moto) no time is spent waiting.

Credentials
    Come from boto3's usual chain (environment, profile, instance role); this module never reads,
    prints or logs them. The endpoint honours ``AWS_ENDPOINT_URL`` (boto3 itself reads it).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import model
from ..cloud import inventory
from ..cloud.placement import Host, place
from ..cloud.spec import Spec
from ..contexts.spark_node import TLS_UI_PORT_OFFSET
from ..defaults import role_default
from ..rules import cite

CLUSTER_TAG = "kafkaform:cluster"
ROLE_TAG = "kafkaform:role"
ID_TAG = "kafkaform:id"
HOST_TAG = "kafkaform:host"

#: Security groups by role; both Spark groups share one, their ports being cluster-internal.
SPARK = "spark"
SECURITY_ROLE = {model.ZOOKEEPER: model.ZOOKEEPER, model.KAFKA_CONTROLLER: model.KAFKA_CONTROLLER,
                 model.KAFKA_BROKER: model.KAFKA_BROKER, model.SPARK_MASTER: SPARK,
                 model.SPARK_WORKER: SPARK, model.MONITORING: model.MONITORING}

#: Instance states that still count as the host (terminated and shutting-down ones do not).
LIVE_STATES = ("pending", "running", "stopping", "stopped")

#: One ingress rule: protocol, first port, last port, and source ("cidr:..." or "sg:<role>").
Rule = tuple[str, int, int, str]

#: Every instance requires IMDSv2 session tokens (SE-14); a hop limit of 1 keeps the token from
#: bridged containers on the host. See
#: https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/configuring-instance-metadata-service.html
METADATA_OPTIONS = {"HttpTokens": "required", "HttpEndpoint": "enabled",
                    "HttpPutResponseHopLimit": 1}


class ProvisionError(Exception):
    """The cloud disagrees with the spec in a way kafkaform will not fix by itself."""


@dataclass
class CallCounter:
    """Counts the API calls made through one client, reads apart from mutating calls.

    Hooked on botocore's ``before-call`` event, so waiters' and paginators' calls count too.
    """

    calls: list[str] = field(default_factory=list)

    def attach(self, client: Any) -> CallCounter:
        client.meta.events.register("before-call.ec2", self._count)
        return self

    def _count(self, model: Any, **_: Any) -> None:
        self.calls.append(str(model.name))

    @property
    def total(self) -> int:
        return len(self.calls)

    @property
    def mutating(self) -> list[str]:
        return [c for c in self.calls if not c.startswith(("Describe", "Get", "List"))]

    def summary(self) -> str:
        return f"{self.total} calls, {len(self.mutating)} mutating"


@dataclass(frozen=True)
class Change:
    """One change :func:`up` makes (or :func:`plan` would make), for people to read."""

    action: str
    kind: str
    name: str
    detail: str = ""

    def text(self) -> str:
        detail = f": {self.detail}" if self.detail else ""
        return f"{self.action} {self.kind} {self.name}{detail}"


@dataclass
class Observed:
    """What exists of a cluster, found by its tags."""

    vpc: str | None = None
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)
    instances: dict[str, dict[str, Any]] = field(default_factory=dict)
    volumes: dict[str, dict[str, Any]] = field(default_factory=dict)

    def group_ids(self) -> dict[str, str]:
        return {role: sg["GroupId"] for role, sg in self.groups.items()}


def tags_of(resource: Mapping[str, Any]) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in resource.get("Tags", [])}


def cluster_filter(spec: Spec) -> list[dict[str, Any]]:
    return [{"Name": f"tag:{CLUSTER_TAG}", "Values": [spec.name]}]


def tag_spec(spec: Spec, resource_type: str, role: str, ident: str,
             extra: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    tags = {**spec.tags, "Name": f"{spec.name}-{ident}", CLUSTER_TAG: spec.name, ROLE_TAG: role,
            ID_TAG: ident, **(extra or {})}
    return [{"ResourceType": resource_type,
             "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}]


def observe(client: Any, spec: Spec, *, subnets: bool = True) -> Observed:
    """Everything carrying the cluster's tag (4 read calls), and the VPC of the spec's subnets."""
    seen = Observed()
    if subnets:
        seen.vpc = check_subnets(client, spec)
    for sg in paginate(client, "describe_security_groups", "SecurityGroups",
                       Filters=cluster_filter(spec)):
        seen.groups[tags_of(sg).get(ID_TAG, sg["GroupId"])] = sg
    for reservation in paginate(client, "describe_instances", "Reservations",
                                Filters=cluster_filter(spec)):
        for instance in reservation["Instances"]:
            if instance["State"]["Name"] in LIVE_STATES:
                seen.instances[tags_of(instance).get(ID_TAG, instance["InstanceId"])] = instance
    for volume in paginate(client, "describe_volumes", "Volumes", Filters=cluster_filter(spec)):
        if volume["State"] not in ("deleting", "deleted"):
            seen.volumes[tags_of(volume).get(ID_TAG, volume["VolumeId"])] = volume
    return seen


def paginate(client: Any, operation: str, key: str, **params: Any) -> Iterable[Any]:
    for page in client.get_paginator(operation).paginate(**params):
        yield from page.get(key, [])


def check_subnets(client: Any, spec: Spec) -> str:
    """The VPC holding the spec's subnets; raises when a subnet is missing or in another zone."""
    wanted = {zone.subnet: zone.name for zone in spec.zones}
    # A filter, not SubnetIds: a missing subnet is then reported here with its zone, instead of
    # failing the call on the first one.
    found = client.describe_subnets(
        Filters=[{"Name": "subnet-id", "Values": sorted(wanted)}])["Subnets"]
    problems = [f"subnet {subnet} (zone {zone}) does not exist in {spec.region}: create it or "
                "fix zones[].subnet" for subnet, zone in wanted.items()
                if subnet not in {s["SubnetId"] for s in found}]
    problems += [
        f"subnet {s['SubnetId']} is in {s['AvailabilityZone']}, the spec says "
        f"{wanted[s['SubnetId']]}: fix zones[].subnet"
        for s in found if s["AvailabilityZone"] != wanted[s["SubnetId"]]
    ]
    vpcs = {s["VpcId"] for s in found}
    if len(vpcs) > 1:
        problems.append(f"the subnets are in {len(vpcs)} VPCs ({', '.join(sorted(vpcs))}): "
                        "use subnets of one VPC")
    if problems:
        raise ProvisionError("; ".join(problems))
    return str(vpcs.pop())


def security_roles(spec: Spec) -> list[str]:
    roles = [SECURITY_ROLE[g.name] for g in spec.groups if g.count > 0]
    return list(dict.fromkeys(roles))


def desired_rules(spec: Spec, role: str) -> set[Rule]:
    """The ingress rules of one security group (SE-20): each listener the roles bind on the
    group's hosts, open to those that connect to it, with the ports of the cluster model of the
    planned inventory (the spec's settings included).

    ZooKeeper: its TLS client port from brokers, KRaft controllers (a migration's) and admins;
    quorum and election among members; the plain client port listens on loopback only (SE-18).
    Brokers: the client listener (and any extra one) from clients, brokers and Spark; the broker
    listener, which replication and the admin tools use, from brokers and, during a migration,
    the KRaft controllers. Controllers: their listener from controllers and brokers. Spark: every
    TCP port among Spark hosts, as standalone mode picks executor and block manager ports at
    random. Monitoring: Prometheus and Alertmanager from admins; every port it scrapes (node
    exporter everywhere, the JVMs' metrics agents, the Spark UIs' TLS ports: MO-07, MO-09) from
    the monitoring hosts. SSH from the admin networks only, everywhere.
    """
    roles = set(security_roles(spec))
    view = inventory.view(spec, place(spec), addresses={})
    cluster = model.build(view)
    admins = [f"cidr:{c}" for c in spec.admin_cidrs]
    clients = [f"cidr:{c}" for c in spec.client_cidrs]
    monitors = view.members(model.MONITORING)

    def groups(*names: str) -> list[str]:
        return [f"sg:{name}" for name in names if name in roles]

    rules: set[Rule] = {("tcp", 22, 22, a) for a in admins}

    def allow(port: int | None, sources: Iterable[str]) -> None:
        if port:
            rules.update(("tcp", port, port, source) for source in sources)

    def setting(key: str) -> int:
        return int(view.var(monitors[0], key, role_default(key)) if monitors
                   else role_default(key))

    scraped: list[int | None] = [setting("monitoring_node_exporter_port")]
    if role == model.ZOOKEEPER:
        for member in cluster.ensemble:
            allow(member.secure_client_port,
                  admins + groups(model.KAFKA_BROKER, model.KAFKA_CONTROLLER))
            allow(member.quorum_port, groups(model.ZOOKEEPER))
            allow(member.election_port, groups(model.ZOOKEEPER))
            scraped.append(member.metrics_port)
    elif role == model.KAFKA_BROKER:
        migrating = groups(model.KAFKA_CONTROLLER) if cluster.ensemble else []
        for broker in cluster.brokers:
            for listener in broker.listeners:
                if listener.name in (model.BROKER_LISTENER, model.PLAINTEXT_LISTENER):
                    allow(listener.port, groups(model.KAFKA_BROKER) + migrating)
                else:
                    allow(listener.port, clients + groups(model.KAFKA_BROKER, SPARK))
            scraped.append(broker.metrics_port)
    elif role == model.KAFKA_CONTROLLER:
        for controller in cluster.controllers:
            allow(controller.port, groups(model.KAFKA_CONTROLLER, model.KAFKA_BROKER))
    elif role == SPARK:
        rules.add(("tcp", 0, 65535, f"sg:{SPARK}"))
        scraped += [node.webui_port + TLS_UI_PORT_OFFSET
                    for node in (*cluster.spark_masters, *cluster.spark_workers)]
    elif role == model.MONITORING:
        for key in ("monitoring_prometheus_port", "monitoring_alertmanager_port"):
            allow(setting(key), admins + groups(model.MONITORING))
    for port in scraped:
        allow(port, groups(model.MONITORING))
    return rules


def existing_rules(sg: Mapping[str, Any], ids: Mapping[str, str]) -> set[Rule]:
    roles = {group_id: role for role, group_id in ids.items()}
    rules: set[Rule] = set()
    for perm in sg.get("IpPermissions", []):
        proto, low, high = perm.get("IpProtocol"), perm.get("FromPort", 0), perm.get("ToPort", 0)
        for cidr in perm.get("IpRanges", []):
            rules.add((proto, low, high, cidr_source(cidr["CidrIp"])))
        for cidr in perm.get("Ipv6Ranges", []):
            rules.add((proto, low, high, cidr_source(cidr["CidrIpv6"])))
        for pair in perm.get("UserIdGroupPairs", []):
            rules.add((proto, low, high, f"sg:{roles.get(pair['GroupId'], pair['GroupId'])}"))
    return rules


def cidr_source(cidr: str) -> str:
    """A rule's source for ``cidr``, written as the spec writes it (2001:DB8::/32 as 2001:db8::/32),
    so that a rule read back from EC2 compares equal to the one the spec asks for. Not strict: a
    rule added by hand must not stop the run that reads it."""
    return f"cidr:{ipaddress.ip_network(cidr, strict=False)}"


def permissions(rules: Iterable[Rule], ids: Mapping[str, str]) -> list[dict[str, Any]]:
    perms = []
    for proto, low, high, source in sorted(rules):
        kind, _sep, value = source.partition(":")
        perm: dict[str, Any] = {"IpProtocol": proto, "FromPort": low, "ToPort": high}
        if kind == "cidr" and ipaddress.ip_network(value).version == 6:
            perm["Ipv6Ranges"] = [{"CidrIpv6": value}]
        elif kind == "cidr":
            perm["IpRanges"] = [{"CidrIp": value}]
        else:
            perm["UserIdGroupPairs"] = [{"GroupId": ids.get(value, value)}]
        perms.append(perm)
    return perms


def plan(client: Any, spec: Spec, seen: Observed | None = None) -> list[Change]:
    """What :func:`up` would change, from read calls only (4 of them).

    + client: a boto3 EC2 client for the spec's region
    + spec: the validated cluster spec
    + seen: what :func:`observe` found, when the caller already asked

    Example:
        for change in plan(boto3.client("ec2", region_name=spec.region), spec):
            print(change.text())
    """
    if seen is None:
        seen = observe(client, spec)
    return list(_apply(client, spec, seen, dry_run=True))


def up(client: Any, spec: Spec, *, waiter_delay: int = 5,
       report: Callable[[Change], None] | None = None,
       warn: Callable[[str], None] | None = None) -> list[Change]:
    """Create whatever of the spec is missing; returns the changes made (none on a rerun).

    + client: a boto3 EC2 client for the spec's region
    + spec: the validated cluster spec
    + waiter_delay: seconds between a waiter's polls (it polls once at once, without sleeping)
    + report: called with each change just before it is made, for progress output
    + warn: called with each problem ``up`` leaves alone (see Not done and :func:`warnings`)

    Resuming:
        Every create call carries the resource's tags, so whatever an interrupted run made is
        found by the next one and not made twice. botocore fills RunInstances' ClientToken itself
        and reuses it when it retries, so a lost response cannot launch a second instance either.

    Not done:
        ``up`` never terminates: a host the spec no longer lists is reported by :func:`strays`,
        for an operator to decommission (reassign its partitions, retire its ZooKeeper id) first.
        Nor does it replace what it finds insecure: an unencrypted volume holds data, an
        instance without IMDSv2 runs services; both are reported for an operator to change.

    Example:
        changes = up(client, spec, report=lambda change: print(change.text()))
    """
    seen = observe(client, spec)
    if warn is not None:
        for problem in warnings(spec, seen):
            warn(problem)
    changes = []
    for change in _apply(client, spec, seen, dry_run=False, waiter_delay=waiter_delay):
        changes.append(change)
        if report is not None:
            report(change)
    return changes


def _wait(client: Any, name: str, delay: int, **params: Any) -> None:
    client.get_waiter(name).wait(WaiterConfig={"Delay": delay, "MaxAttempts": 120}, **params)


def _apply(client: Any, spec: Spec, seen: Observed, *, dry_run: bool,
           waiter_delay: int = 5) -> Iterable[Change]:
    """The changes from ``seen`` to the spec, made unless ``dry_run``; yields each one."""
    # Security groups first, all of them, since rules refer to one another.
    roles = security_roles(spec)
    for role in roles:
        if role in seen.groups:
            continue
        yield Change("create", "security group", f"{spec.name}-{role}")
        if not dry_run:
            made = client.create_security_group(
                GroupName=f"{spec.name}-{role}", VpcId=seen.vpc,
                Description=f"kafkaform cluster {spec.name}: {role} hosts",
                TagSpecifications=tag_spec(spec, "security-group", role, role))
            seen.groups[role] = {"GroupId": made["GroupId"], "IpPermissions": []}
    ids = seen.group_ids()
    for role in roles:
        want = desired_rules(spec, role)
        have = existing_rules(seen.groups.get(role, {}), ids)
        # Rules to add, then rules no longer in the spec; both calls take the same arguments.
        for action, rules, call, why in (
            ("authorize", want - have, client.authorize_security_group_ingress, ""),
            ("revoke", have - want, client.revoke_security_group_ingress,
             f" (nothing of the cluster listens there for it: {cite('SE-20')})"),
        ):
            if not rules:
                continue
            yield Change(action, "ingress", f"{spec.name}-{role}",
                         ", ".join(f"{p[3]} {p[1]}-{p[2]}" for p in sorted(rules)) + why)
            if not dry_run:
                call(GroupId=ids[role], IpPermissions=permissions(rules, ids))

    hosts = place(spec)
    created: list[str] = []
    for host in hosts:
        instance = seen.instances.get(host.name)
        if instance is not None:
            zone = instance["Placement"]["AvailabilityZone"]
            if zone != host.zone:
                raise ProvisionError(
                    f"{host.name} ({instance['InstanceId']}) runs in {zone}, the spec places it "
                    f"in {host.zone}: restore the zone order in the spec, or terminate the "
                    "instance so `up` recreates it")
            continue
        yield Change("create", "instance", host.name, f"{host.instance_type} in {host.zone}")
        if not dry_run:
            seen.instances[host.name] = _run_instance(client, spec, host, ids)
            created.append(seen.instances[host.name]["InstanceId"])
    pending = [i["InstanceId"] for i in seen.instances.values() if i["State"]["Name"] == "pending"]
    if not dry_run and (created or pending):
        _wait(client, "instance_running", waiter_delay, InstanceIds=sorted(set(created + pending)))

    yield from _volumes(client, spec, seen, hosts, dry_run=dry_run, waiter_delay=waiter_delay)
    yield from _inventory_tags(client, spec, seen, hosts, dry_run=dry_run)


def _run_instance(client: Any, spec: Spec, host: Host, ids: Mapping[str, str]) -> dict[str, Any]:
    response = client.run_instances(
        ImageId=spec.image, InstanceType=host.instance_type, KeyName=spec.key_pair,
        MinCount=1, MaxCount=1, SubnetId=spec.zone(host.zone).subnet,
        SecurityGroupIds=[ids[SECURITY_ROLE[host.group]]],
        MetadataOptions=METADATA_OPTIONS,
        TagSpecifications=tag_spec(spec, "instance", host.group, host.name,
                                   {"kafkaform:zone": host.zone}))
    instance: dict[str, Any] = response["Instances"][0]
    return instance


def _volumes(client: Any, spec: Spec, seen: Observed, hosts: Iterable[Host], *, dry_run: bool,
             waiter_delay: int) -> Iterable[Change]:
    planned = [(host, v) for host in hosts for v in inventory.volumes(spec, host)]
    created = []
    for host, volume in planned:
        if volume.id in seen.volumes:
            continue
        yield Change("create", "volume", volume.id,
                     f"{volume.type} {volume.size_gb} GiB in {host.zone}")
        if dry_run:
            continue
        params: dict[str, Any] = {"AvailabilityZone": host.zone, "Size": volume.size_gb,
                                  "VolumeType": volume.type, "Encrypted": True}
        if spec.kms_key_id is not None:
            params["KmsKeyId"] = spec.kms_key_id
        if volume.iops is not None:
            params["Iops"] = volume.iops
        if volume.throughput_mbps is not None:
            params["Throughput"] = volume.throughput_mbps
        made = client.create_volume(TagSpecifications=tag_spec(
            spec, "volume", host.group, volume.id, {HOST_TAG: host.name}), **params)
        seen.volumes[volume.id] = made
        created.append(made["VolumeId"])
    creating = [v["VolumeId"] for v in seen.volumes.values() if v["State"] == "creating"]
    if not dry_run and (created or creating):
        _wait(client, "volume_available", waiter_delay, VolumeIds=sorted(set(created + creating)))

    attached = []
    for host, volume in planned:
        found = seen.volumes.get(volume.id)
        instance = seen.instances.get(host.name)
        instance_id = instance["InstanceId"] if instance else None
        attachments = (found or {}).get("Attachments", [])
        if any(a["InstanceId"] == instance_id and a["State"] in ("attaching", "attached")
               for a in attachments) and instance_id is not None:
            continue
        if found is not None and any(a["State"] in ("attaching", "attached")
                                     for a in attachments):
            raise ProvisionError(
                f"volume {volume.id} ({found['VolumeId']}) is attached to "
                f"{attachments[0]['InstanceId']}, not to {host.name}: detach it by hand")
        yield Change("attach", "volume", volume.id, f"to {host.name} as {volume.attach_device}")
        if dry_run or found is None or instance_id is None:
            continue
        client.attach_volume(Device=volume.attach_device, InstanceId=instance_id,
                             VolumeId=found["VolumeId"])
        attached.append(found["VolumeId"])
    if attached:
        _wait(client, "volume_in_use", waiter_delay, VolumeIds=attached)


def _inventory_tags(client: Any, spec: Spec, seen: Observed, hosts: Iterable[Host], *,
                    dry_run: bool) -> Iterable[Change]:
    """Each instance's inventory tags (ids, data disks) as the spec and its volumes say, so a
    dynamic inventory (``kafkaform cloud inventory --dynamic``) finds what ``hosts.yml`` holds."""
    ids = volume_ids(seen)
    for host in hosts:
        instance = seen.instances.get(host.name)
        if instance is None:
            continue
        have = {k: v for k, v in tags_of(instance).items() if inventory.is_inventory_tag(k)}
        want = inventory.instance_tags(spec, host, ids)
        stale = sorted(set(have) - set(want))
        differ = {k: v for k, v in want.items() if have.get(k) != v}
        if not differ and not stale:
            continue
        yield Change("tag", "instance", host.name, ", ".join(sorted([*differ, *stale])))
        if dry_run:
            continue
        if differ:
            client.create_tags(Resources=[instance["InstanceId"]],
                               Tags=[{"Key": k, "Value": v} for k, v in differ.items()])
        if stale:
            client.delete_tags(Resources=[instance["InstanceId"]],
                               Tags=[{"Key": k} for k in stale])
        kept = {k: v for k, v in tags_of(instance).items() if k not in stale}
        instance["Tags"] = [{"Key": k, "Value": v} for k, v in {**kept, **differ}.items()]


def addresses(seen: Observed) -> dict[str, str]:
    """Each host's private IP address, by host name."""
    return {name: i["PrivateIpAddress"] for name, i in seen.instances.items()
            if i.get("PrivateIpAddress")}


def volume_ids(seen: Observed) -> dict[str, str]:
    return {name: v["VolumeId"] for name, v in seen.volumes.items()}


def new_brokers(spec: Spec, changes: Iterable[Change]) -> list[str]:
    """The brokers ``changes`` created beside brokers that were there already: a scale-out's
    (none for a new cluster, whose brokers all start empty together)."""
    brokers = [h.name for h in place(spec) if h.group == model.KAFKA_BROKER]
    created = {c.name for c in changes if (c.action, c.kind) == ("create", "instance")}
    joined = [name for name in brokers if name in created]
    return joined if len(joined) < len(brokers) else []


def missing_hosts(spec: Spec, seen: Observed) -> list[str]:
    return [h.name for h in place(spec) if h.name not in seen.instances]


def strays(spec: Spec, seen: Observed) -> list[str]:
    """Hosts carrying the cluster's tag that the spec no longer lists (``up`` leaves them)."""
    planned = {h.name for h in place(spec)}
    return [f"{name} ({i['InstanceId']}) carries the cluster's tag but the spec no longer lists "
            "it; `up` leaves it running: decommission it, then terminate it"
            for name, i in sorted(seen.instances.items()) if name not in planned]


def unencrypted_volumes(seen: Observed) -> list[str]:
    """Volumes carrying the cluster's tag that are not encrypted (``up`` keeps them: their data)."""
    return [f"volume {name} ({v['VolumeId']}) is not encrypted ({cite('SE-13')}); `up` keeps it, "
            "as replacing it would lose its data: copy the data onto an encrypted volume and swap "
            "it in by hand" for name, v in sorted(seen.volumes.items()) if not v.get("Encrypted")]


def imds_v1_instances(seen: Observed) -> list[str]:
    """Instances carrying the cluster's tag that still answer metadata requests without a token."""
    return [f"instance {name} ({i['InstanceId']}) does not require IMDSv2 tokens "
            f"({cite('SE-14')}); `up` leaves running instances alone: run aws ec2 "
            f"modify-instance-metadata-options --instance-id {i['InstanceId']} --http-tokens "
            "required" for name, i in sorted(seen.instances.items())
            if i.get("MetadataOptions", {}).get("HttpTokens") != "required"]


def warnings(spec: Spec, seen: Observed) -> list[str]:
    """What :func:`plan` and :func:`up` report but leave alone: strays and insecure resources."""
    return strays(spec, seen) + unencrypted_volumes(seen) + imds_v1_instances(seen)


def doomed(seen: Observed) -> list[Change]:
    """What :func:`down` deletes: everything found by the cluster tag."""
    changes = [Change("terminate", "instance", name, i["InstanceId"])
               for name, i in sorted(seen.instances.items())]
    changes += [Change("delete", "volume", name, v["VolumeId"])
                for name, v in sorted(seen.volumes.items())]
    changes += [Change("delete", "security group", name, sg["GroupId"])
                for name, sg in sorted(seen.groups.items())]
    return changes


def down(client: Any, spec: Spec, *, waiter_delay: int = 5) -> list[Change]:
    """Delete everything carrying the cluster's tag and wait until it is gone.

    + client: a boto3 EC2 client for the spec's region
    + spec: the cluster spec (only its name and region matter here)
    + waiter_delay: seconds between a waiter's polls

    Only resources tagged ``kafkaform:cluster=<name>`` are touched: the VPC, subnets and key pair
    come from the spec and stay. Order matters: instances go first (their volumes detach and
    their security groups fall out of use), then volumes, then the security groups after their
    rules that name each other are revoked.
    """
    seen = observe(client, spec, subnets=False)
    changes = doomed(seen)
    # Shutting-down instances still hold their security groups: wait for them too.
    dying = [i["InstanceId"] for r in paginate(client, "describe_instances", "Reservations",
                                               Filters=cluster_filter(spec))
             for i in r["Instances"] if i["State"]["Name"] == "shutting-down"]
    live = [i["InstanceId"] for i in seen.instances.values()]
    if live:
        client.terminate_instances(InstanceIds=live)
    if live or dying:
        _wait(client, "instance_terminated", waiter_delay, InstanceIds=live + dying)
    volumes = [v["VolumeId"] for v in seen.volumes.values()]
    if volumes:
        # Terminating an instance detaches its data volumes (DeleteOnTermination is false for
        # attached volumes); a volume attached elsewhere is not ours to force off.
        _wait(client, "volume_available", waiter_delay, VolumeIds=volumes)
        for volume_id in volumes:
            client.delete_volume(VolumeId=volume_id)
        _wait(client, "volume_deleted", waiter_delay, VolumeIds=volumes)
    ids = seen.group_ids()
    for role, sg in seen.groups.items():
        referring = [p for p in sg.get("IpPermissions", []) if p.get("UserIdGroupPairs")]
        if referring:
            client.revoke_security_group_ingress(GroupId=ids[role], IpPermissions=[
                {"IpProtocol": p["IpProtocol"], "FromPort": p.get("FromPort", 0),
                 "ToPort": p.get("ToPort", 0),
                 "UserIdGroupPairs": [{"GroupId": g["GroupId"]} for g in p["UserIdGroupPairs"]]}
                for p in referring])
    for group_id in ids.values():
        client.delete_security_group(GroupId=group_id)
    return changes
