"""Spark and the pipeline: one master, a shared directory, the pipeline's sources and its
executors' fit on the workers."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from .. import model
from ..defaults import role_default
from ..model import InventoryView, as_int
from ..rules import cite
from .finding import Finding


def spark_needs_master(view: InventoryView) -> Iterator[Finding]:
    workers = view.members(model.SPARK_WORKER)
    if workers and not view.members(model.SPARK_MASTER):
        yield Finding(cite("SP-01"), "Spark workers have no master to register with",
                      "add a host to the spark_master group", tuple(workers))


def spark_nodes(view: InventoryView) -> list[str]:
    seen = dict.fromkeys(view.members(model.SPARK_MASTER) + view.members(model.SPARK_WORKER))
    return list(seen)


def spark_single_master(view: InventoryView) -> Iterator[Finding]:
    masters = view.members(model.SPARK_MASTER)
    if len(masters) > 1:
        yield Finding(cite("SP-06"),
                      f"the spark_master group has {len(masters)} hosts; kafkaform runs "
                      "one standalone master, which survives restarts through its recovery "
                      "state (spark_node_master_recovery_mode)",
                      "keep one host in spark_master", tuple(masters))


def spark_shared_dir(view: InventoryView) -> Iterator[Finding]:
    """Driver and executors write one sink: every Spark node names the same shared directory."""
    nodes = spark_nodes(view)
    values: dict[str, list[str]] = defaultdict(list)
    for host in nodes:
        values[str(view.var(host, "spark_node_shared_dir",
                            role_default("spark_node_shared_dir")))].append(host)
    for path, hosts in values.items():
        if not path.startswith("/") or path.rstrip("/") in ("", "/tmp", "/var/tmp"):
            yield Finding(cite("SP-07"),
                          f"spark_node_shared_dir is {path!r}", "set it to the absolute "
                          "path where a shared filesystem is mounted on every Spark node "
                          "(not / or a temporary directory)", tuple(hosts))
    if len(values) > 1:
        shown = "; ".join(f"{p} on {', '.join(h[:3])}" for p, h in values.items())
        yield Finding(cite("SP-07"),
                      f"spark_node_shared_dir differs between Spark nodes ({shown}), so "
                      "the driver and the executors would write to different places",
                      "set spark_node_shared_dir once, in group_vars/all", tuple(nodes))


def pipeline_sources(view: InventoryView) -> Iterator[Finding]:
    masters = view.members(model.SPARK_MASTER)
    if not masters:
        return
    brokers = view.members(model.KAFKA_BROKER)
    if len(brokers) < 2:
        yield Finding(cite("CL-08"), f"the pipeline on {masters[0]} needs at least two bootstrap "
                      f"brokers and the kafka_broker group has {len(brokers)}",
                      "add brokers to the kafka_broker group (3 or more in production)",
                      tuple(masters))
    topic = str(view.var(masters[0], "spark_pipeline_topic",
                         role_default("spark_pipeline_topic")))
    declared = {str(t.get("name")) for host in brokers
                for t in (view.var(host, "kafka_topics", []) or []) if isinstance(t, dict)}
    if brokers and topic not in declared:
        yield Finding(cite("SP-08"),
                      f"the pipeline reads topic {topic}, which kafka_topics does not "
                      "declare", f"declare {topic} in kafka_topics (partitions, replication "
                      "factor), or create it before the pipeline starts", tuple(masters),
                      "warning")


def pipeline_executor_fits(view: InventoryView) -> Iterator[Finding]:
    """SP-11, when every worker's offer is set: one that derives its cores or memory from its
    host (0) may fit, and the run checks that the job got executors."""
    masters, workers = view.members(model.SPARK_MASTER), view.members(model.SPARK_WORKER)
    if not masters or not workers:
        return

    def setting(host: str, name: str) -> int | None:
        return as_int(view.var(host, name, role_default(name)))

    cores = setting(masters[0], "spark_pipeline_executor_cores")
    memory = setting(masters[0], "spark_pipeline_executor_memory_mb")
    if cores is None or memory is None:
        return  # role_inputs reports a malformed value
    offers: dict[str, tuple[int, int]] = {}
    for worker in workers:
        worker_cores = setting(worker, "spark_node_worker_cores")
        worker_memory = setting(worker, "spark_node_worker_memory_mb")
        if not worker_cores or not worker_memory:
            return  # derived from the host (0), or malformed: role_inputs reports that
        offers[worker] = (worker_cores, worker_memory)
    if not any(c >= cores and m >= memory for c, m in offers.values()):
        shown = ", ".join(f"{w}: {c} core{'' if c == 1 else 's'}, {m} MB"
                          for w, (c, m) in offers.items())
        yield Finding(cite("SP-11"),
                      f"an executor of the pipeline on {masters[0]} takes "
                      f"spark_pipeline_executor_cores {cores} and spark_pipeline_executor_"
                      f"memory_mb {memory}, and no worker offers that ({shown})",
                      "lower spark_pipeline_executor_cores or spark_pipeline_executor_memory_mb, "
                      "or raise spark_node_worker_cores or spark_node_worker_memory_mb",
                      (masters[0], *workers))
