#!/usr/bin/python
"""kafkaform.platform.service_stale: whether a running systemd service started before a file it
reads last changed, so it still runs an older configuration and needs a restart
(plugins/module_utils/service_stale.py, shared with the pyinfra deploys). OP-03"""

from __future__ import annotations

DOCUMENTATION = r"""
module: service_stale
author: kafkaform (@kafkaform)
short_description: Tell whether a running service predates a file it reads
description:
  - Compares the start time of a systemd service's main process with the last modification of
    each given file, or of the files under a given directory (byte-code caches aside).
  - A service that runs and started before a path last changed is stale; one that does not run
    is not (its next start reads the files as they are).
  - Changes nothing.
options:
  name:
    description: The systemd unit, with or without C(.service).
    required: true
    type: str
  paths:
    description: The files and directories the service reads at start; missing ones are ignored.
    required: true
    type: list
    elements: path
extends_documentation_fragment:
  - kafkaform.platform.read_only
"""

EXAMPLES = r"""
- name: Find whether Kafka runs an older configuration than its files
  kafkaform.platform.service_stale:
    name: kafka
    paths: [/etc/kafka/server.properties, /etc/systemd/system/kafka.service]
  register: kafka_stale
"""

RETURN = r"""
stale:
  description: Whether the service runs and started before one of the paths last changed.
  returned: success
  type: bool
running:
  description: Whether the service's main process runs.
  returned: success
  type: bool
newer:
  description: The paths changed after the service started.
  returned: success
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kafkaform.platform.plugins.module_utils.service_stale import service_stale


def main() -> None:
    module = AnsibleModule(
        argument_spec={"name": {"type": "str", "required": True},
                       "paths": {"type": "list", "elements": "path", "required": True}},
        supports_check_mode=True)
    try:
        answer = service_stale(module.params["name"], module.params["paths"])
    except RuntimeError as error:
        module.fail_json(msg=str(error))
    module.exit_json(changed=False, **answer)


if __name__ == "__main__":
    main()
