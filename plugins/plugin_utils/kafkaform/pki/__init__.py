"""The cluster's PKI on the control node: its CA and one certificate per host. SE-02

Everything lives in ``<kafkaform_secrets_dir>/<kafka_cluster_name>/pki/`` (directories 0700,
private keys and keystores 0600, the rest 0644); the private keys are sealed with the run's vault
secret (``sealed.py``) unless the inventory opts into plain text::

    ca.crt, ca.key                    the current CA, generated once (unless the inventory gives
                                      its own with kafkaform_tls_ca_cert and kafkaform_tls_ca_key)
    ca-previous.crt, ca-previous.key  the CA before the last rotate_ca, until retire_previous_ca
    trust.pem                         what every host trusts: the current CA, then the previous one
    hosts/<host>/cert.pem             the host's certificate followed by its CA chain
    hosts/<host>/key.pem              its key (PKCS#8, sealed)
    hosts/<host>/keystore.p12         key, certificate and chain, under the keystore password

:func:`ensure_host` issues or renews a host's certificate and writes nothing when all is current,
so a second run copies nothing and restarts nothing. Ansible runs one fork per host at once:
every write happens under an ``flock`` of ``pki/.lock`` and replaces its file atomically.

The package's modules: ``settings`` (the inventory's variables), ``files`` (writing and locking),
``authority`` (the CA), ``host_certificates`` and ``rotation``; callers import from here.
"""

from __future__ import annotations

from .files import read_material
from .host_certificates import HostCertificate, ensure_host
from .rotation import certificate_info, retire_previous_ca, rotate_ca
from .settings import BACKDATE, CLUSTER_SETTINGS, KEYSTORE_KDF_ROUNDS, reads, rotation_under_way

__all__ = ["BACKDATE", "CLUSTER_SETTINGS", "KEYSTORE_KDF_ROUNDS", "HostCertificate",
           "certificate_info", "ensure_host", "read_material", "reads", "retire_previous_ca",
           "rotate_ca", "rotation_under_way"]
