"""The platform in the order of ``playbooks/site.yml``, as pyinfra deploys.

    pyinfra @kafkaform/inventory/lab kafkaform.deploys.site.site
    pyinfra @kafkaform/inventory/lab kafkaform.deploys.site.kafka   # ZooKeeper, then the brokers
"""

from __future__ import annotations

from pyinfra.api.deploy import deploy

from .kafka_broker import kafka_broker
from .os_tuning import kernel_and_limits
from .zookeeper import zookeeper


@deploy("kafka: ZooKeeper, then the brokers")
def kafka() -> None:
    """playbooks/zookeeper.yml, then playbooks/kafka_broker.yml."""
    zookeeper()
    kafka_broker()


@deploy("site")
def site() -> None:
    """playbooks/site.yml as far as pyinfra deploys it: OS tuning, ZooKeeper, the brokers."""
    kernel_and_limits()
    kafka()
