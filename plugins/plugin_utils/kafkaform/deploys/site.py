"""The platform in the order of ``playbooks/site.yml``, as pyinfra deploys.

    pyinfra @kafkaform/inventory/lab kafkaform.deploys.site.site
    pyinfra @kafkaform/inventory/lab kafkaform.deploys.site.kafka   # ZooKeeper, then the brokers
    pyinfra @kafkaform/inventory/lab kafkaform.deploys.site.spark   # Spark, then the pipeline
"""

from __future__ import annotations

from pyinfra.api.deploy import deploy
from pyinfra.api.exceptions import DeployError
from pyinfra.context import host

from ..defaults import setting
from . import os_tuning
from .base import role_settings
from .kafka_broker import kafka_broker
from .os_tuning import kernel_and_limits
from .spark_node import spark_node
from .spark_pipeline import spark_pipeline
from .zookeeper import zookeeper


@deploy("kafka: ZooKeeper, then the brokers")
def kafka() -> None:
    """playbooks/zookeeper.yml, then playbooks/kafka_broker.yml."""
    zookeeper()
    kafka_broker()


def _refuse_data_disks() -> None:
    """The data disks are the os_tuning role's alone so far: a site deploy that skipped them would
    leave the log directories on the root disk, so it stops before touching any host."""
    if not any(group in host.groups for group in os_tuning.GROUPS):
        return
    settings = role_settings(os_tuning.ROLE)
    if setting(settings, "os_tuning_disks_enabled") and setting(settings, "os_tuning_data_disks"):
        raise DeployError(
            f"{host.name}: os_tuning_data_disks declares data disks, which the pyinfra deploys do "
            "not format or mount yet. Fix: converge the disks and kernel settings with "
            "`ansible-playbook -i <inventory> playbooks/os_tuning.yml` (it never formats a disk "
            "holding a filesystem), and the rest with kafkaform.deploys.site.kafka")


@deploy("spark: the Spark nodes, then the pipeline")
def spark() -> None:
    """playbooks/spark_node.yml, then playbooks/pipeline.yml."""
    spark_node()
    spark_pipeline()


@deploy("site")
def site() -> None:
    """playbooks/site.yml: OS tuning, ZooKeeper, the brokers, the Spark nodes, the pipeline."""
    _refuse_data_disks()
    kernel_and_limits()
    kafka()
    spark()
