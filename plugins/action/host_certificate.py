"""Action kafkaform.platform.host_certificate: the host's certificate from the cluster CA, issued
on the control node by kafkaform.pki; the module stub of the same name documents it. SE-02"""

from __future__ import annotations

from typing import Any

from ansible.plugins.action import ActionBase
from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.pki import (
    ensure_host,
    reads,
)

ARGUMENT_SPEC: dict[str, dict[str, Any]] = {
    "names": {"type": "list", "elements": "str", "required": True},
    "ou": {"type": "str", "required": True},
    "service": {"type": "str", "default": ""},
    "keystore": {"type": "bool"},
    "keep_previous_ca": {"type": "bool", "default": False},
    "renew": {"type": "bool", "default": False},
}


class ActionModule(ActionBase):  # type: ignore[misc]  # untyped base
    TRANSFERS_FILES = False
    # Everything happens on the control node: no connection to the host is needed.
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp: str | None = None,
            task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = super().run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)[1]
        host = str(task_vars["inventory_hostname"])
        settings = {key: self._templar.template(value) for key, value in task_vars.items()
                    if reads(key)}
        try:
            issued = ensure_host(settings, host, args["names"], args["ou"],
                                 service=str(args["service"]), keystore=args["keystore"],
                                 dry_run=bool(self._task.check_mode),
                                 keep_previous_ca=bool(args["keep_previous_ca"]),
                                 renew=bool(args["renew"]))
        except (ValueError, OSError) as error:
            result.update(failed=True, msg=f"{host}: {error}")
            return result
        # Paths and public facts only: the key and the keystore password stay in their files. SE-06
        result.update(
            changed=issued.changed,
            reason=issued.reason,
            files={"trust": issued.trust, "cert": issued.cert, "key": issued.key,
                   "keystore": issued.keystore},
            not_after=issued.not_after,
            subject=issued.subject,
        )
        return result
