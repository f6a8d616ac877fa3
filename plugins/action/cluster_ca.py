"""Action kafkaform.platform.cluster_ca: start or finish a rotation of the cluster CA, on the
control node, through kafkaform.pki; the module stub of the same name documents it. SE-02"""

from __future__ import annotations

from typing import Any

from ansible.plugins.action import ActionBase
from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.pki import (
    reads,
    retire_previous_ca,
    rotate_ca,
    rotation_under_way,
)

ARGUMENT_SPEC: dict[str, dict[str, Any]] = {
    "rotation": {"type": "str", "required": True, "choices": ["started", "finished"]},
}


class ActionModule(ActionBase):  # type: ignore[misc]  # untyped base
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp: str | None = None,
            task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = super().run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)[1]
        settings = {key: self._templar.template(value) for key, value in task_vars.items()
                    if reads(key)}
        under_way = rotation_under_way(settings)
        try:
            if args["rotation"] == "started":
                changed = not under_way
                if changed and not self._task.check_mode:
                    rotate_ca(settings)
            else:
                changed = under_way
                if changed and not self._task.check_mode:
                    retire_previous_ca(settings)
        except (ValueError, OSError) as error:
            result.update(failed=True, msg=str(error))
            return result
        result.update(changed=changed, previous_ca=rotation_under_way(settings))
        return result
