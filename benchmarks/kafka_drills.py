"""No-loss drills and restart timings for the Kafka brokers of a podman inventory (MO-15, OP-02,
OP-03).

    .venv/bin/python benchmarks/kafka_drills.py -i <inventory> [--drill roll|resume|rotate|...]
        [--engine ansible|pyinfra]

Runs Kafka's own VerifiableProducer (``acks=all``, idempotence on, retries unbounded) on one
broker host while the action happens, stops it with SIGTERM, reads the topic back from the
beginning with the ConsoleConsumer and prints the counts:

+ roll: ``playbooks/rolling_restart.yml`` under load; every acknowledged message must be read back
  exactly once (the producer is idempotent).
+ resume: the state a run leaves when it is stopped right after writing server.properties (the
  file newer than the running broker), then ``playbooks/kafka_broker.yml`` under load (or, with
  ``--engine pyinfra``, the deploy ``kafkaform.deploys.kafka_broker.kafka_broker``): it must
  restart every broker, one at a time, though it writes nothing; no acknowledged message lost.
+ rotate: a rotation of the cluster CA (``playbooks/rotate_tls.yml``: trust, reissue, finish) under
  load; every acknowledged message must be read back exactly once, at the end every broker
  presents a certificate of the new CA (the final read trusts it alone), every Kafka node (the
  KRaft controllers too) trusts that CA alone. No broker and no ZooKeeper member restarts in
  ZooKeeper mode (each loads its new material while it runs); then one follower restarted on the
  new material must rejoin the quorum, which it does only if the leader reloaded both. In KRaft
  mode every node rolls, as a node's connections to the quorum keep the material they started
  with. Java clients read their trust store at start, so
  each step's producer starts after the step before, as the README asks of operators' clients.
+ secure: a cluster an earlier release built open (plaintext, anonymous ZooKeeper) secured in
  place by the three runs of kafka_security_migration under load; every acknowledged message must
  be read back exactly once.
+ secure-zookeeper: the ZooKeeper ensemble of a cluster an earlier release secured without TLS
  on it, moved onto mutual TLS in place by the three runs of kafka_zookeeper_tls_migration under
  load; no acknowledged message may be lost, every member ends requiring TLS and every broker
  connects to it over TLS.
+ migrate: a ZooKeeper-mode cluster migrated to KRaft by ``playbooks/kraft_migration.yml`` under
  load (the inventory declares its controllers and kafka_cluster_id): up to the soak point, the
  brokers into KRaft, finalization, each phase timed; no acknowledged message lost.
+ rollback: the same cluster taken to the soak point, then back to ZooKeeper mode by
  ``playbooks/kraft_rollback.yml`` under load: every broker runs in ZooKeeper mode again, no
  controller runs, no acknowledged message lost.
+ kill: SIGKILL of one broker's JVM under load (systemd restarts it); no acknowledged message may be
  lost.
+ time: each broker restarted alone, timed until the cluster is healthy again (restart plus
  catch-up), against one rolling restart of all of them: the ratio roll / sum.

The producer writes 50 messages a second by default (``--throughput``): on the TLS and SASL
listeners every acknowledged write costs the lab about 4 ms of CPU (producer, leader, follower),
so 200 a second kept one of the machine's 2 cores busy for as long as a drill ran, and the suite
runs its drills beside other scenarios. 50 a second still writes to each of a drill's 6
partitions about every 120 ms through every restart; the earlier BENCHMARKS.md rows ran 200.

Bounded: each drill produces for at most ``--seconds`` after its action and every wait has a
timeout. Hosts are the inventory's ``kafka_broker`` group, reached with ``podman exec``.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _podman
import _zookeeper
from _podman import main_pids

from kafkaform import exec_channel, jvm, model
from kafkaform.checks import host_inputs
from kafkaform.contexts.kafka_broker import kafka_broker_context
from kafkaform.inventory import load as load_inventory

ROOT = Path(__file__).resolve().parents[1]
JAVA = "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"
# The release directory the install symlink points to when the tool starts: a tool running while
# an upgrade flips the symlink keeps loading its own jars.
CP = "$(readlink -f /opt/kafkaform/kafka)/libs/*"
# The admin client configuration each broker carries (kafka_broker role): TLS as the brokers.
ADMIN_CONFIG = "/etc/kafka/admin-client.properties"
# The trust bundle each broker carries (kafka_broker_tls_dir): one CA, two during a rotation.
TRUST = "/etc/kafka/tls/trust.pem"
# Kafka's tools as the helper starts them: C1 only, the serial collector, a small heap.
TOOL_JVM = " ".join(jvm.KAFKA_TOOL)
SERVER_PROPERTIES = "/etc/kafka/server.properties"
# Clients of the securing drill: a plaintext one, and one with the broker's certificate over the
# BROKER listener (secured_admin_client).
PLAINTEXT_CONFIG = "/tmp/kf-drill-plaintext.properties"
TLS_CONFIG = "/tmp/kf-drill-tls.properties"
PRODUCER_CONFIG = ("acks=all\nenable.idempotence=true\nretries=2147483647\n"
                   "max.in.flight.requests.per.connection=5\ndelivery.timeout.ms=300000\n")


def sh(container: str, command: str, check: bool = True, timeout: float = 600) -> str:
    return _podman.sh(container, command, timeout=timeout, check=check)


def inventory_list(inventory: str) -> dict[str, Any]:
    """The inventory as ``ansible-inventory --list`` gives it: groups, and hostvars under _meta."""
    listed: dict[str, Any] = json.loads(subprocess.run(
        ["ansible-inventory", "-i", inventory, "--list"], capture_output=True, text=True,
        check=True).stdout)
    return listed


def brokers(inventory: str) -> tuple[list[str], str, list[int]]:
    data = inventory_list(inventory)
    hosts = data["kafka_broker"]["hosts"]
    hostvars = data["_meta"]["hostvars"]
    # The BROKER listener, where the admin client configuration (the brokers' own certificate)
    # authenticates the tools.
    boot = ",".join(f"{h}:{hostvars[h].get('kafka_broker_internal_port', 9091)}" for h in hosts)
    return hosts, boot, [int(hostvars[h]["kafka_broker_id"]) for h in hosts]


def kafka_nodes(data: dict[str, Any]) -> list[str]:
    """Every Kafka node of an inventory's data: the KRaft controllers (none in ZooKeeper mode),
    then the brokers."""
    return [*data.get("kafka_controller", {}).get("hosts", []), *data["kafka_broker"]["hosts"]]


def healthy(container: str, boot: str, ids: list[int]) -> bool:
    return exec_channel.run(container, ["/usr/local/sbin/kafkaform-kafka", "--bootstrap", boot,
                                        "health", "--ids", ",".join(map(str, ids))],
                            timeout=300).returncode == 0


def wait_until(container: str, boot: str, ids: list[int], *, passing: bool, timeout: float,
               poll: float) -> float | None:
    """Seconds until the health check first passes (``passing``) or fails (not ``passing``),
    checked again every ``poll`` seconds; None when it did not within ``timeout``."""
    start = time.monotonic()
    while healthy(container, boot, ids) != passing:
        if time.monotonic() - start > timeout:
            return None
        time.sleep(poll)
    return time.monotonic() - start


def wait_healthy(container: str, boot: str, ids: list[int], timeout: float = 300) -> float:
    took = wait_until(container, boot, ids, passing=True, timeout=timeout, poll=1)
    if took is None:
        raise RuntimeError("cluster not healthy within the timeout")
    return took


def create_topic(container: str, boot: str, topic: str, config: str = ADMIN_CONFIG) -> None:
    """The drill's topic: 6 partitions, 3 replicas, or one per broker on a smaller cluster."""
    replicas = min(3, len(boot.split(",")))
    sh(container, f"{JAVA} {TOOL_JVM} -cp \"{CP}\" org.apache.kafka.tools.TopicCommand "
                  f"--bootstrap-server {boot} --command-config {config} "
                  f"--create --topic {topic} --partitions 6 "
                  f"--replication-factor {replicas}")


def start_producer(container: str, boot: str, topic: str, throughput: int,
                   prefix: int = 0, config: str = ADMIN_CONFIG) -> str:
    """Start a producer whose values carry ``prefix`` (several may write one topic); return the
    name stop_producer takes."""
    run = f"{topic}.{prefix}"
    sh(container, f"(cat {config}; printf '{PRODUCER_CONFIG}') > /tmp/{run}.properties; "
                  f"nohup {JAVA} {TOOL_JVM} -cp \"{CP}\" org.apache.kafka.tools.VerifiableProducer "
                  f"--topic {topic} --bootstrap-server {boot} --max-messages -1 "
                  f"--value-prefix {prefix} "
                  f"--throughput {throughput} --producer.config /tmp/{run}.properties "
                  f"> /tmp/{run}.producer 2>/dev/null & echo $! > /tmp/{run}.pid")
    return run


def stop_producer(container: str, run: str) -> list[dict[str, Any]]:
    sh(container, f"kill -TERM $(cat /tmp/{run}.pid); "
                  f"while kill -0 $(cat /tmp/{run}.pid) 2>/dev/null; do sleep 1; done")
    out = sh(container, f"cat /tmp/{run}.producer")
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def record_count(container: str, boot: str, topic: str, config: str) -> int | None:
    """How many records the topic holds: its partitions' end offsets added up (a drill's topic
    starts empty and is never compacted or trimmed while it runs). None when the tool failed."""
    out = sh(container, f"{JAVA} {TOOL_JVM} -cp \"{CP}\" org.apache.kafka.tools.GetOffsetShell "
                        f"--bootstrap-server {boot} --command-config {config} "
                        f"--topic {topic} --time -1 2>/dev/null", check=False)
    # topic:partition:offset lines; --topic is a regular expression, so keep this topic's only.
    offsets = [line.rsplit(":", 1)[-1] for line in out.splitlines()
               if line.rsplit(":", 2)[0] == topic]
    return sum(map(int, offsets)) if offsets and all(o.isdigit() for o in offsets) else None


def _console_consume(container: str, boot: str, topic: str, config: str, limit: str) -> list[str]:
    out = sh(container, f"{JAVA} {TOOL_JVM} -cp \"{CP}\" "
                        "org.apache.kafka.tools.consumer.ConsoleConsumer "
                        f"--bootstrap-server {boot} --consumer.config {config} "
                        f"--topic {topic} --from-beginning {limit}"
                        "--timeout-ms 20000 2>/dev/null", check=False)
    return out.split()


def consume(container: str, boot: str, topic: str, expected: set[str],
            config: str = ADMIN_CONFIG) -> list[str]:
    """Every value the topic holds. The consumer stops at the topic's record count instead of
    waiting out its 20 s idle timeout; it reads again to the timeout only when a value of
    ``expected`` is missing, which a high watermark moving during the first read can cause."""
    total = record_count(container, boot, topic, config)
    if total:
        values = _console_consume(container, boot, topic, config, f"--max-messages {total} ")
        if expected <= set(values):
            return values
    return _console_consume(container, boot, topic, config, "")


def acked(events: list[dict[str, Any]]) -> list[str]:
    """The values the producer's events report acknowledged."""
    return [e["value"] for e in events if e.get("name") == "producer_send_success"]


def read_back(name: str, events: list[dict[str, Any]], container: str, boot: str, topic: str,
              exactly_once: bool, config: str = ADMIN_CONFIG) -> bool:
    """Read the topic back on ``container`` and judge it against the producer's ``events``: every
    acknowledged value there (and, with ``exactly_once``, once); print the count."""
    values = acked(events)
    consumed = consume(container, boot, topic, set(values), config)
    errors = [e for e in events if e.get("name") == "producer_send_error"]
    counts = Counter(consumed)
    lost = set(values) - set(counts)
    duplicated = [v for v in values if counts[v] > 1]
    ok = not lost and (not duplicated or not exactly_once) and len(values) > 0
    print(f"{name}: acked {len(values)}, send errors {len(errors)}, consumed {len(consumed)}, "
          f"lost {len(lost)}, duplicated {len(duplicated)} -> {'PASS' if ok else 'FAIL'}")
    return ok


def under_load(inventory: str, name: str, action: Any, seconds: float, exactly_once: bool,
               throughput: int, report: Any = None) -> bool:
    """Run ``action(hosts, boot, ids)`` under load; it returns False when it failed itself.
    ``report(events)``, when given, reads the producer's events before the count."""
    hosts, boot, ids = brokers(inventory)
    client = hosts[-1]
    topic = f"kf.drill-{name}-{int(time.time())}"
    create_topic(client, boot, topic)
    wait_healthy(client, boot, ids)
    run = start_producer(client, boot, topic, throughput)
    time.sleep(5)
    acted = action(hosts, boot, ids) is not False
    time.sleep(seconds)
    events = stop_producer(client, run)
    if report is not None:
        report(events)
    return read_back(name, events, client, boot, topic, exactly_once) and acted


def scheduled_latencies(events: list[dict[str, Any]], throughput: int) -> list[tuple[float, float]]:
    """(ack time, latency) of each acknowledged write, in seconds. VerifiableProducer's throttle
    schedules its write i at start + i / throughput and catches up after a stall, and its value
    ends in i; latency counts from that schedule, so a write held back by a stall counts the
    whole stall (no coordinated omission), as a client writing at a steady rate sees it."""
    start = next((e["timestamp"] / 1000 for e in events if e.get("name") == "startup_complete"),
                 None)
    if start is None:
        return []
    return [(e["timestamp"] / 1000,
             e["timestamp"] / 1000 - start - int(str(e["value"]).rsplit(".", 1)[-1]) / throughput)
            for e in events if e.get("name") == "producer_send_success"]


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile of ``values`` (not empty)."""
    ranked = sorted(values)
    return ranked[max(math.ceil(fraction * len(ranked)) - 1, 0)]


def phase_report(label: str, events: list[dict[str, Any]], start: float, end: float,
                 throughput: int) -> str:
    """Acknowledged writes per second within [start, end] (epoch seconds), the longest wait
    between two of them (the producer sends at a fixed rate, so a stall shows as a gap), and
    the produce latency's p50 and p99 of the writes acknowledged within it."""
    acks = sorted(t for e in events if e.get("name") == "producer_send_success"
                  and start <= (t := e["timestamp"] / 1000) <= end)
    gaps = [b - a for a, b in zip([start, *acks], [*acks, end], strict=True)]
    latencies = [late for acked, late in scheduled_latencies(events, throughput)
                 if start <= acked <= end]
    latency = (f", latency p50 {percentile(latencies, 0.5) * 1000:.0f} ms "
               f"p99 {percentile(latencies, 0.99) * 1000:.0f} ms" if latencies else "")
    return (f"{label}: {end - start:.1f} s, {len(acks) / max(end - start, 1e-9):.0f} acked/s, "
            f"longest wait for an ack {max(gaps):.2f} s{latency}")


def phases_under_load(inventory: str, name: str, phases: list[tuple[str, Callable[[], float]]],
                      seconds: float, throughput: int, check: Any = None) -> bool:
    """Run each (label, run) in turn under one producer, with ``seconds``
    of steady state before and after; print each phase's time, acknowledged rate and longest
    wait against the steady state's, then the no-loss count. ``check(hosts)`` judges the end."""
    windows: list[tuple[str, float]] = []

    def run_phases(hosts: list[str], boot: str, ids: list[int]) -> bool:
        windows.append(("steady state before", time.time()))
        time.sleep(seconds)
        for label, run in phases:
            windows.append((label, time.time()))
            run()
        windows.append(("steady state after", time.time()))
        return bool(check(hosts)) if check is not None else True

    def report(events: list[dict[str, Any]]) -> None:
        ends = [start for _, start in windows[1:]] + [time.time()]
        for (label, start), end in zip(windows, ends, strict=True):
            print(f"{name} phase {phase_report(label, events, start, end, throughput)}")

    return under_load(inventory, name, run_phases, seconds, False, throughput, report)


def playbook(inventory: str, name: str, *extra: str) -> float:
    """Run playbooks/``name``; return its duration in seconds."""
    start = time.monotonic()
    run = subprocess.run([str(Path(sys.executable).with_name("ansible-playbook")), "-i", inventory,
                          str(ROOT / "playbooks" / name), *extra], capture_output=True, text=True,
                         check=False, cwd=ROOT)
    if run.returncode != 0:
        print("\n".join((run.stdout + run.stderr).splitlines()[-60:]))  # why it failed
        run.check_returncode()
    return time.monotonic() - start


def deploy_brokers(inventory: str,
                   deploy: str = "kafkaform.deploys.kafka_broker.kafka_broker") -> float:
    """A pyinfra deploy (the kafka_broker one by default) on ``inventory``; return its duration
    in seconds."""
    start = time.monotonic()
    subprocess.run([str(Path(sys.executable).with_name("pyinfra")), "--yes",
                    f"@kafkaform/{inventory}", deploy],
                   check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return time.monotonic() - start


def rolling_restart(inventory: str) -> float:
    return playbook(inventory, "rolling_restart.yml")


def rotation_under_load(inventory: str, seconds: float, throughput: int) -> bool:
    hosts, boot, ids = brokers(inventory)
    client = hosts[-1]
    topic = f"kf.drill-rotate-{int(time.time())}"
    create_topic(client, boot, topic)
    wait_healthy(client, boot, ids)
    before = sh(client, f"sha256sum < {TRUST}")
    listed = inventory_list(inventory)
    nodes, members = kafka_nodes(listed), listed.get("zookeeper", {}).get("hosts", [])
    pids, member_pids = main_pids(nodes), main_pids(members, "zookeeper")
    events: list[dict[str, Any]] = []
    for prefix, step in enumerate(("trust", "reissue", "finish"), start=1):
        run = start_producer(client, boot, topic, throughput, prefix)
        time.sleep(5)
        took = playbook(inventory, "rotate_tls.yml", "-e", f"kafkaform_tls_rotation={step}")
        print(f"CA rotation step {step} under load: {took:.1f} s")
        time.sleep(seconds)
        events += stop_producer(client, run)
    ok = read_back("rotate", events, client, boot, topic, True)
    for node in nodes:  # the controllers' too: their listener is mutual TLS (KR-06)
        after = sh(node, f"grep -c 'BEGIN CERTIFICATE' {TRUST}; sha256sum < {TRUST}").split("\n")
        if after[0] != "1" or after[1] == before.strip():
            print(f"rotate: {node} does not trust exactly one, new, CA after the rotation -> FAIL")
            ok = False
    restarted = [host for host, pid in main_pids(nodes).items() if pid != pids[host]]
    print(f"rotate: Kafka nodes restarted: {len(restarted)} of {len(nodes)}")
    # A ZooKeeper-mode broker loads new material while it runs. In KRaft mode a node's
    # connections to the quorum keep the material they started with, so each step rolls them.
    expected = nodes if len(nodes) > len(hosts) else []
    if sorted(restarted) != sorted(expected):
        print(f"rotate: restarted {sorted(restarted)}, expected {sorted(expected)}: brokers in "
              "ZooKeeper mode load the new material running, KRaft nodes roll -> FAIL")
        ok = False
    if members:  # ZooKeeper reloads its keystore and trust bundle as it runs (SE-18)
        ok &= _zookeeper.after_rotation(listed, members, member_pids, client, TRUST)
    return ok


def secured_admin_client(inventory: str, host: str) -> str:
    """admin-client.properties as the kafka_broker role renders it on ``host`` once the cluster
    is secured (kafka_security_migration unset, as the inventory leaves it)."""
    view = load_inventory(inventory)
    settings = host_inputs(view, "kafka_broker", host)
    context = kafka_broker_context(model.build(view).to_dict(), host, settings)
    return str(context["admin_client_properties"]) + "\n"


def securing_under_load(inventory: str, seconds: float, throughput: int, playbook_name: str,
                        client_port: int) -> bool:
    """Secure a cluster built open in place (README, "Securing a cluster built open"): the three
    runs of ``playbook_name`` under load. The first two steps' producers are plaintext clients,
    as the cluster's own clients are until the last step; the last one's uses TLS."""
    hosts, _boot, _ids = brokers(inventory)
    client = hosts[-1]
    if "PLAINTEXT://" not in sh(client, f"grep ^listeners= {SERVER_PROPERTIES}"):
        print(f"secure: {client} serves no plaintext listener; build the cluster with an earlier "
              "release first -> FAIL")
        return False
    plaintext = ",".join(f"{h}:9092" for h in hosts)
    tls = ",".join(f"{h}:9091" for h in hosts)
    sh(client, f": > {PLAINTEXT_CONFIG}; cat > {TLS_CONFIG} <<'EOF'\n"
               f"{secured_admin_client(inventory, client)}EOF")
    topic = f"kf.drill-secure-{int(time.time())}"
    create_topic(client, plaintext, topic, PLAINTEXT_CONFIG)
    events: list[dict[str, Any]] = []
    for prefix, step in enumerate(("plaintext_replication", "tls_replication", ""), start=1):
        boot, config = (plaintext, PLAINTEXT_CONFIG) if step else (tls, TLS_CONFIG)
        run = start_producer(client, boot, topic, throughput, prefix, config)
        time.sleep(5)
        took = playbook(inventory, playbook_name, "-e", json.dumps(
            {"kafka_security_migration": step, "kafka_broker_port": client_port}))
        print(f"securing step {step or 'secured'} under load: {took:.1f} s")
        time.sleep(seconds)
        events += stop_producer(client, run)
    return read_back("secure", events, client, tls, topic, True, TLS_CONFIG)


def zookeeper_on_tls(inventory: str) -> bool:
    """Every member requires TLS on its quorum and serves clients on its secure port only from
    the network, and every broker holds its ZooKeeper session there (SE-18)."""
    data = inventory_list(inventory)
    members = data.get("zookeeper", {}).get("hosts", [])
    steps = {m: sh(m, "grep -E '^(sslQuorum|portUnification|clientPortAddress)=' "
                      "/etc/zookeeper/zoo.cfg", check=False).split() for m in members}
    required = [m for m, lines in steps.items() if sorted(lines) == [
        "clientPortAddress=127.0.0.1", "portUnification=false", "sslQuorum=true"]]
    hosts, _boot, _ids = brokers(inventory)
    on_tls = [h for h in hosts
              if "zookeeper.ssl.client.enable=true" in sh(h, f"cat {SERVER_PROPERTIES}")]
    print(f"members requiring TLS: {len(required)} of {len(members)}; brokers on TLS to "
          f"ZooKeeper: {len(on_tls)} of {len(hosts)}")
    return len(required) == len(members) > 0 and len(on_tls) == len(hosts)


def securing_zookeeper_under_load(inventory: str, seconds: float, throughput: int,
                                  playbook_name: str) -> bool:
    """Move the ZooKeeper ensemble of a cluster an earlier release secured (SASL, no TLS) onto
    mutual TLS in place: the three runs of ``playbook_name`` with kafka_zookeeper_tls_migration
    offered, connecting, then unset, under one producer on the brokers' TLS listener (README,
    "Securing a cluster built open")."""
    def step(value: str) -> Callable[[], float]:
        def run() -> float:
            took = playbook(inventory, playbook_name, "-e",
                            json.dumps({"kafka_zookeeper_tls_migration": value}))
            print(f"zookeeper tls step {value or 'required'}: {took:.1f} s")
            return took
        return run

    return phases_under_load(inventory, "secure-zookeeper",
                             [(f"kafka_zookeeper_tls_migration {v or 'unset'}", step(v))
                              for v in ("offered", "connecting", "")],
                             seconds, throughput,
                             check=lambda hosts: zookeeper_on_tls(inventory))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-i", "--inventory", required=True)
    # drills = resume, rotate and kill, the suite's; all = those, roll and time.
    parser.add_argument("--drill", choices=["roll", "resume", "rotate", "kill", "drills", "time",
                                            "all", "secure", "secure-zookeeper", "migrate",
                                            "rollback"],
                        default="all")
    # secure (never part of all: it needs a cluster an earlier release built open).
    parser.add_argument("--playbook", default="site.yml",
                        help="secure: the playbook each step runs")
    parser.add_argument("--client-port", type=int, default=9093,
                        help="secure: kafka_broker_port, the TLS client listener's new port")
    parser.add_argument("--engine", choices=["ansible", "pyinfra"], default="ansible",
                        help="resume: converge with the roles or the pyinfra deploys")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--throughput", type=int, default=50, help="messages a second")
    return parser


def roll_drill(args: argparse.Namespace) -> bool:
    def roll(hosts: list[str], boot: str, ids: list[int]) -> None:
        print(f"rolling restart under load: {rolling_restart(args.inventory):.1f} s")
    return under_load(args.inventory, "roll", roll, args.seconds, True, args.throughput)


def resume_drill(args: argparse.Namespace) -> bool:
    """A run after a change every broker must restart for, under load."""
    def resume(hosts: list[str], boot: str, ids: list[int]) -> bool:
        pids = main_pids(hosts)
        for host in hosts:
            sh(host, f"touch {SERVER_PROPERTIES}")
        took = (deploy_brokers(args.inventory) if args.engine == "pyinfra"
                else playbook(args.inventory, "kafka_broker.yml"))
        restarted = [host for host, pid in main_pids(hosts).items() if pid != pids[host]]
        print(f"resumed run ({args.engine}) under load: {took:.1f} s, brokers restarted: "
              f"{len(restarted)} of {len(hosts)}")
        if len(restarted) != len(hosts):
            print("resume: a broker older than its server.properties kept running -> FAIL")
        return len(restarted) == len(hosts)
    return under_load(args.inventory, "resume", resume, args.seconds, True, args.throughput)


def secure_drill(args: argparse.Namespace) -> bool:
    return securing_under_load(args.inventory, args.seconds, args.throughput, args.playbook,
                               args.client_port)


def secure_zookeeper_drill(args: argparse.Namespace) -> bool:
    # A cluster an earlier release secured without it.
    return securing_zookeeper_under_load(args.inventory, args.seconds, args.throughput,
                                         args.playbook)


def rollback_drill(args: argparse.Namespace) -> bool:
    """Never part of all: it needs a ZooKeeper-mode cluster."""
    def back_in_zookeeper_mode(hosts: list[str]) -> bool:
        modes = {host: sh(host, f"grep -c -E '^(process.roles|zookeeper.metadata.migration."
                                f"enable)=' {SERVER_PROPERTIES} || true").strip()
                 for host in hosts}
        back = all(count == "0" for count in modes.values())
        print(f"brokers in ZooKeeper mode after the rollback: {'all' if back else modes}")
        return back
    return phases_under_load(args.inventory, "rollback", [
        ("controllers and dual_write (to the soak point)",
         lambda: playbook(args.inventory, "kraft_migration.yml")),
        ("rollback to ZooKeeper mode", lambda: playbook(args.inventory, "kraft_rollback.yml")),
    ], args.seconds, args.throughput, back_in_zookeeper_mode)


def migrate_drill(args: argparse.Namespace) -> bool:
    """Never part of all: it needs a ZooKeeper-mode cluster to migrate."""
    return phases_under_load(args.inventory, "migrate", [
        ("controllers and dual_write (to the soak point)",
         lambda: playbook(args.inventory, "kraft_migration.yml")),
        ("kraft_brokers", lambda: playbook(args.inventory, "kraft_migration.yml",
                                           "-e", "kraft_migration_phase=kraft_brokers")),
        ("finalized", lambda: playbook(args.inventory, "kraft_migration.yml",
                                       "-e", "kraft_migration_finalize=true")),
    ], args.seconds, args.throughput)


def rotate_drill(args: argparse.Namespace) -> bool:
    return rotation_under_load(args.inventory, args.seconds, args.throughput)


def kill_drill(args: argparse.Namespace) -> bool:
    def kill(hosts: list[str], boot: str, ids: list[int]) -> None:
        start = time.monotonic()
        sh(hosts[0], "systemctl kill --signal=SIGKILL kafka")
        # A broker killed without notice stays registered until its ZooKeeper session (in
        # KRaft mode, its broker session) expires, and leads its partitions until then: None
        # when never seen unhealthy.
        noticed = wait_until(hosts[-1], boot, ids, passing=False, timeout=60, poll=0.5)
        wait_healthy(hosts[-1], boot, ids)
        seen = "never seen unhealthy" if noticed is None else f"unhealthy after {noticed:.1f} s"
        print(f"SIGKILL {hosts[0]}: {seen}, healthy again after "
              f"{time.monotonic() - start:.1f} s")
    return under_load(args.inventory, "kill", kill, args.seconds, False, args.throughput)


def time_drill(args: argparse.Namespace) -> bool:
    """Each broker restarted alone, then a rolling restart: timings only, it fails nothing."""
    hosts, boot, ids = brokers(args.inventory)
    singles = []
    for host in hosts:
        start = time.monotonic()
        sh(host, "systemctl restart kafka")
        wait_healthy(host, boot, ids)
        singles.append(time.monotonic() - start)
        print(f"single restart + catch-up {host}: {singles[-1]:.1f} s")
    rolled = rolling_restart(args.inventory)
    print(f"rolling restart of {len(hosts)} brokers: {rolled:.1f} s; sum of single restarts "
          f"{sum(singles):.1f} s; ratio {rolled / sum(singles):.2f}")
    return True


#: Each drill, in the order they run, with the --drill choices that run it.
DRILLS: tuple[tuple[tuple[str, ...], Callable[[argparse.Namespace], bool]], ...] = (
    (("roll", "all"), roll_drill),
    (("resume", "drills", "all"), resume_drill),
    (("secure",), secure_drill),
    (("secure-zookeeper",), secure_zookeeper_drill),
    (("rollback",), rollback_drill),
    (("migrate",), migrate_drill),
    (("rotate", "drills", "all"), rotate_drill),
    (("kill", "drills", "all"), kill_drill),
    (("time", "all"), time_drill),
)


def main() -> int:
    args = _parser().parse_args()
    ok = True
    for chosen_by, drill in DRILLS:
        if args.drill in chosen_by:
            ok &= drill(args)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
