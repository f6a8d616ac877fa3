"""The platform in the order of ``playbooks/site.yml``, as pyinfra deploys.

    pyinfra @kafkaform/inventory/lab kafkaform.deploys.site.site
    pyinfra @kafkaform/inventory/lab kafkaform.deploys.site.kafka   # ZooKeeper or the KRaft
                                                                    # controllers, then the brokers
    pyinfra @kafkaform/inventory/lab kafkaform.deploys.site.spark   # Spark, then the pipeline
"""

from __future__ import annotations

from pyinfra.api.deploy import deploy

from .kafka_broker import kafka_broker, kafka_controller
from .os_tuning import os_tuning
from .spark_node import spark_node
from .spark_pipeline import spark_pipeline
from .zookeeper import zookeeper


@deploy("kafka: ZooKeeper, the KRaft controllers, then the brokers")
def kafka() -> None:
    """playbooks/zookeeper.yml, playbooks/kafka_controller.yml, then playbooks/kafka_broker.yml."""
    zookeeper()
    kafka_controller()
    kafka_broker()


@deploy("spark: the Spark nodes, then the pipeline")
def spark() -> None:
    """playbooks/spark_node.yml, then playbooks/pipeline.yml."""
    spark_node()
    spark_pipeline()


@deploy("site")
def site() -> None:
    """playbooks/site.yml: OS tuning, ZooKeeper, the KRaft controllers, the brokers, the Spark
    nodes, the pipeline."""
    os_tuning()
    kafka()
    spark()
