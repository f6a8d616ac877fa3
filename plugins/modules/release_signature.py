#!/usr/bin/python
"""kafkaform.platform.release_signature: a release archive's detached OpenPGP signature verified
against its project's KEYS file (plugins/module_utils/openpgp.py, shared with the pyinfra
deploys)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: release_signature
author: kafkaform (@kafkaform)
short_description: Verify a release archive's OpenPGP signature against its project's KEYS
description:
  - Reads the KEYS file (the public keys of the project's release managers, ASCII-armored, as
    Apache publishes it), makes it a keyring, and checks the archive's detached signature with
    C(gpgv).
  - Fails, naming the archive, the signature and the KEYS file, when the signature does not
    verify, is made by a key the KEYS file does not hold, or cannot be checked.
  - Changes nothing.
options:
  path:
    description: The archive on the host.
    required: true
    type: path
  signature:
    description: Its detached signature (C(.asc)) on the host.
    required: true
    type: path
  keys:
    description: The project's KEYS file on the host.
    required: true
    type: path
  signature_url:
    description: Where the signature came from; the failure message names it.
    type: str
  keys_url:
    description: Where the KEYS file came from; the failure message names it.
    type: str
requirements:
  - gpgv on the host (Debian's C(gpgv) package, which apt needs)
extends_documentation_fragment:
  - kafkaform.platform.read_only
"""

EXAMPLES = r"""
- name: Verify the Kafka archive's signature against Kafka's KEYS
  kafkaform.platform.release_signature:
    path: /var/cache/kafkaform/artifacts/kafka_2.13-3.9.2.tgz
    signature: /var/cache/kafkaform/artifacts/kafka_2.13-3.9.2.tgz.asc
    keys: /var/cache/kafkaform/artifacts/kafka-KEYS
"""

RETURN = r"""
fingerprint:
  description: The fingerprint of the key that made the signature.
  returned: success
  type: str
signer:
  description: The user id of that key, as the KEYS file gives it.
  returned: success
  type: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kafkaform.platform.plugins.module_utils.openpgp import (
    SignatureError,
    verify,
)


def main() -> None:
    module = AnsibleModule(
        argument_spec={"path": {"type": "path", "required": True},
                       "signature": {"type": "path", "required": True},
                       "keys": {"type": "path", "required": True},
                       "signature_url": {"type": "str"},
                       # a URL, not a secret: ansible-test flags the word "keys"
                       "keys_url": {"type": "str", "no_log": False}},
        supports_check_mode=True)
    try:
        params = module.params
        answer = verify(params["path"], params["signature"], params["keys"],
                        params["signature_url"] or "", params["keys_url"] or "")
    except SignatureError as error:
        module.fail_json(msg=f"{error}. Nothing was unpacked: download the release again from a "
                         "source you trust, or check that the KEYS file is the project's")
    module.exit_json(changed=False, **answer)


if __name__ == "__main__":
    main()
