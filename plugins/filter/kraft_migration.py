"""Filter kraft_migration_plan: a thin wrapper over ``kafkaform.kraft_migration``, imported when
first called (kafkaform.lazy says why)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.lazy import module


def kraft_migration_plan(running: Mapping[str, str], brokers: Sequence[str],
                         controllers: Sequence[str], phase: str = "",
                         finalize: bool = False, pending: Sequence[str] = (),
                         stopped: Sequence[str] = ()) -> dict[str, Any]:
    """``running | kafkaform.platform.kraft_migration_plan(brokers, controllers, phase,
    finalize, pending, stopped)``: where the cluster stands and the phases this run takes."""
    kraft_migration = module("kraft_migration")
    stand = kraft_migration.standing(
        {h: kraft_migration.broker_state(running.get(h, "")) for h in brokers},
        {h: kraft_migration.controller_state(running.get(h, "")) for h in controllers},
        pending, stopped)
    phases, problem = kraft_migration.phases_to_run(stand, phase, finalize)
    rollback, rollback_problem = kraft_migration.rollback_steps(stand)
    return {"state": stand.state, "complete": stand.complete, "phases": phases,
            "problem": problem, "soak_point": kraft_migration.SOAK_POINT,
            "rollback": rollback, "rollback_problem": rollback_problem}


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"kraft_migration_plan": kraft_migration_plan}
