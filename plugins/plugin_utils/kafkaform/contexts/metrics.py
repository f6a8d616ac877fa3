"""The Prometheus JMX exporter java agent in a JVM of the platform, written once for the brokers
and the ZooKeeper members (MO-07).

The agent serves the JVM's own metrics (heap, GC time, open files against the process limit) and
the MBeans its rules file names, over HTTP on the host's cluster address: never a wildcard, never
loopback only, since Prometheus scrapes it from the monitoring host. The agent reloads its rules
file when the file changes, so new rules never restart a broker or a member.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..catalog import APACHE_DIST_ROOT, CATALOG

#: Where the agent jar lives on every host that runs one (one directory for every service).
AGENT_DIR = "/opt/kafkaform/jmx-exporter"


def jmx_agent(get: Callable[[str], Any], settings: Mapping[str, Any], address: str,
              conf_dir: str) -> dict[str, Any]:
    """The ``metrics`` dict of a role's context.

    + get: reads the role's ``metrics_enabled`` and ``metrics_port`` inputs
    + settings: the role's settings, for ``kafkaform_apache_mirror_url`` (the jar's mirror)
    + address: the host's cluster address; conf_dir: where the role writes its rules file

    ``enabled`` false leaves the JVM without the agent (``option`` is then empty).
    """
    enabled = bool(get("metrics_enabled"))
    agent = CATALOG.jmx_exporter
    url = agent.url_on(str(settings.get("kafkaform_apache_mirror_url") or APACHE_DIST_ROOT))
    jar = f"{AGENT_DIR}/{agent.file_name}"
    port = int(get("metrics_port"))
    config = f"{conf_dir}/jmx-exporter.yml"
    return {
        "enabled": enabled,
        "url": url,
        "dir": AGENT_DIR,
        "jar": jar,
        "config": config,
        "address": address,
        "port": port,
        "option": f"-javaagent:{jar}={address}:{port}:{config}" if enabled else "",
    }
