"""The settings a kafkaform role hands its Python context, named once: in its argument spec."""

from __future__ import annotations

DOCUMENTATION = r"""
name: role_settings
author: kafkaform (@kafkaform)
short_description: The inputs of a kafkaform role, as the play sees them
description:
  - Returns one mapping of variable name to templated value, for every input the role's
    C(meta/argument_specs.yml) declares and that is defined where the lookup runs (role
    defaults, inventory, play and extra vars), plus any other variables named.
  - A role's context falls back to the role's defaults for a name the mapping lacks, so a new
    role variable needs its default, its spec and its use, and no list of names anywhere else.
options:
  _terms:
    description:
      - A role of this collection (its argument spec names the variables), or a variable name.
    required: true
    type: list
    elements: str
"""

EXAMPLES = r"""
- name: Show what the kafka_broker role hands its context
  ansible.builtin.debug:
    msg: >-
      {{ lookup('kafkaform.platform.role_settings', 'kafka_broker', 'os_tuning_nofile_limit') }}
"""

RETURN = r"""
_raw:
  description: One mapping of variable name to value.
  type: list
  elements: dict
"""

# Ansible reads the documentation above before any import (validate-modules' rule).
import functools
from collections.abc import Mapping, Sequence
from typing import Any

from ansible.errors import AnsibleError
from ansible.plugins.lookup import LookupBase
from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.defaults import (
    assemble,
    trusted,
)


class LookupModule(LookupBase):  # type: ignore[misc]  # untyped base
    def run(self, terms: list[str], variables: Any = None, **kwargs: Any) -> list[dict[str, Any]]:
        if variables is None:
            raise AnsibleError("role_settings: no variables to read")
        return [assemble(terms, variables, functools.partial(self._template, variables))]

    def _template(self, variables: Any, every: Mapping[str, Any],
                  names: Sequence[str]) -> dict[str, Any]:
        """The task's own templar, with the defaults of the roles named that the task's variables
        lack (a role the play does not run) beside them."""
        known = {**variables, **trusted({k: v for k, v in every.items() if k not in variables})}
        templar = self._templar.copy_with_new_env(available_variables=known)
        return {name: templar.template(known[name]) for name in names}
