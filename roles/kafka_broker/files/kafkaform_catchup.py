# Managed by kafkaform (roles/kafka_broker/files/kafkaform_catchup.py); local edits are lost.
"""A replaced broker's catch-up under a throttle (OP-09): a new, empty host that takes a dead
broker's id copies every replica that id holds back from the leaders, and without a throttle it
copies as fast as the leaders' disks and network allow. ``kafkaform-kafka`` calls it
(catch-up-throttle, catch-up-wait, catch-up-clear); it sits beside ``kafkaform_reassign.py``.

Kafka's throttle is two halves, both needed for a replica to be throttled:
- the topic configs ``leader.replication.throttled.replicas`` and
  ``follower.replication.throttled.replicas``, lists of ``partition:brokerId``: here, for every
  partition the replaced broker holds, the follower entry of that broker and a leader entry of
  every other replica (any of them may lead it);
- the per-broker dynamic configs ``leader.replication.throttled.rate`` (on those other brokers)
  and ``follower.replication.throttled.rate`` (on the replaced broker's id). They live in the
  cluster's metadata, so a rate set on the id before the new host starts applies as soon as it
  registers. A broker alters only its own configs, so a stopped broker's rate is set on the
  active controller (KRaft), or in ZooKeeper by Kafka's ConfigCommand, which takes a broker's
  configs there only while it is not running (ZooKeeper mode).
Kafka throttles only replicas out of sync: the in-sync followers of the same partitions are not.

What was set is kept on the node that set it (root only), written before it is set: a rerun
after an interruption finds it, and the clear removes exactly those entries and rates, leaving
any an operator set by hand.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kafka.admin import ConfigResource, ConfigResourceType
from kafkaform_admin import (
    alter_broker_configs,
    alter_configs,
    disks,
    partitions,
    registered_brokers,
)
from kafkaform_reassign import MIB, alter_on_controller, ingress_per_broker, throttle_warning
from kafkaform_tools import config_command

#: What this helper set, to clear it (and the run's deadline).
STATE = "/var/lib/kafkaform/kafka-catchup.json"
LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"
LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
#: How often catch-up-wait looks, in seconds.
POLL_S = 5.0


def throttle_lists(parts: Iterable[Mapping[str, Any]],
                   ids: Iterable[int]) -> dict[str, dict[str, list[str]]]:
    """By topic, the throttled-replicas entries that throttle the catch-up of the brokers
    ``ids``: the follower entry of each of their replicas, a leader entry for every other
    replica of the same partition."""
    catching = {int(i) for i in ids}
    found: dict[str, dict[str, list[str]]] = {}
    for part in parts:
        replicas = [int(r) for r in part["replicas"]]
        ours = [r for r in replicas if r in catching]
        if not ours:
            continue
        entries = found.setdefault(str(part["topic"]), {LEADER_REPLICAS: [], FOLLOWER_REPLICAS: []})
        entries[LEADER_REPLICAS] += [f"{part['partition']}:{r}" for r in replicas
                                     if r not in catching]
        entries[FOLLOWER_REPLICAS] += [f"{part['partition']}:{r}" for r in ours]
    return {topic: {key: sorted(set(v), key=_entry_key) for key, v in lists.items()}
            for topic, lists in sorted(found.items())}


def _entry_key(entry: str) -> tuple[int, int]:
    partition, _colon, broker = entry.partition(":")
    return int(partition), int(broker)


def _entries(value: str | None) -> list[str]:
    return [e.strip() for e in (value or "").split(",") if e.strip()]


def merged(value: str | None, ours: Sequence[str]) -> str | None:
    """The throttled-replicas value with ``ours`` added (None: already there, or ``*``, which
    throttles every replica already)."""
    now = _entries(value)
    if "*" in now or set(ours) <= set(now):
        return None
    return ",".join(now + [e for e in ours if e not in now])


def without(value: str | None, ours: Sequence[str]) -> str | None:
    """The throttled-replicas value with ``ours`` taken out ("": nothing left, delete it; None:
    none of ours is there)."""
    now = _entries(value)
    if not set(ours) & set(now):
        return None
    return ",".join(e for e in now if e not in ours)


def _state() -> dict[str, Any]:
    if not os.path.exists(STATE):
        return {"topics": {}, "brokers": {}}
    with open(STATE, encoding="utf-8") as file:
        return dict(json.load(file))


def _save(state: Mapping[str, Any]) -> None:
    os.makedirs(os.path.dirname(STATE), mode=0o700, exist_ok=True)
    with open(os.open(f"{STATE}.tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w",
              encoding="utf-8") as out:
        out.write(json.dumps(state, sort_keys=True))
    os.replace(f"{STATE}.tmp", STATE)


def _topic_values(admin: Any, topics: Sequence[str]) -> dict[str, dict[str, str | None]]:
    found = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, t) for t in topics],
                                   config_filter="all").get("topic", {}) if topics else {}
    return {t: {key: (found.get(t, {}).get(key) or {}).get("value")
                for key in (LEADER_REPLICAS, FOLLOWER_REPLICAS)} for t in topics}


def _rate_of(admin: Any, broker: str, key: str) -> str | None:
    found = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, broker)])
    return (found.get("broker", {}).get(broker, {}).get(key) or {}).get("value")


class Cluster:
    """How this helper reaches a broker's rate: a running broker's through the admin client
    (sent to that broker), a stopped one's on the active controller (KRaft) or in ZooKeeper by
    ConfigCommand (``zk_config``: the tool's argv less the change; ZooKeeper mode)."""

    def __init__(self, admin: Any, controllers: Sequence[str],
                 zk_config: Callable[[str, list[str]], None] | None) -> None:
        self.admin = admin
        self.controllers = [c for c in controllers if c]
        self.zk_config = zk_config
        self.running = set(registered_brokers(admin.describe_cluster())[1])

    def set_rate(self, broker: str, key: str, value: int | None) -> bool:
        """Set (or delete: None) ``key`` on ``broker``; False when Kafka knows no such broker
        (KRaft: not registered), so the rate could not be set before it starts."""
        if broker in self.running:
            alter_broker_configs(self.admin, broker, {key: value})
            return True
        if self.controllers:
            return alter_on_controller(self.admin, self.controllers, broker, {key: value},
                                       "catch-up")
        if self.zk_config is None:
            return False
        self.zk_config(broker, ["--add-config", f"{key}={value}"] if value is not None
                       else ["--delete-config", key])
        return True


def throttle(cluster: Cluster, ids: Sequence[str], rate: int, timeout_s: float, dry_run: bool,
             ingress: Callable[[], Mapping[int, float]] | None = None,
             clock: Callable[[], float] = time.time) -> dict[str, Any]:
    """Throttle the catch-up of the brokers ``ids`` to ``rate`` bytes per second (OP-09):
    {"changed": what was (or, with ``dry_run``, would be) set, "warning": a throttle below what
    a broker takes in now, "notes"}. What it sets is recorded first, with the run's deadline."""
    admin, state = cluster.admin, _state()
    lists = throttle_lists(partitions(admin), map(int, ids))
    now = _topic_values(admin, sorted(lists))
    topic_changes = {topic: {key: value for key in (LEADER_REPLICAS, FOLLOWER_REPLICAS)
                             if (value := merged(now[topic][key], entries[key])) is not None}
                     for topic, entries in lists.items()}
    topic_changes = {t: c for t, c in topic_changes.items() if c}
    leaders = sorted({e.split(":")[1] for e in (x for entries in lists.values()
                                                for x in entries[LEADER_REPLICAS])}, key=int)
    wanted = [(b, LEADER_RATE) for b in leaders] + [(str(i), FOLLOWER_RATE) for i in ids]
    recorded = {(b, k) for b, keys in state.get("brokers", {}).items() for k in keys}
    rate_changes = [(b, k) for b, k in wanted if (
        _rate_of(admin, b, k) != str(rate) if b in cluster.running else (b, k) not in recorded)]
    changed = [f"{t} {k}" for t, c in sorted(topic_changes.items()) for k in sorted(c)]
    changed += [f"broker {b} {k}={rate}" for b, k in rate_changes]
    warning = throttle_warning(rate, ingress()) if ingress is not None and changed else ""
    if dry_run or not changed:
        return {"changed": changed, "warning": warning, "notes": []}
    for topic, entries in lists.items():  # recorded before it is set: never lost
        kept = state["topics"].setdefault(topic, {})
        for key, values in entries.items():
            kept[key] = sorted(set(kept.get(key, [])) | set(values), key=_entry_key)
    for broker, key in wanted:
        state["brokers"][broker] = sorted(set(state["brokers"].get(broker, [])) | {key})
    state.update(ids=sorted(set(state.get("ids", [])) | set(ids), key=int), rate=rate,
                 deadline=state.get("deadline") or clock() + timeout_s)
    _save(state)
    for topic, changes in sorted(topic_changes.items()):
        alter_configs(admin, ConfigResourceType.TOPIC, topic, changes)
    notes = []
    for broker, key in rate_changes:
        if not cluster.set_rate(broker, key, rate):
            notes.append(f"broker {broker} is not registered with the controllers, so its {key} "
                         "could not be set before it starts: the leaders' throttle alone limits "
                         "its catch-up (OP-09)")
    return {"changed": changed, "warning": warning, "notes": notes}


def clear(cluster: Cluster, dry_run: bool) -> dict[str, Any]:
    """Remove every throttle entry and rate this helper set (kept in STATE), leaving those it
    did not: {"cleared": what was (or would be) removed}. Nothing recorded: nothing to do."""
    state = _state()
    if not state.get("topics") and not state.get("brokers"):
        return {"cleared": []}
    admin, cleared = cluster.admin, []
    existing = set(admin.list_topics())
    topics = sorted(t for t in state["topics"] if t in existing)
    now = _topic_values(admin, topics)
    for topic in topics:
        changes = {key: (value or None) for key, ours in sorted(state["topics"][topic].items())
                   if (value := without(now[topic][key], ours)) is not None}
        if changes:
            cleared += [f"{topic} {key}" for key in changes]
            if not dry_run:
                alter_configs(admin, ConfigResourceType.TOPIC, topic, changes)
    for broker, keys in sorted(state["brokers"].items(), key=lambda item: int(item[0])):
        for key in keys:
            cleared.append(f"broker {broker} {key}")
            if not dry_run:
                cluster.set_rate(broker, key, None)
    if not dry_run:
        os.remove(STATE)
    return {"cleared": cleared}


def _sizes(admin: Any, brokers: Iterable[int]) -> dict[tuple[int, str, int], int]:
    """Each replica's bytes on the brokers that answer, by (broker, topic, partition): the
    largest of its copies in the broker's log directories, as kafkaform_admin reads them."""
    found: dict[tuple[int, str, int], int] = {}
    for broker in brokers:
        each: dict[tuple[str, int], int] = {}
        disks(admin, broker, each)  # a broker that does not answer (not running yet) adds none
        found.update({(broker, topic, number): size for (topic, number), size in each.items()})
    return found


def progress(admin: Any, ids: Sequence[str]) -> dict[str, Any]:
    """Where the catch-up of the brokers ``ids`` stands: done when each is registered and in
    the in-sync replicas of every partition it holds; else the partitions not in sync yet and
    the bytes they lack (each leader's size less the copy's), and ``said`` in words."""
    catching = {int(i) for i in ids}
    registered = set(registered_brokers(admin.describe_cluster())[1])
    hosted = [p for p in partitions(admin) if catching & set(p["replicas"])]
    behind = [p for p in hosted if catching & set(p["replicas"]) - set(p["isr"])]
    missing = sorted(i for i in map(str, catching) if i not in registered)
    leaders = {int(p["leader"]) for p in behind if int(p["leader"]) >= 0}
    sizes = _sizes(admin, sorted(catching | leaders))
    left = sum(max(sizes.get((int(p["leader"]), p["topic"], p["partition"]), 0)
                   - sizes.get((i, p["topic"], p["partition"]), 0), 0)
               for p in behind for i in catching & set(p["replicas"]) - set(p["isr"]))
    done = not missing and not behind
    said = (f"broker(s) {', '.join(map(str, sorted(catching)))} in sync on all "
            f"{len(hosted)} partitions" if done else
            f"{len(behind)} of {len(hosted)} partitions not in sync yet, {left / MIB:.1f} MiB "
            "left to copy" + (f"; broker(s) {', '.join(missing)} not registered yet"
                              if missing else ""))
    return {"done": done, "partitions": len(hosted), "partitions_left": len(behind),
            "bytes_left": left, "unregistered": missing, "said": said,
            "behind": [f"{p['topic']}-{p['partition']}" for p in behind[:10]]}


def wait(admin: Any, ids: Sequence[str], for_s: float, sleep: Callable[[float], None] = time.sleep,
         clock: Callable[[], float] = time.time) -> dict[str, Any]:
    """Watch the catch-up for up to ``for_s`` seconds: done, or where it stands. Past the
    deadline catch-up-throttle recorded, stop (the run then clears the throttles) and say what
    to do."""
    deadline = _state().get("deadline")
    until = clock() + for_s
    while True:
        found = progress(admin, ids)
        if found["done"]:
            return found
        if deadline is not None and clock() >= float(deadline):
            raise SystemExit(
                f"kafkaform-kafka: catch-up-wait: {found['said']} at the deadline "
                f"({', '.join(found['behind'])}): the replaced broker keeps copying, now "
                "unthrottled once the run clears the throttles. Raise "
                "kafka_broker_reassignment_throttle_mb_s or kafka_broker_reassignment_timeout_s "
                "and run again (OP-09)")
        if clock() + POLL_S > until:
            return found
        sleep(POLL_S)


def cluster_of(tools: Any) -> Cluster:
    """The cluster as ``tools`` (kafkaform_tools.Tools) reaches it: the admin client, the
    controllers (KRaft), else ZooKeeper through Kafka's ConfigCommand."""
    connect = tools.server.get("zookeeper.connect", "")
    command = config_command(tools.args.libs)

    def zk_config(broker: str, change: list[str]) -> None:
        tools.run(command, "--zookeeper", connect, *tools.zk_tls("--zk-tls-config-file"),
                  "--entity-type", "brokers", "--entity-name", broker, "--alter", *change)

    return Cluster(tools.session().admin, tools.controllers.split(","),
                   zk_config if connect and not tools.controllers else None)


def measured_ingress(tools: Any) -> Callable[[], Mapping[int, float]]:
    """What each broker takes in now, sampled by kafkaform_reassign (its warning's input)."""
    return lambda: ingress_per_broker(tools)


def commands(tools: Any, ids: Sequence[str], args: Any) -> dict[str, Callable[[], int]]:
    """kafkaform-kafka's catch-up commands, each printing its JSON answer."""
    def say(found: Mapping[str, Any]) -> int:
        print(json.dumps(found), flush=True)
        return 0

    return {
        "catch-up-throttle": lambda: say(throttle(cluster_of(tools), ids, args.throttle,
                                                  args.timeout, args.dry_run,
                                                  measured_ingress(tools))),
        "catch-up-wait": lambda: say(wait(tools.session().admin, ids, args.for_s)),
        "catch-up-clear": lambda: say(clear(cluster_of(tools), args.dry_run)),
    }
