"""``@kafkaform/<inventory>``: an Ansible inventory as pyinfra hosts, each reached as Ansible does.

pyinfra gives every host expanded from one ``@connector/arg`` name that connector's class
(``pyinfra.api.inventory.Inventory.make_hosts_and_groups``), so this connector both expands the
inventory and executes: each host's commands go to the podman, SSH or local connector its
``ansible_connection`` maps to (:func:`.hosts.connection_data`). Registered under the
``pyinfra.connectors`` entry point in pyproject.toml
(https://docs.pyinfra.com/en/3.x/api/connectors.html).
"""

from __future__ import annotations

import io
import json
import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import gevent
from pyinfra import local
from pyinfra.api.exceptions import ConnectError, InventoryError, PyinfraError
from pyinfra.api.output import echo
from pyinfra.connectors.base import BaseConnector
from pyinfra.connectors.docker import PodmanConnector
from pyinfra.connectors.local import LocalConnector
from pyinfra.connectors.ssh import SSHConnector
from pyinfra.connectors.util import (
    CommandOutput,
    OutputLine,
    execute_command_with_sudo_retry,
    make_unix_command_for_host,
    write_stdin,
)

from .. import exec_channel
from . import hosts


class RunningContainerConnector(PodmanConnector):
    """pyinfra's podman connector, on running containers only.

    pyinfra's own starts a stopped container and, at the end, commits it to an image and removes
    it (``DockerConnector.disconnect``): a lab host must stay as it is, so a container that is not
    running is a connection error, and disconnecting leaves it alone.
    """

    def connect(self) -> None:
        self.local.connect()
        name = self.data["docker_identifier"]
        try:
            found = json.loads(str(local.shell(
                f"{self.docker_cmd} container inspect {shlex.quote(name)}")))
        except PyinfraError as error:
            raise ConnectError(f"container {name} does not exist") from error
        if not found or not found[0]["State"]["Running"]:
            raise ConnectError(f"container {name} is not running (start the lab: kafkaform lab up)")
        self.container_id = name
        self.no_stop = True

    def disconnect(self) -> None:
        pass

    def run_shell_command(self, command: Any, print_output: bool = False,
                          print_input: bool = False, **arguments: Any) -> tuple[bool, Any]:
        """pyinfra's command, run in the container through the project's exec channel (one
        long-lived ``podman exec`` for every command); with a pseudo-terminal or a timeout,
        pyinfra's own ``podman exec`` runs it."""
        if arguments.get("_get_pty") or arguments.get("_timeout"):
            return super().run_shell_command(
                command, print_output=print_output, print_input=print_input, **arguments)
        arguments.pop("_get_pty", None)
        arguments.pop("_timeout", None)
        success_codes = arguments.pop("_success_exit_codes", None) or [0]
        stdin = arguments.pop("_stdin", None)

        def execute() -> tuple[int, CommandOutput]:
            unix_command = make_unix_command_for_host(self.state, self.host, command, **arguments)
            if print_input:
                echo(f"{self.host.print_prefix}>>> {unix_command}", err=True)
            result = exec_channel.run(self.container_id, ["sh", "-c", unix_command.get_raw_value()],
                                      stdin=stdin_bytes(stdin), podman=shlex.split(self.docker_cmd))
            lines = [OutputLine(name, line) for name, data in
                     (("stdout", result.stdout), ("stderr", result.stderr))
                     for line in data.decode("utf-8", "replace").splitlines()]
            if print_output:
                for line in lines:
                    echo(f"{self.host.print_prefix}{line.line}", err=True)
            return result.returncode, CommandOutput(lines)

        code, output = execute_command_with_sudo_retry(
            self.host, arguments, execute)  # type: ignore[arg-type]  # pyinfra's TypedDict
        return code in success_codes, output


class _Captured(io.BytesIO):
    """A buffer pyinfra's write_stdin may close: what it wrote stays readable."""

    def close(self) -> None:
        pass


def stdin_bytes(stdin: Any) -> bytes | None:
    """pyinfra's ``_stdin`` (text, lines or a file) as the bytes its own connectors would send."""
    if not stdin:
        return None
    captured = _Captured()
    write_stdin(stdin, captured)  # type: ignore[no-untyped-call]  # pyinfra's, untyped
    return captured.getvalue()


@contextmanager
def quiet_gevent_hub() -> Iterator[None]:
    """Keep gevent's hub from printing errors it only passes on.

    Importing ansible-core probes ``socket.getaddrinfo`` with an int subclass, expecting it to
    fail; under pyinfra's gevent that failure is also printed as a traceback, which is noise.
    https://www.gevent.org/api/gevent.hub.html (``Hub.exception_stream``)
    """
    hub = gevent.get_hub()
    stream = hub.exception_stream
    hub.exception_stream = None
    try:
        yield
    finally:
        hub.exception_stream = stream


EXECUTORS: dict[str, type[BaseConnector]] = {
    hosts.PODMAN: RunningContainerConnector,
    hosts.SSH: SSHConnector,
    hosts.LOCAL: LocalConnector,
}


class KafkaformConnector(BaseConnector):
    """Expands ``@kafkaform/<Ansible inventory>`` and executes through each host's own connector."""

    handles_execution = True

    def __init__(self, state: Any, host: Any) -> None:
        super().__init__(state, host)
        self.executor = EXECUTORS[host.data.get(hosts.CONNECTION)](state, host)

    @staticmethod
    def make_names_data(name: str | None = None) -> Iterator[tuple[str, dict[str, Any], list[str]]]:
        if not name:
            raise InventoryError("@kafkaform needs an Ansible inventory: @kafkaform/inventory/lab")
        try:
            with quiet_gevent_hub():
                found = list(hosts.pyinfra_hosts(name))
        except hosts.InventoryRefused as error:
            raise InventoryError(str(error)) from error
        for host in found:
            yield host.name, host.data, list(host.groups)

    def connect(self) -> None:
        self.executor.connect()

    def disconnect(self) -> None:
        self.executor.disconnect()

    def run_shell_command(self, *args: Any, **kwargs: Any) -> Any:
        return self.executor.run_shell_command(*args, **kwargs)

    def put_file(self, *args: Any, **kwargs: Any) -> bool:
        return self.executor.put_file(*args, **kwargs)

    def get_file(self, *args: Any, **kwargs: Any) -> bool:
        return self.executor.get_file(*args, **kwargs)

    def check_can_rsync(self) -> None:
        self.executor.check_can_rsync()

    def rsync(self, *args: Any, **kwargs: Any) -> bool:
        return self.executor.rsync(*args, **kwargs)
