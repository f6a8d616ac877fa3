"""pyinfra's site and monitoring deploys against the roles' playbooks, pyinfra first (~9 min).

A fresh cluster (one ZooKeeper member, two brokers, a declared topic, SCRAM users and their ACLs,
a Spark master and worker sharing a directory, the pipeline running on them, and a monitoring
host scraping them all) converged by pyinfra passes `kafkaform verify` and must look converged
to the roles (`playbooks/site.yml` and `playbooks/monitoring.yml --check --diff`: 0 changed,
every managed file byte-identical). A broker setting changed through pyinfra rolls through the
brokers, each restarted once, health-gated, and nothing else restarts. Own podman network,
mirror and hosts (pyinfra-*), shaped like the lab's. Needs root, podman, the mirror (`kafkaform
mirror build`) and the lab image (`kafkaform lab image`). The other direction, a cluster
converged by Ansible then by pyinfra, runs in the kafka_broker and spark_pipeline molecule
scenarios.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kafkaform.catalog import CATALOG
from kafkaform.contexts.metrics import AGENT_DIR

from .test_pyinfra_os_tuning import ENV, IMAGE, run, wait_for_systemd

BIN = Path(sys.executable).parent
PREFIX = f"pyinfra-{os.getpid()}"
ZK, BROKERS, MIRROR, NETWORK = f"{PREFIX}-zk1", (f"{PREFIX}-k1", f"{PREFIX}-k2"), \
    f"{PREFIX}-mirror", PREFIX
MASTER, WORKER, SHARED = f"{PREFIX}-sm", f"{PREFIX}-sw", f"{PREFIX}-shared"
MONITOR = f"{PREFIX}-mon"
HOSTS = (ZK, *BROKERS, MASTER, WORKER, MONITOR)
CACHE = Path(os.environ.get("KAFKAFORM_CACHE") or "/var/cache/kafkaform")
DEPLOYS = ("kafkaform.deploys.site.site", "kafkaform.deploys.monitoring.monitoring")
PLAYBOOKS = ("playbooks/site.yml", "playbooks/monitoring.yml")
#: The service on each host whose start time tells a restart.
SERVICES = {ZK: ("zookeeper",), **{b: ("kafka",) for b in BROKERS},
            MASTER: ("spark-master", "kafkaform-pipeline"), WORKER: ("spark-worker",),
            MONITOR: ("prometheus", "prometheus-alertmanager")}
#: The JVMs' metrics agent, on every broker and member.
AGENT = f"{AGENT_DIR}/{CATALOG.jmx_exporter.file_name}"
#: The files the roles manage, per service, and the service whose start time tells a restart.
FILES = {
    "zookeeper": ("/var/lib/zookeeper/myid", "/etc/zookeeper/zoo.cfg", "/etc/zookeeper/jaas.conf",
                  "/etc/zookeeper/client-jaas.conf", "/etc/zookeeper/logback.xml",
                  "/etc/zookeeper/release", "/etc/systemd/system/zookeeper.service",
                  "/etc/systemd/system/zookeeper-purge.service",
                  "/etc/systemd/system/zookeeper-purge.timer", "/usr/local/sbin/zookeeper-4lw",
                  "/opt/kafkaform/zookeeper", "/etc/zookeeper/jmx-exporter.yml", AGENT),
    "kafka": ("/etc/kafka/server.properties", "/etc/kafka/log4j.properties", "/etc/kafka/release",
              "/etc/kafka/admin-client.properties", "/etc/kafka/tls/secrets.properties",
              "/etc/kafka/tls/trust.pem", "/etc/kafka/tls/keystore.p12",
              "/etc/kafka/kafka-jaas.conf", "/etc/systemd/system/kafka.service",
              "/usr/local/sbin/kafkaform-kafka", "/opt/kafkaform/kafka",
              "/etc/kafka/jmx-exporter.yml", AGENT),
    "spark": ("/etc/spark/spark-env.sh", "/etc/spark/spark-defaults.conf",
              "/etc/spark/log4j2.properties", "/etc/spark/release", "/etc/spark/tls/trust.pem",
              "/etc/spark/tls/keystore.p12", "/opt/kafkaform/spark",
              "/opt/kafkaform/spark-python/lib/python3.11/site-packages/spark-release.pth"),
    "spark-master": ("/etc/systemd/system/spark-master.service",
                     "/etc/kafkaform-pipeline/pipeline.properties",
                     "/etc/kafkaform-pipeline/trust.pem",
                     "/etc/kafkaform-pipeline/kafka-job.properties",
                     "/etc/kafkaform-pipeline/kafka-generator.properties",
                     "/etc/kafkaform-pipeline/kafka-audit.properties",
                     "/etc/systemd/system/kafkaform-pipeline.service",
                     "/usr/local/bin/kafkaform-pipeline",
                     "/opt/kafkaform/pipeline/kafkaform/__init__.py",
                     "/opt/kafkaform/pipeline/kafkaform/pipeline/job.py"),
    "spark-worker": ("/etc/systemd/system/spark-worker.service",),
    "monitoring": ("/etc/prometheus/prometheus.yml", "/etc/prometheus/rules/kafkaform.yml",
                   "/etc/prometheus/alertmanager.yml", "/etc/default/prometheus",
                   "/etc/default/prometheus-alertmanager",
                   "/etc/systemd/system/prometheus.service.d/kafkaform.conf",
                   "/etc/default/prometheus-node-exporter"),
}
#: The pipeline's Kafka users and the ACLs each needs (roles/spark_pipeline/defaults/main.yml).
PIPELINE_USERS = [{"name": name, "password": f"{name}-secret"}
                  for name in ("pipeline", "pipeline-generator", "pipeline-audit")]
PIPELINE_ACLS = [
    {"principal": "User:pipeline", "resource_type": "topic", "resource_name": "kf.events",
     "operations": ["Read", "Describe"]},
    {"principal": "User:pipeline", "resource_type": "group", "pattern_type": "prefixed",
     "resource_name": "kafkaform-events-job", "operations": ["Read"]},
    {"principal": "User:pipeline-generator", "resource_type": "topic",
     "resource_name": "kf.events", "operations": ["Write", "Describe"]},
    {"principal": "User:pipeline-audit", "resource_type": "topic", "resource_name": "kf.events",
     "operations": ["Read", "Describe"]},
    {"principal": "User:pipeline-audit", "resource_type": "group", "pattern_type": "prefixed",
     "resource_name": "kafkaform-events-audit", "operations": ["Read"]},
]

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("podman") is None, reason="needs root and podman"
)


def podman(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(["podman", *args], env=ENV, capture_output=True, text=True,
                            check=False)
    assert not check or result.returncode == 0, f"podman {' '.join(args)}: {result.stderr}"
    return result


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    if podman("image", "exists", IMAGE, check=False).returncode != 0:
        pytest.skip(f"{IMAGE} is missing: build it with `kafkaform lab image`")
    if not (CACHE / "mirror").is_dir():
        pytest.skip(f"{CACHE / 'mirror'} is missing: build it with `kafkaform mirror build`")
    podman("network", "create", NETWORK)
    try:
        podman("run", "--detach", "--name", MIRROR, "--network", NETWORK, "--label",
               "owner=kafkaform-tests", "--volume", f"{CACHE / 'mirror'}:/srv/mirror:ro", IMAGE,
               "python3", "-m", "http.server", "8000", "--directory", "/srv/mirror")
        for name in HOSTS:
            # The Spark nodes share the pipeline's directory, as on a shared filesystem.
            shared = (["--volume", f"{SHARED}:/srv/kafkaform/shared"]
                      if name in (MASTER, WORKER) else [])
            podman("run", "--detach", "--name", name, "--hostname", name, "--network", NETWORK,
                   "--systemd=always", "--label", "owner=kafkaform-tests", *shared, IMAGE,
                   "/sbin/init")
        for name in HOSTS:
            wait_for_systemd(name)
        yield
    finally:
        podman("rm", "--force", "--time", "0", *HOSTS, MIRROR, check=False)
        podman("volume", "rm", "--force", SHARED, check=False)
        podman("network", "rm", "--force", NETWORK, check=False)


def inventory(directory: Path, secrets: Path, **settings: Any) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "hosts.yml").write_text(yaml.safe_dump({"all": {
        "vars": {"ansible_connection": "containers.podman.podman",
                 "ansible_python_interpreter": "/usr/bin/python3",
                 "kafka_cluster_name": "parity", "kafkaform_allow_single_zookeeper": True,
                 "kafkaform_secrets_dir": str(secrets),
                 "kafkaform_apache_mirror_url": f"http://{MIRROR}:8000",
                 "kafka_default_replication_factor": 2, "kafka_min_insync_replicas": 1,
                 "zookeeper_heap_mb": 256, "kafka_broker_heap_mb": 384,
                 "kafka_topics": [{"name": name, "partitions": 3, "replication_factor": 2}
                                  for name in ("kf.parity", "kf.events")],
                 "kafka_users": [{"name": "parity", "password": "parity-secret"},
                                 *PIPELINE_USERS],
                 "kafka_acls": [{"principal": "User:parity", "resource_type": "topic",
                                 "resource_name": "kf.parity", "operations": ["Read"]},
                                *PIPELINE_ACLS],
                 "spark_node_daemon_heap_mb": 256, "spark_node_worker_cores": 2,
                 "spark_node_worker_memory_mb": 1536,
                 **settings},
        "children": {"zookeeper": {"hosts": {ZK: {"zookeeper_id": 1}}},
                     "kafka_broker": {"hosts": {b: {"kafka_broker_id": i}
                                                for i, b in enumerate(BROKERS, start=1)}},
                     "spark_master": {"hosts": {MASTER: {}}},
                     "spark_worker": {"hosts": {WORKER: {}}},
                     "monitoring": {"hosts": {MONITOR: {}}}}}}))
    return directory


def state(host: str, service: str) -> list[str]:
    """sha256 (or link target), owner, group and mode of each managed file."""
    listing = podman("exec", host, "sh", "-c",
                     'for f in "$@"; do if [ -L "$f" ]; then t=$(readlink "$f"); '
                     'else t=$(sha256sum "$f" | cut -d" " -f1); fi; '
                     'printf "%s %s %s\\n" "$f" "$t" "$(stat -c "%U %G %a" "$f")"; done',
                     "files", *FILES[service])
    return listing.stdout.splitlines()


def everything() -> dict[str, list[str]]:
    return {ZK: state(ZK, "zookeeper"), **{b: state(b, "kafka") for b in BROKERS},
            MASTER: state(MASTER, "spark") + state(MASTER, "spark-master"),
            WORKER: state(WORKER, "spark") + state(WORKER, "spark-worker"),
            MONITOR: state(MONITOR, "monitoring")}


def started() -> dict[str, str]:
    """When each service last started (systemd's monotonic clock)."""
    return {f"{h} {unit}": podman("exec", h, "systemctl", "show",
                                  "--property=ExecMainStartTimestampMonotonic", unit).stdout.strip()
            for h, units in SERVICES.items() for unit in units}


def ansible(source: Path, *options: str) -> list[str]:
    """The roles' playbooks (with their preflight); every host's recap line."""
    recaps = []
    for playbook in PLAYBOOKS:
        out = run(str(BIN / "ansible-playbook"), *options, "-i", str(source), playbook).stdout
        recaps += [line for line in out.splitlines() if "ok=" in line and PREFIX in line]
    return recaps


def pyinfra(source: Path, deploy: str = DEPLOYS[0]) -> int:
    """One deploy; the number of operations that changed a host."""
    out = run(str(BIN / "pyinfra"), "--yes", "--json", f"@kafkaform/{source}", deploy)
    totals = json.loads(out.stdout)["results"]["totals"]
    assert totals["error"] == 0, out.stdout
    return int(totals["success"])


def test_pyinfra_converges_what_the_roles_converge(cluster: None, tmp_path: Path) -> None:
    secrets = tmp_path / "secrets"
    base = inventory(tmp_path / "base", secrets)
    assert all(pyinfra(base, deploy) > 0 for deploy in DEPLOYS)
    written, start = everything(), started()
    described = podman("exec", BROKERS[0], "/usr/local/sbin/kafkaform-kafka", "--conf",
                       "/etc/kafka", "--libs", "/opt/kafkaform/kafka/libs", "describe").stdout
    assert "kf.parity" in described
    checks = run(str(BIN / "kafkaform"), "verify", "-i", str(base), "--checks",
                 "zookeeper,kafka_broker,spark,monitoring")
    assert " passed" in checks.stdout and " failed" not in checks.stdout, checks.stdout

    # The roles, dry, find everything they would write already there.
    recaps = ansible(base, "--check", "--diff")
    assert {line.split()[0] for line in recaps} == set(HOSTS), recaps
    assert all("changed=0" in line for line in recaps), recaps
    assert everything() == written

    # A broker setting changed through pyinfra: both brokers restart, one at a time.
    bigger = inventory(tmp_path / "bigger", secrets, kafka_broker_heap_mb=448)
    assert pyinfra(bigger) > 0
    now = started()
    assert [now[f"{b} kafka"] != start[f"{b} kafka"] for b in BROKERS] == [True, True]
    assert {k: v for k, v in now.items() if " kafka" not in k} == {
        k: v for k, v in start.items() if " kafka" not in k}
    assert all("-Xmx448m" in podman("exec", b, "cat", "/etc/systemd/system/kafka.service").stdout
               for b in BROKERS)
