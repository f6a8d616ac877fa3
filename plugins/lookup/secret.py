"""A generated secret of the cluster, read or created on the control node (kafkaform.secrets)."""

from __future__ import annotations

DOCUMENTATION = r"""
name: secret
author: kafkaform (@kafkaform)
short_description: A secret of the cluster, from the inventory or generated once on the control node
description:
  - Returns the inventory's C(kafkaform_secrets[name]) when set (keep it in Ansible Vault).
  - Otherwise returns the secret stored in C(<kafkaform_secrets_dir>/<kafka_cluster_name>/<name>)
    on the control node, generating 32 random letters and digits there (mode 0600) the first time.
  - Known names are C(keystore), C(zookeeper-kafka), C(zookeeper-quorum) and C(spark-authenticate).
  - Given a role's plan (a mapping with C(secrets) and, optionally, C(secret_inputs)), returns the
    values its secret files read, by the names its templates use. Each of C(secrets) names a
    cluster secret as above, each of C(secret_inputs) the role input that holds the value.
options:
  _terms:
    description: Names of kafkaform's secrets, or one plan.
    required: true
    type: list
    elements: raw
"""

EXAMPLES = r"""
- name: Write the ZooKeeper JAAS file
  ansible.builtin.template:
    src: jaas.conf.j2
    dest: /etc/zookeeper/jaas.conf
    mode: "0640"
  vars:
    zookeeper_kafka_password: "{{ lookup('kafkaform.platform.secret', 'zookeeper-kafka') }}"
  no_log: true

- name: Write the files of a role's plan that hold secrets
  kafkaform.platform.install_files:
    files: "{{ zookeeper_plan.secret_files | kafkaform.platform.with_secrets(zookeeper_secrets) }}"
  vars:
    zookeeper_secrets: "{{ lookup('kafkaform.platform.secret', zookeeper_plan) }}"
  no_log: true
"""

RETURN = r"""
_raw:
  description: One secret per name; for a plan, one mapping of its secrets by the templates' names.
  type: list
  elements: raw
"""

# Ansible reads the documentation above before any import (validate-modules' rule).
from collections.abc import Mapping
from typing import Any

from ansible.errors import AnsibleError
from ansible.plugins.lookup import LookupBase
from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.plans.files import (
    resolve_secrets,
)
from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.secrets import (
    SETTINGS,
    secret,
)


class LookupModule(LookupBase):  # type: ignore[misc]  # untyped base
    def run(self, terms: list[Any], variables: Any = None, **kwargs: Any) -> list[Any]:
        if variables is None:
            raise AnsibleError("secret: no variables to read")
        wanted = {key: self._templar.template(variables.get(key))
                  for key in SETTINGS if variables.get(key) is not None}
        try:
            return [resolve_secrets(term, lambda name: secret(name, wanted),
                                    lambda name: self._templar.template(variables[name]))
                    if isinstance(term, Mapping) else secret(str(term), wanted)
                    for term in terms]
        except (KeyError, OSError, RuntimeError, ValueError) as error:
            raise AnsibleError(f"kafkaform.platform.secret: {error}") from error
