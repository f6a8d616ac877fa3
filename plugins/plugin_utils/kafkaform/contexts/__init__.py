"""The template contexts of the roles, one module per role, shared by Ansible and pyinfra."""

#: Where the roles write their systemd units (the administrator's unit directory).
SYSTEMD_UNIT_DIR = "/etc/systemd/system"


def service_directories(conf_dir: str, read_write_paths: list[str], user: str, group: str,
                        metrics: dict[str, object]) -> list[dict[str, str]]:
    """The directories a JVM service needs before its files are written, each with its owner,
    group and mode, made in one call by either engine: its configuration (root-owned, readable
    by the service's group only), what it writes (its own, SE-04) and, with the JMX exporter
    agent on, the agent's directory (shared by every service on the host, root-owned)."""
    return [
        {"path": conf_dir, "owner": "root", "group": group, "mode": "0750"},
        *({"path": path, "owner": user, "group": group, "mode": "0750"}
          for path in read_write_paths),
        *([{"path": str(metrics["dir"]), "owner": "root", "group": "root", "mode": "0755"}]
          if metrics["enabled"] else []),
    ]
