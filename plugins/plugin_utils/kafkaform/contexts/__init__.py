"""The template contexts of the roles, one module per role, shared by Ansible and pyinfra."""

#: Where the roles write their systemd units (the administrator's unit directory).
SYSTEMD_UNIT_DIR = "/etc/systemd/system"
