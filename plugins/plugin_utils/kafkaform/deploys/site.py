"""The platform in the order of ``playbooks/site.yml``, as pyinfra deploys.

    pyinfra @kafkaform/inventory/lab kafkaform.deploys.site.site
    pyinfra @kafkaform/inventory/lab kafkaform.deploys.site.kafka   # ZooKeeper or the KRaft
                                                                    # controllers, then the brokers
    pyinfra @kafkaform/inventory/lab kafkaform.deploys.site.spark   # Spark, then the pipeline
"""

from __future__ import annotations

from pyinfra.api.deploy import deploy
from pyinfra.operations import server

from .kafka_broker import kafka_broker, kafka_controller
from .os_tuning import os_tuning
from .spark_node import spark_node
from .spark_pipeline import before_spark_nodes, spark_pipeline
from .zookeeper import zookeeper


def barrier(after: str) -> None:
    """One operation every host reaches at the same point, with nothing to run (so it changes
    nothing): pyinfra orders each host's operations on its own and runs the hosts' chains side
    by side, so without it a broker's first operations would run beside a member's, and the
    broker could start, and wait for a healthy cluster, before the ensemble it needs runs. The
    playbooks run one play after the other."""
    server.shell(name=f"Wait for {after} on every host", commands=[])


@deploy("kafka: ZooKeeper, the KRaft controllers, then the brokers")
def kafka() -> None:
    """playbooks/zookeeper.yml, playbooks/kafka_controller.yml, then playbooks/kafka_broker.yml."""
    zookeeper()
    barrier("the ZooKeeper ensemble")
    kafka_controller()
    barrier("the KRaft controllers")
    kafka_broker()


@deploy("spark: the Spark nodes, then the pipeline")
def spark() -> None:
    """playbooks/spark_node.yml, then playbooks/pipeline.yml."""
    before_spark_nodes()
    barrier("the pipeline's checkpoints checked, and the job stopped if its release changes")
    spark_node()
    spark_pipeline()


@deploy("site")
def site() -> None:
    """playbooks/site.yml: OS tuning, ZooKeeper, the KRaft controllers, the brokers, the Spark
    nodes, the pipeline."""
    os_tuning()
    kafka()
    spark()
