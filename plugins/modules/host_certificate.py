"""Documentation of kafkaform.platform.host_certificate, which runs as an action plugin on the
control node (plugins/action/host_certificate.py): the CA's key never leaves it. SE-02"""

from __future__ import annotations

DOCUMENTATION = r"""
module: host_certificate
author: kafkaform (@kafkaform)
short_description: Issue a host's TLS certificate from the cluster CA, on the control node
description:
  - Runs on the control node, never on the host, as an action plugin, so the cluster CA's key
    stays in C(<kafkaform_secrets_dir>/<kafka_cluster_name>/pki/).
  - Creates the cluster CA the first time (ECDSA P-256, valid C(kafkaform_tls_ca_validity_days)),
    unless C(kafkaform_tls_ca_cert) and C(kafkaform_tls_ca_key) name your own CA's PEM
    certificate and unencrypted key on the control node.
  - Issues the host's certificate with a new key when it is missing, when its names or O(ou)
    differ, when another CA issued it, or when it expires within
    C(kafkaform_tls_renew_before_days); it is valid C(kafkaform_tls_cert_validity_days), never
    past the CA's own expiry.
  - Rewrites only the PKCS#12 keystore when the keystore password (the C(keystore) secret of
    C(kafkaform_secrets)) no longer opens it, and writes nothing when everything is current.
  - Returns paths on the control node for M(ansible.builtin.copy) to install; never key
    material or passwords.
  - With O(service), issues a certificate and key of their own to one service of the host, kept
    apart from the host's certificate, for a service that runs as another user and must not hold
    the key of the host's main service (node exporter beside a broker).
options:
  names:
    description:
      - DNS names and IP addresses of the host, its subject alternative names; order does not
        matter.
    type: list
    elements: str
    required: true
  ou:
    description:
      - Organizational unit of the certificate's subject, the role of the host's service
        (for example V(kafka-broker)); Kafka maps it to the host's principal.
    type: str
    required: true
  service:
    description:
      - Name of one service of the host that takes a certificate of its own, kept in
        C(hosts/<host>/<service>/) beside the host's; empty for the host's own certificate.
    type: str
    default: ""
  keystore:
    description:
      - Whether a PKCS12 keystore (the keystore secret's password) comes with the certificate; by
        default the host's own certificate has one and a O(service)'s does not. A Java service
        with a certificate of its own (a ZooKeeper member) asks for one.
    type: bool
  keep_previous_ca:
    description:
      - During a CA rotation, keep a certificate the previous CA issued as long as it is otherwise
        current, so the run that spreads the new trust bundle reissues nothing.
    type: bool
    default: false
  renew:
    description:
      - Issue a new certificate and key now, whatever the current one's expiry.
    type: bool
    default: false
attributes:
  check_mode:
    description: Reports what would change and writes nothing on the control node.
    support: full
  diff_mode:
    description: Shows no diff; the files hold keys.
    support: none
notes:
  - Requires the Python library C(cryptography) on the control node (a dependency of
    ansible-core).
  - Reads the cluster-wide variables C(kafka_cluster_name), C(kafkaform_secrets_dir),
    C(kafkaform_secrets) and C(kafkaform_tls_*) of the host it runs for.
"""

EXAMPLES = r"""
- name: Issue the broker's certificate from the cluster CA
  kafkaform.platform.host_certificate:
    names:
      - "{{ inventory_hostname }}"
      - "{{ ansible_host }}"
    ou: kafka-broker
  register: broker_certificate

- name: Install the broker's keystore
  ansible.builtin.copy:
    src: "{{ broker_certificate.files.keystore }}"
    dest: /etc/kafka/tls/keystore.p12
    owner: root
    group: kafka
    mode: "0640"
"""

RETURN = r"""
reason:
  description: Why the files were (or, in check mode, would be) rewritten; empty when unchanged.
  returned: success
  type: str
  sample: expires within 30 days
files:
  description: Paths of the host's files on the control node.
  returned: success
  type: dict
  contains:
    trust:
      description: PEM trust bundle, the current CA followed by the previous one during a rotation.
      returned: success
      type: str
      sample: /home/ops/.kafkaform/secrets/kafka/pki/trust.pem
    cert:
      description: PEM certificate of the host followed by its CA chain.
      returned: success
      type: str
      sample: /home/ops/.kafkaform/secrets/kafka/pki/hosts/broker-1/cert.pem
    key:
      description: Unencrypted PKCS#8 PEM private key of the host (mode 0600).
      returned: success
      type: str
      sample: /home/ops/.kafkaform/secrets/kafka/pki/hosts/broker-1/key.pem
    keystore:
      description: PKCS#12 keystore with the key, the certificate and the CA chain, encrypted with
        the keystore password (mode 0600).
      returned: success
      type: str
      sample: /home/ops/.kafkaform/secrets/kafka/pki/hosts/broker-1/keystore.p12
not_after:
  description: Expiry of the host's certificate, ISO 8601.
  returned: success
  type: str
  sample: "2027-11-23T11:48:11+00:00"
subject:
  description: Subject of the host's certificate, RFC 4514.
  returned: success
  type: str
  sample: CN=broker-1,OU=kafka-broker,O=kafka
"""
