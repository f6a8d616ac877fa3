"""Documentation of kafkaform.platform.cluster_ca, which runs as an action plugin on the control
node (plugins/action/cluster_ca.py): the CA's key never leaves it. SE-02"""

from __future__ import annotations

DOCUMENTATION = r"""
module: cluster_ca
author: kafkaform (@kafkaform)
short_description: Start or finish the rotation of the cluster CA, on the control node
description:
  - Runs on the control node as an action plugin; the CA lives in
    C(<kafkaform_secrets_dir>/<kafka_cluster_name>/pki/).
  - V(started) generates a new CA and keeps the current one as the previous CA; the trust bundle
    holds both until the rotation is finished. Nothing changes when a rotation is already under
    way.
  - V(finished) drops the previous CA from the trust bundle and deletes it; nothing changes when
    there is none.
  - Refused for a CA given in C(kafkaform_tls_ca_cert); give the new one there instead.
options:
  rotation:
    description: The step of the rotation.
    required: true
    type: str
    choices: [started, finished]
attributes:
  check_mode:
    description: Reports what would change and writes nothing.
    support: full
  diff_mode:
    description: Shows no diff; the files hold keys.
    support: none
notes:
  - Requires the Python library C(cryptography) on the control node (a dependency of
    ansible-core).
"""

EXAMPLES = r"""
- name: Start the rotation of the cluster CA
  kafkaform.platform.cluster_ca:
    rotation: started
  run_once: true
"""

RETURN = r"""
previous_ca:
  description: Whether a previous CA is trusted beside the current one after the task.
  returned: success
  type: bool
"""
