"""The kafkaform deploys in pyinfra, on the same inventory, contexts and templates as the roles.

An Ansible inventory is a pyinfra inventory through the ``@kafkaform`` connector
(:mod:`.connector`): ``pyinfra @kafkaform/inventory/lab kafkaform.deploys.os_tuning.sysctl``
reads ``inventory/lab`` with Ansible's own parser, runs the preflight of ``kafkaform check``, and
reaches each host the way its ``ansible_connection`` says (podman or SSH). The deploys are
``@deploy`` functions, one module per role (https://docs.pyinfra.com/en/3.x/api/deploys.html).
"""
