"""kafkaform.platform.podman: containers.podman's podman connection, with pipelining.

Every task on a podman host costs podman processes on the control node. The upstream plugin
takes three per task: ``podman mount`` when it connects, ``podman exec`` to make a temporary
directory and ``podman exec`` to run the module copied into it. This one sends the module to
the interpreter's standard input (Ansible's pipelining, as over SSH) and mounts the container
only when a file is copied. On the 2-core test machine a no-change run of the kafka_broker
scenario's roles took 151 s instead of 217 to 246 s (BENCHMARKS.md). The command then goes
through the project's exec channel (plugin_utils/kafkaform/exec_channel.py): one long-lived
``podman exec`` per container for every task, as SSH's ControlPersist keeps one connection.
"""

from __future__ import annotations

DOCUMENTATION = r"""
name: podman
author: kafkaform (@kafkaform)
short_description: Run tasks in podman containers, pipelined
description:
  - The containers.podman.podman connection (same options), with Ansible's pipelining;
    a module runs in one C(podman exec -i), its code on standard input, with no temporary
    file; the container's file system is mounted only to copy a file.
  - Pipelining is on by default; C(ANSIBLE_PIPELINING=false) turns it off.
  - Commands share one long-lived C(podman exec) per container, kept by a daemon on the control
    node until 30 seconds without a command; C(KAFKAFORM_EXEC_CHANNEL=off) runs each command in
    a C(podman exec) of its own.
extends_documentation_fragment:
  - ansible.builtin.connection_pipelining
options:
  remote_addr:
    description: The ID or name of the container.
    default: inventory_hostname
    vars:
      - name: ansible_host
      - name: inventory_hostname
      - name: ansible_podman_host
  remote_user:
    description: The user in the container; unset runs as the container's own user.
    vars:
      - name: ansible_user
    env:
      - name: ANSIBLE_REMOTE_USER
    ini:
      - section: defaults
        key: remote_user
  podman_extra_args:
    description: Extra arguments for every podman command.
    default: ''
    vars:
      - name: ansible_podman_extra_args
    env:
      - name: ANSIBLE_PODMAN_EXTRA_ARGS
    ini:
      - section: defaults
        key: podman_extra_args
  podman_executable:
    description: The podman executable.
    default: podman
    vars:
      - name: ansible_podman_executable
    env:
      - name: ANSIBLE_PODMAN_EXECUTABLE
    ini:
      - section: defaults
        key: podman_executable
  pipelining:
    default: true
"""

# Ansible reads the documentation above before any import (validate-modules' rule).
import shlex

from ansible.errors import AnsibleError
from ansible.module_utils.common.process import get_bin_path
from ansible.plugins.connection import ConnectionBase
from ansible.utils.display import Display
from ansible_collections.containers.podman.plugins.connection.podman import (
    Connection as PodmanConnection,
)
from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform import exec_channel

display = Display()


class Connection(PodmanConnection):  # type: ignore[misc]  # untyped base
    """containers.podman.podman with pipelining and a mount only for file copies."""

    transport = "kafkaform.platform.podman"
    has_pipelining = True
    _mount_tried = False

    def _connect(self) -> Connection:
        # The base class mounts the container here; that waits for the first file copy.
        self._connected = True
        return self

    def _mount(self) -> None:
        if not self._mount_tried:
            self._mount_tried = True
            super()._connect()

    def exec_command(self, cmd: str, in_data: bytes | None = None,
                     sudoable: bool = False) -> tuple[int, bytes, bytes]:
        ConnectionBase.exec_command(self, cmd, in_data=in_data, sudoable=sudoable)
        self._connect()
        display.vvv(f"EXEC {cmd}", host=self._container_id)
        result = exec_channel.run(self._container_id, shlex.split(cmd), stdin=in_data,
                                  podman=self._podman_command(), user=self.user or None)
        return result.returncode, result.stdout, result.stderr

    def _podman_command(self) -> list[str]:
        """The podman executable and the extra arguments the options give it."""
        executable = self.get_option("podman_executable")
        try:
            command = [get_bin_path(executable)]
        except ValueError as error:
            raise AnsibleError(f"{executable} command not found in PATH") from error
        return command + shlex.split(str(self.get_option("podman_extra_args") or ""))

    def put_file(self, in_path: str, out_path: str) -> None:
        self._mount()
        super().put_file(in_path, out_path)

    def fetch_file(self, in_path: str, out_path: str) -> None:
        self._mount()
        super().fetch_file(in_path, out_path)
