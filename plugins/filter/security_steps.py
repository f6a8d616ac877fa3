"""Filter security_step_problem: a thin wrapper over ``kafkaform.security_steps``, imported when
first called (kafkaform.lazy says why)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.lazy import module

#: How to read the step a host runs, by the kind of file it runs with.
READERS = {"server.properties": "broker_step", "zoo.cfg": "member_step"}


def security_step_problem(running_file: str, path: str, host: str, wanted: str,
                          wanted_tls: str = "") -> str:
    """``content | kafkaform.platform.security_step_problem(path, host, wanted_step[,
    wanted_tls_step])``; a zoo.cfg's TLS step (SE-18) is checked after its authentication's."""
    security_steps = module("security_steps")
    if wanted_tls:
        return security_steps.member_problem(host, path, running_file, wanted, wanted_tls)
    reader = getattr(security_steps, READERS[path.rsplit("/", 1)[-1]])
    return security_steps.step_problem(host, path, reader(running_file), wanted)


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"security_step_problem": security_step_problem}
