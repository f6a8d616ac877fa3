# Managed by kafkaform (roles/kafka_broker/files/kafkaform_reassign.py); local edits are lost.
"""Replicas moved between brokers under a throttle (OP-06), by Kafka's own tools:
ReassignPartitionsCommand starts, watches and cancels the moves and sets and clears their
throttles; the admin client tells how many bytes are still to copy. ``kafkaform-kafka`` calls it
(reassign, reassign-wait, reassign-cancel), and ClusterTool unregisters a broker that left
(unregister); it sits beside ``kafkaform_tools.py``. A broker that leaves is cordoned first
(cordon, uncordon: KIP-1066's cordoned.log.dirs), so that no new replica is placed on it; the
brokers the moves name are uncordoned first, Kafka refusing a move that names a cordoned one.

The moves in flight are kept on the node that started them (root only): a run interrupted
mid-move finds them, waits for them (Kafka went on copying) and clears their throttles when they
are done; a run that gives up cancels them, which also clears the throttles. One helper at a
time starts, watches or cancels them (take_watch): the watcher an interrupted run left behind on
the node is stopped by the next.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from kafka.admin import ConfigResource, ConfigResourceType
from kafka.protocol.metadata import MetadataResponse
from kafkaform_admin import alter_broker_configs, disks, registered_brokers

REASSIGN = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
#: Kafka's cluster tool: unregisters a broker from a KRaft cluster's metadata.
CLUSTER_TOOL = "org.apache.kafka.tools.ClusterTool"
#: The moves in flight, in Kafka's reassignment format, and when the run gives them up.
MOVES = "/var/lib/kafkaform/kafka-reassignment.json"
DEADLINE = "/var/lib/kafkaform/kafka-reassignment.deadline"
#: Held (flock) by the one helper that starts, watches or cancels the moves, its pid inside. A
#: run interrupted mid-watch (its connection to the node cut) leaves that helper on the node; the
#: next one stops it (SIGTERM) before it watches: two watchers would clear, cancel and forget the
#: same moves under each other.
WATCHER = "/var/lib/kafkaform/kafka-reassignment.watcher"
#: How long a watcher left behind is given to stop before the next one gives up.
WATCHER_STOP_S = 30.0
#: ReassignPartitionsCommand --verify: one line per partition (exit 0 while any still moves),
#: and one per replica moving between a broker's log directories ("topic-partition-broker").
VERIFIED = re.compile(r"Reassignment of (?:partition|replica) (?P<partition>\S+) (?:is )?"
                      r"(?P<state>completed|still in progress)")
#: --verify of a partition whose move is over but not where it was sent: it was cancelled.
ABANDONED = re.compile(r"There is no active reassignment of partition (?P<partition>\S+), but "
                       r"replica set is (?P<now>\S+) rather than (?P<target>\S+?)\.?$", re.M)
#: --verify of a replica sent to another of its broker's log directories that is not moving
#: there: the move between directories was cancelled, or refused by the broker.
NOT_MOVED = re.compile(r"Partition (?P<partition>\S+) on broker (?P<broker>\d+) is not being "
                       r"moved from log dir (?P<now>\S+) to (?P<target>\S+?)\.?$", re.M)
#: --verify reads whether a move is in flight from the controller, and the replicas from a
#: broker, whose metadata may lag a move that just completed: a move is taken for cancelled only
#: when it still looks so after a few seconds.
ABANDONED_LOOKS = 3
ABANDONED_PAUSE_S = 2.0
#: How long the ingress is sampled before a move starts, to warn of a throttle below it.
INGRESS_SAMPLE_S = 5.0
MIB = 1024 * 1024


class Runs(Protocol):
    """What of kafkaform_tools.Tools the moves use."""

    bootstrap: str
    admin_config: str

    def admin(self) -> list[str]: ...

    def session(self) -> Any: ...

    def run(self, main_class: str, *args: str, check: bool = True) -> Any: ...


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with open(os.open(f"{path}.tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w",
              encoding="utf-8") as out:
        out.write(text)
    os.replace(f"{path}.tmp", path)


def _forget() -> None:
    for path in (MOVES, DEADLINE):
        if os.path.exists(path):
            os.remove(path)


def _is_helper(pid: int) -> bool:
    """Whether ``pid`` is a kafkaform-kafka process (not a pid reused by another program)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return b"kafkaform-kafka" in cmdline.read()
    except OSError:
        return False


def _stop(signum: int, frame: Any) -> None:  # pylint: disable=unused-argument
    raise SystemExit(f"kafkaform-kafka: stopped by signal {signum} (a newer run watches the "
                     "moves)")


def take_watch(path: str = WATCHER, stop_s: float = WATCHER_STOP_S,
               sleep: Callable[[float], None] = time.sleep) -> int:
    """Become the one helper that acts on the moves: a helper an interrupted run left doing so
    is sent SIGTERM (its Kafka tool killed with it) and waited for. The lock is held until this
    process exits; the file descriptor is returned."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    waited = 0.0
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            text = os.pread(fd, 32, 0).decode(errors="replace").strip()
            if text.isdigit() and int(text) != os.getpid() and _is_helper(int(text)):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(text), signal.SIGTERM)
            if waited >= stop_s:
                os.close(fd)
                raise SystemExit(f"kafkaform-kafka: another helper (pid {text or '?'}) acts on "
                                 f"the moves and did not stop in {stop_s:.0f}s ({path})") from None
            sleep(0.5)
            waited += 0.5
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    signal.signal(signal.SIGTERM, _stop)  # subprocess.run kills the tool it waits for
    return fd


def in_flight() -> dict[str, Any]:
    """The moves this helper started that are still in flight (Kafka's reassignment format's
    partitions), asking no one: what the gate before a rerun's moves takes into account."""
    if not os.path.exists(MOVES):
        return {"in_flight": []}
    with open(MOVES, encoding="utf-8") as file:
        return {"in_flight": list(json.load(file).get("partitions", []))}


def sizes(tools: Runs, topics: Sequence[str] = (),
          brokers: Sequence[int] = ()) -> dict[tuple[int, str], int] | None:
    """Each replica's bytes on disk, by (broker, "topic-partition"), future logs (a move between
    a broker's directories) included, of the ``topics`` (every one when none) on the
    ``brokers`` (every registered one when none), asked by the admin client as
    kafkaform_admin.disks asks; None when a broker did not answer (the sizes only tell what is
    left: the moves go on)."""
    found: dict[tuple[int, str], int] = {}
    with tools.session() as session:
        admin = session.admin
        for broker in [int(b) for b in brokers] or [
                int(b) for b in registered_brokers(admin.describe_cluster())[1]]:
            each: dict[tuple[str, int], int] = {}
            if not disks(admin, broker, each)["log_dirs"]:
                return None
            found.update({(broker, f"{topic}-{number}"): size for (topic, number), size
                          in each.items() if not topics or topic in topics})
    return found


def bytes_left(moves: Mapping[str, Any], moving: Sequence[str],
               found: Mapping[tuple[int, str], int] | None) -> int | None:
    """Bytes the new replicas of the partitions still ``moving`` lack: each target replica's gap
    to the partition's largest copy (its leader's, near enough); None when the sizes are not
    known."""
    if found is None:
        return None
    left = 0
    for part in moves.get("partitions", []):
        name = f"{part['topic']}-{part['partition']}"
        if name not in moving:
            continue
        copies = {b: size for (b, p), size in found.items() if p == name}
        full = max(copies.values(), default=0)
        left += sum(max(full - copies.get(int(b), 0), 0) for b in part["replicas"])
    return left


def ingress_per_broker(tools: Runs, sleep: Callable[[float], None] = time.sleep,
                       clock: Callable[[], float] = time.monotonic) -> dict[int, float]:
    """Bytes per second each broker's logs grew by over a few seconds: what it takes in from
    producers and from the leaders it follows."""
    start, before = clock(), sizes(tools)
    sleep(INGRESS_SAMPLE_S)
    after, took = sizes(tools), max(clock() - start, 1e-3)
    if before is None or after is None:
        return {}  # not measured: no warning rather than no move
    grown: dict[int, float] = {}
    for (broker, part), size in after.items():
        grown[broker] = grown.get(broker, 0.0) + max(size - before.get((broker, part), size), 0)
    return {broker: total / took for broker, total in grown.items()}


def throttle_warning(throttle: int, ingress: Mapping[int, float]) -> str:
    """A warning when a broker takes in more than the throttle lets a new replica copy: its moves
    would then never catch up (OP-06)."""
    busy = {b: rate for b, rate in ingress.items() if rate > throttle}
    if not busy:
        return ""
    worst = max(busy, key=lambda b: busy[b])
    return (f"the reassignment throttle, {throttle / MIB:.1f} MiB/s, is below what broker "
            f"{worst} takes in now ({busy[worst] / MIB:.1f} MiB/s): its new replicas may never "
            "catch up. Raise kafka_broker_reassignment_throttle_mb_s above the brokers' "
            "ingress, or move while the load is lower (OP-06)")


def start(tools: Runs, moves: Mapping[str, Any], throttle: int, timeout_s: float,
          clock: Callable[[], float] = time.time,
          ingress: Callable[[Runs], Mapping[int, float]] = ingress_per_broker) -> dict[str, Any]:
    """Start the ``moves`` (Kafka's reassignment format) with every broker's replication
    throttled to ``throttle`` bytes per second; given up (cancelled) after ``timeout_s``.
    Refuses while moves this helper started are still in flight: wait for them first."""
    partitions = list(moves.get("partitions", []))
    if os.path.exists(MOVES):
        raise SystemExit("kafkaform-kafka: reassign: moves started earlier are still in flight "
                         f"({MOVES}): run reassign-wait until they are done, or reassign-cancel")
    if not partitions:
        return {"started": 0, "warning": ""}
    warning = throttle_warning(throttle, ingress(tools))
    _write(DEADLINE, str(clock() + timeout_s))  # first: the moves are never kept without it
    _write(MOVES, json.dumps({"version": 1, "partitions": partitions}))
    tools.run(REASSIGN, *tools.admin(), "--reassignment-json-file", MOVES, "--execute",
              "--throttle", str(throttle), "--replica-alter-log-dirs-throttle", str(throttle))
    return {"started": len(partitions), "warning": warning}


#: Kafka's tools on moves whose topic was deleted since they started.
GONE_TOPIC = re.compile(r"The topic '(?P<topic>[^']+)' does not exist")


def _reassign(tools: Runs, *args: str) -> str:
    """ReassignPartitionsCommand on the moves in flight; the partitions of a topic deleted since
    they started are dropped from them (Kafka refuses the whole call for one), then asked
    again."""
    while True:
        with open(MOVES, encoding="utf-8") as file:
            moves = json.load(file)
        if not moves["partitions"]:
            return ""
        result = tools.run(REASSIGN, *tools.admin(), "--reassignment-json-file", MOVES, *args,
                           check=False)
        said = result.stdout + result.stderr
        gone = GONE_TOPIC.search(said)
        if result.returncode == 0:
            return str(result.stdout)
        if gone is None:
            sys.stderr.write(said)
            raise SystemExit(f"kafkaform-kafka: {REASSIGN} {args[0]} exited {result.returncode}")
        kept = [p for p in moves["partitions"] if p["topic"] != gone["topic"]]
        if len(kept) == len(moves["partitions"]):
            raise SystemExit(f"kafkaform-kafka: {said.strip()}")
        _write(MOVES, json.dumps({**moves, "partitions": kept}))


def moving(tools: Runs, preserve_throttles: bool,
           sleep: Callable[[float], None] = time.sleep) -> list[str]:
    """The partitions of the moves in flight that still move (--verify); without
    ``preserve_throttles`` a --verify that finds every move done clears the throttles."""
    for look in range(ABANDONED_LOOKS):
        out = _reassign(tools, "--verify",
                        *(["--preserve-throttles"] if preserve_throttles else []))
        abandoned = [f"{m['partition']} on {m['now']}, not {m['target']}"
                     for m in ABANDONED.finditer(out)] + [
            f"{m['partition']} on broker {m['broker']} in {m['now']}, not {m['target']}"
            for m in NOT_MOVED.finditer(out)]
        if not abandoned:
            break
        if look + 1 < ABANDONED_LOOKS:
            sleep(ABANDONED_PAUSE_S)
    else:
        raise SystemExit("kafkaform-kafka: reassign-wait: moves were cancelled outside this run "
                         f"({'; '.join(abandoned[:5])}): no broker may leave on them. Run again "
                         "to plan the moves anew (OP-06)")
    states = {m["partition"]: m["state"] for m in VERIFIED.finditer(out)}
    if not states and out == "":
        return []  # every topic moved was deleted since: nothing left to move
    if not states:
        raise SystemExit(f"kafkaform-kafka: reassign-wait: --verify named no partition:\n{out}")
    return sorted(p for p, state in states.items() if state != "completed")


def cancel(tools: Runs) -> dict[str, Any]:
    """Cancel the moves in flight (each partition back to its replicas before) and clear their
    throttles; nothing in flight: nothing to do."""
    if not os.path.exists(MOVES):
        return {"cancelled": 0}
    with open(MOVES, encoding="utf-8") as moves:
        count = len(json.load(moves).get("partitions", []))
    _reassign(tools, "--cancel")
    _forget()
    return {"cancelled": count}


def dry_run_answer(moves: Mapping[str, Any], still: Sequence[str],
                   left: int | None) -> dict[str, Any]:
    """What a dry run's one look at the moves in flight reports: those a real run would wait
    for (and then clear their throttles), "in_flight" their target replicas, which a dry run
    takes as done (kafkaform.plans.broker_moves); nothing changed."""
    total = len(moves.get("partitions", []))
    copy = "" if not still else ", bytes left unknown (a broker did not say)" if left is None \
        else f", {left / MIB:.1f} MiB left to copy"
    said = (f"{len(still)} of {total} partitions an interrupted run moves are still moving{copy}:"
            " a real run waits for them, then clears their throttles") if still else (
        f"the {total} partition moves an interrupted run left are done: a real run clears "
        "their throttles")
    return {"done": not still, "dry_run": True, "partitions": total,
            "partitions_left": len(still), "bytes_left": 0 if not still else left,
            "in_flight": list(moves.get("partitions", [])),
            "said": f"{said} (dry run: nothing changed)"}


def _look(tools: Runs, moves: Mapping[str, Any], deadline: float, now: float,
          sleep: Callable[[float], None]) -> dict[str, Any]:
    """A dry run's one look (--verify keeping the throttles): nothing cancelled, cleared or
    forgotten; what a real run would stop on still stops it."""
    try:
        still = moving(tools, preserve_throttles=True, sleep=sleep)
    except SystemExit as error:
        raise SystemExit(f"{error} (dry run: nothing was cancelled)") from None
    if still and now >= deadline:
        raise SystemExit(f"kafkaform-kafka: reassign-wait: {len(still)} partitions were still "
                         "moving past the deadline: a real run cancels them, clears their "
                         "throttles and stops (dry run: nothing was cancelled, OP-06)")
    topics = sorted({p["topic"] for p in moves.get("partitions", [])})
    brokers = sorted({int(b) for p in moves.get("partitions", []) for b in p["replicas"]})
    left = bytes_left(moves, still, sizes(tools, topics, brokers)) if still else 0
    return dry_run_answer(moves, still, left)


def wait(tools: Runs, for_s: float, poll_s: float = 5.0,
         sleep: Callable[[float], None] = time.sleep,
         clock: Callable[[], float] = time.time, dry_run: bool = False) -> dict[str, Any]:
    """Watch the moves in flight for up to ``for_s`` seconds: done (throttles cleared) or what is
    left, in partitions and bytes, and ``said`` in words. Past the deadline ``start`` set, or
    found cancelled by someone else, cancel them (throttles cleared) and stop with what to do.
    ``dry_run``: one look, nothing changed (:func:`dry_run_answer`)."""
    if not os.path.exists(MOVES):
        return {"done": True, "partitions_left": 0, "bytes_left": 0, "partitions": 0,
                "in_flight": []}
    with open(MOVES, encoding="utf-8") as file:
        moves = json.load(file)
    with open(DEADLINE, encoding="utf-8") as file:
        deadline = float(file.read().strip())
    if dry_run:
        return _look(tools, moves, deadline, clock(), sleep)
    total = len(moves.get("partitions", []))
    until = clock() + for_s
    while True:
        try:
            still = moving(tools, preserve_throttles=True, sleep=sleep)
        except SystemExit:
            cancel(tools)  # what is left of them, and their throttles
            raise
        if not still:
            moving(tools, preserve_throttles=False)  # clears the throttles
            _forget()
            return {"done": True, "partitions_left": 0, "bytes_left": 0, "partitions": total}
        if clock() >= deadline:
            cancel(tools)
            raise SystemExit(
                f"kafkaform-kafka: reassign-wait: {len(still)} of {total} partitions were still "
                f"moving at the deadline ({', '.join(still[:5])}{' ...' if len(still) > 5 else ''})"
                ": the moves were cancelled and their throttles cleared, no replica was lost. "
                "Raise kafka_broker_reassignment_throttle_mb_s or "
                "kafka_broker_reassignment_timeout_s and run again (OP-06)")
        if clock() + poll_s > until:
            topics = sorted({p["topic"] for p in moves.get("partitions", [])})
            brokers = sorted({int(b) for p in moves.get("partitions", []) for b in p["replicas"]})
            # A replica moving between its broker's log directories ("topic-partition-broker")
            # copies on that broker alone: what is left is its count (OP-11).
            between = [p for p in still if p not in {f"{m['topic']}-{m['partition']}"
                                                     for m in moves.get("partitions", [])}]
            left = None if between else bytes_left(moves, still, sizes(tools, topics, brokers))
            copy = (f"{len(between)} replica(s) still moving between log directories"
                    if between else "bytes left unknown (a broker did not say)" if left is None
                    else f"{left / MIB:.1f} MiB left to copy")
            return {"done": False, "partitions_left": len(still), "partitions": total,
                    "bytes_left": left,
                    "said": f"{len(still)} of {total} partitions still moving, {copy}"}
        sleep(poll_s)


def unregister(tools: Runs, ids: Sequence[str]) -> dict[str, Any]:
    """KRaft: remove the registrations of the stopped brokers ``ids`` (decommissioned, OP-05),
    each once: an id already gone is not an error."""
    gone = []
    for broker in ids:
        result = tools.run(CLUSTER_TOOL, "unregister", "--bootstrap-server", tools.bootstrap,
                           "--config", tools.admin_config, "--id", broker, check=False)
        if result.returncode == 0:
            gone.append(broker)
        elif "BrokerIdNotRegistered" not in result.stdout + result.stderr:
            sys.stderr.write(result.stdout + result.stderr)
            raise SystemExit(f"kafkaform-kafka: unregister: broker {broker} was not removed")
    return {"unregistered": gone}


# --- cordons (KIP-1066, OP-08) ----------------------------------------------------------------

#: A broker's dynamic config that keeps new replicas (new topics, added partitions) off its log
#: directories ("*": all of them) while it serves on. Kafka also refuses a reassignment whose
#: replicas include it ("all its log directories are cordoned", 4.4.0): the moves uncordon the
#: brokers they name first (kafkaform.plans.cordon).
CORDONED = "cordoned.log.dirs"
#: The brokers this helper cordoned (root only): once a broker is gone, Kafka answers its
#: configs to nobody (a broker describes only its own, a controller only its own), so whether
#: an uncordon removed anything is known from here.
CORDONS = "/var/lib/kafkaform/kafka-cordoned.json"


def _cordons() -> list[str]:
    if not os.path.exists(CORDONS):
        return []
    with open(CORDONS, encoding="utf-8") as file:
        return [str(i) for i in json.load(file)]


def _cordon_values(admin: Any, ids: Sequence[str]) -> dict[str, str | None]:
    """Each running broker's own dynamic cordoned.log.dirs (None: not set), asked of it."""
    found = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, i) for i in ids])
    return {i: found.get("broker", {}).get(i, {}).get(CORDONED, {}).get("value") for i in ids}


def cordon(admin: Any, ids: Sequence[str], dry_run: bool) -> dict[str, Any]:
    """Cordon every log directory of the brokers ``ids``; {"cordoned": the ids whose value
    changed (or would, with ``dry_run``)}. Each broker is asked (Kafka sends a broker's configs
    to that broker), so only a running one is cordoned: a stopped broker gets no new replica."""
    now = {i: _running_value(admin, i) for i in ids}
    changed = [i for i in ids if now[i][0] and now[i][1] != "*"]
    if changed and not dry_run:
        _write(CORDONS, json.dumps(sorted(set(_cordons()) | set(changed))))  # first: never lost
        for broker in changed:
            alter_broker_configs(admin, broker, {CORDONED: "*"})
    return {"cordoned": changed}


def _altered_on(admin: Any, node: str, resource: Any) -> str:
    """One incremental alter of ``resource`` sent to the node ``node`` names (kafka-python
    would send a broker's configs to that broker): "OK", or the error it answered."""
    manager = admin._manager  # pylint: disable=protected-access
    request = admin._alter_configs_request([resource], False, True)  # pylint: disable=protected-access

    async def send() -> Any:
        return await manager.send(request, node_id=node)

    answer = admin._alter_configs_process_responses(  # pylint: disable=protected-access
        manager.run(send).responses)
    return str(answer.get("broker", {}).get(resource.name))


def _delete_on_controller(admin: Any, controllers: Sequence[str], broker: str) -> bool:
    """Delete a stopped broker's cordon on the active controller (alter_on_controller)."""
    return alter_on_controller(admin, controllers, broker, {CORDONED: None}, "uncordon")


def alter_on_controller(admin: Any, controllers: Sequence[str], broker: str,
                        changes: Mapping[str, Any], what: str) -> bool:
    """Set (a value) or delete (None) a stopped broker's dynamic configs on the active
    controller, the only node that takes them then: a broker alters only its own configs, and
    kafka-python's alter_configs sends a broker's configs to that broker. A controller that is
    not active refuses, the next is asked. False when the broker is not registered: Kafka then
    refuses any config of it (a broker that registers again under its id is uncordoned by the
    scale-out)."""
    cluster, refused = admin._manager.cluster, []  # pylint: disable=protected-access
    resource = ConfigResource(ConfigResourceType.BROKER, broker, configs={
        key: ("DELETE", None) if value is None else str(value) for key, value in changes.items()})
    for address in controllers:
        host, port = address.rsplit(":", 1)
        node = f"kafkaform-controller-{address}"
        cluster._coordinator_brokers[node] = (  # pylint: disable=protected-access
            MetadataResponse.MetadataResponseBroker(node, host, int(port), None))
        try:
            said = _altered_on(admin, node, resource)
        except Exception as error:  # pylint: disable=broad-exception-caught
            said = repr(error)  # a controller that is down: ask the next
        if said == "OK" or "BrokerIdNotRegistered" in said:
            return said == "OK"
        refused.append(f"{address}: {said}")
    raise SystemExit(f"kafkaform-kafka: {what}: no controller changed broker {broker}'s "
                     f"{', '.join(sorted(changes))} ({'; '.join(refused)})")


def _running_value(admin: Any, broker: str) -> tuple[bool, str | None]:
    """Whether ``broker`` answers (it runs), and its cordon if it does."""
    try:
        return True, _cordon_values(admin, [broker])[broker]
    except Exception:  # pylint: disable=broad-exception-caught
        return False, None  # stopped: not in the metadata, or its listener closed


def uncordon(admin: Any, controllers: Sequence[str], ids: Sequence[str],
             dry_run: bool) -> dict[str, Any]:
    """Delete the cordon of the brokers ``ids`` (a broker id used again must take new replicas):
    a running broker's is read and deleted on it; a stopped broker's is deleted on the active
    controller while it is still registered, and reported changed when this helper had set it.
    {"uncordoned": ids}."""
    ours, changed = _cordons(), []
    for broker in ids:
        running, now = _running_value(admin, broker)
        if running and now is not None:
            if not dry_run:
                alter_broker_configs(admin, broker, {CORDONED: None})
            changed.append(broker)
        elif not running and (dry_run or _delete_on_controller(admin, controllers, broker)) \
                and broker in ours:
            changed.append(broker)
    if set(ids) & set(ours) and not dry_run:
        _write(CORDONS, json.dumps(sorted(set(ours) - set(ids))))
    return {"uncordoned": changed}
