"""kafkaform.platform.podman: containers.podman's podman connection, with pipelining.

Every task on a podman host costs podman processes on the control node. The upstream plugin
takes three per task: ``podman mount`` when it connects, ``podman exec`` to make a temporary
directory and ``podman exec`` to run the module copied into it. This one sends the module to
the interpreter's standard input (Ansible's pipelining, as over SSH) through ``podman exec -i``
and mounts the container only when a file is copied, so a module runs in one ``podman exec``.
On the 2-core test machine a no-change run of the kafka_broker scenario's roles took 151 s
instead of 217 to 246 s (BENCHMARKS.md).
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

from ansible.plugins.connection import ConnectionBase
from ansible_collections.containers.podman.plugins.connection.podman import (
    Connection as PodmanConnection,
)


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
        # A pipelined module arrives on standard input, which only `podman exec -i` passes on.
        podman_exec = ["exec", "-i"] if in_data is not None else ["exec"]
        if self.user:
            podman_exec += ["--user", self.user]
        return self._podman(podman_exec, shlex.split(cmd), in_data)  # type: ignore[no-any-return]  # untyped base

    def put_file(self, in_path: str, out_path: str) -> None:
        self._mount()
        super().put_file(in_path, out_path)

    def fetch_file(self, in_path: str, out_path: str) -> None:
        self._mount()
        super().fetch_file(in_path, out_path)
