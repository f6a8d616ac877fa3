"""Declared Kafka users and ACLs: their checks, and the plan that brings a cluster's ACLs to them.

:func:`plan` is pure, like :mod:`kafkaform.topics`: the declared ACLs (``kafka_acls``) and
the current ones (the admin helper's ``acl-list`` answer) in, actions out. An ACL that is not
declared is never in the plan; one declared with ``state: absent`` is removed (SE-03). Users are
checked here and converged on the broker by the role's admin helper, which alone sees their
passwords.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .contexts.extras import declared_entries
from .rules import cite

#: Operations each resource type accepts, as Kafka's documentation names them.
OPERATIONS: dict[str, tuple[str, ...]] = {
    "topic": ("Read", "Write", "Create", "Delete", "Alter", "Describe", "DescribeConfigs",
              "AlterConfigs", "All"),
    "group": ("Read", "Describe", "Delete", "All"),
    "cluster": ("Create", "ClusterAction", "DescribeConfigs", "AlterConfigs", "IdempotentWrite",
                "Alter", "Describe", "All"),
    "transactional_id": ("Describe", "Write", "All"),
    "delegation_token": ("Describe", "All"),
}
PATTERN_TYPES = ("literal", "prefixed")
PERMISSIONS = ("allow", "deny")
STATES = ("present", "absent")
#: The one name of the cluster resource.
CLUSTER_NAME = "kafka-cluster"
ACL_KEYS = ("principal", "resource_type", "resource_name", "pattern_type", "operations",
            "permission", "host", "state")
USER_KEYS = ("name", "password", "superuser", "state")

#: Characters Kafka's SCRAM credential syntax (k=v,k=v) or a JAAS string cannot carry.
_PASSWORD_UNSAFE = ',="\\\n\r'
_USER_NAME = re.compile(r"^[A-Za-z0-9._-]{1,255}$")
#: One ACL binding: resource type, resource name, pattern type, principal, host, operation and
#: permission, all in Kafka's upper-case spelling.
Binding = tuple[str, str, str, str, str, str, str]


def _upper(name: str) -> str:
    """``DescribeConfigs`` -> ``DESCRIBE_CONFIGS``, ``transactional_id`` -> ``TRANSACTIONAL_ID``."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "_", name).upper()


def user_problems(users: Any) -> list[str]:
    """Problems of ``kafka_users``: names, passwords, flags; never the password itself."""
    entries, problems = declared_entries("kafka_users", users, USER_KEYS)
    seen: set[str] = set()
    for where, user in entries:
        name = str(user.get("name", ""))
        if not _USER_NAME.match(name):
            problems.append(f"{where}: name {name!r} must be 1-255 letters, digits, '.', '_' "
                            "or '-'")
        elif name in seen:
            problems.append(f"{where}: user {name} is declared twice")
        elif name == "kafka-broker":
            problems.append(f"{where}: kafka-broker is the brokers' own principal")
        seen.add(name)
        state = user.get("state", "present")
        if state not in STATES:
            problems.append(f"{where}: state {state!r} must be present or absent")
        password = user.get("password")
        if state == "present" and (not isinstance(password, str) or len(password) < 8):
            problems.append(f"kafka_users: {name or where} needs a password of at least 8 "
                            f"characters (from Ansible Vault, {cite('SE-06')})")
        elif state == "present" and set(str(password)) & set(_PASSWORD_UNSAFE):
            problems.append(f"kafka_users: {name or where}: the password may not contain , = \" "
                            "\\ or line breaks (Kafka's SCRAM and JAAS syntax would split it)")
        if not isinstance(user.get("superuser", False), bool):
            problems.append(f"kafka_users: {name or where}: superuser must be true or false")
    return problems


def acl_problems(acls: Any) -> list[str]:
    """Problems of ``kafka_acls``: principals, resource types, operations valid for them."""
    entries, problems = declared_entries("kafka_acls", acls, ACL_KEYS)
    for where, acl in entries:
        principal = str(acl.get("principal", ""))
        if not re.match(r"^User:.+$", principal):
            problems.append(f"{where}: principal {principal!r} must look like User:<name>")
        rtype = str(acl.get("resource_type", ""))
        if rtype not in OPERATIONS:
            problems.append(f"{where}: resource_type {rtype!r} must be one of "
                            f"{', '.join(OPERATIONS)}")
        elif rtype != "cluster" and not str(acl.get("resource_name", "")):
            problems.append(f"{where}: resource_name is required for a {rtype} ACL "
                            "('*' means every one)")
        operations = acl.get("operations")
        if not isinstance(operations, list) or not operations:
            problems.append(f"{where}: operations must be a non-empty list")
        elif rtype in OPERATIONS:
            wrong = [str(o) for o in operations if o not in OPERATIONS[rtype]]
            if wrong:
                problems.append(f"{where}: {', '.join(wrong)} not valid on a {rtype}; valid: "
                                f"{', '.join(OPERATIONS[rtype])}")
        for key, allowed, default in (("pattern_type", PATTERN_TYPES, "literal"),
                                      ("permission", PERMISSIONS, "allow"),
                                      ("state", STATES, "present")):
            if acl.get(key, default) not in allowed:
                problems.append(f"{where}: {key} {acl.get(key)!r} must be one of "
                                f"{', '.join(allowed)}")
    return problems


def bindings(acl: Mapping[str, Any]) -> Iterator[Binding]:
    """The bindings one declared ACL stands for, one per operation."""
    rtype = str(acl["resource_type"])
    name = CLUSTER_NAME if rtype == "cluster" else str(acl["resource_name"])
    for operation in acl["operations"]:
        yield (_upper(rtype), name, _upper(str(acl.get("pattern_type", "literal"))),
               str(acl["principal"]), str(acl.get("host", "*")), _upper(str(operation)),
               _upper(str(acl.get("permission", "allow"))))


def parse_list(output: str) -> set[Binding]:
    """Every binding of the admin helper's ``acl-list`` answer (JSON); none for no answer."""
    if not output.strip():
        return set()
    return {(str(t), str(n), str(pt), str(p), str(h), str(o), str(perm))
            for t, n, pt, p, h, o, perm in json.loads(output)["bindings"]}


def plan(declared: Sequence[Mapping[str, Any]], current_output: str) -> list[dict[str, Any]]:
    """Actions for the role's admin helper: ``add`` the declared bindings that are missing,
    ``remove`` the present ones declared ``state: absent``; each with a message."""
    current = parse_list(current_output)
    actions = []
    for acl in declared:
        absent = acl.get("state", "present") == "absent"
        wanted = list(bindings(acl))
        todo = [b for b in wanted if (b in current) == absent]
        if not todo:
            continue
        operations = [b[5] for b in todo]
        action = "remove" if absent else "add"
        rtype = str(acl["resource_type"])
        name = CLUSTER_NAME if rtype == "cluster" else str(acl["resource_name"])
        actions.append({
            "action": action,
            "principal": str(acl["principal"]),
            "resource_type": rtype,
            "resource_name": name,
            "pattern_type": str(acl.get("pattern_type", "literal")),
            "permission": str(acl.get("permission", "allow")),
            "host": str(acl.get("host", "*")),
            "operations": operations,
            "message": f"{action} {acl.get('permission', 'allow')} {acl['principal']} "
                       f"{', '.join(operations)} on {rtype} {name}",
        })
    return actions
