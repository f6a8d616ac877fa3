"""Whether getent's answers show a service account as declared (kafkaform.accounts)."""

from __future__ import annotations

import pytest

from kafkaform.accounts import account_as_declared

PASSWD = "zookeeper:x:998:997:Apache ZooKeeper:/var/lib/zookeeper:/usr/sbin/nologin"
GROUP = "zookeeper:x:997:"
DECLARED = {"home": "/var/lib/zookeeper", "shell": "/usr/sbin/nologin",
            "comment": "Apache ZooKeeper"}


def test_an_account_as_declared_needs_no_call() -> None:
    assert account_as_declared(PASSWD + "\n", GROUP, **DECLARED)
    without_comment = {k: v for k, v in DECLARED.items() if k != "comment"}
    assert account_as_declared(PASSWD.replace("Apache ZooKeeper", ""), GROUP, **without_comment)


@pytest.mark.parametrize(("passwd", "group"), [
    ("", GROUP),                                            # no such user
    (PASSWD, ""),                                           # no such group
    (PASSWD.replace(":997:", ":100:"), GROUP),              # another primary group
    (PASSWD.replace("/var/lib/zookeeper", "/nonexistent"), GROUP),  # os_tuning's minimal user
    (PASSWD.replace("/usr/sbin/nologin", "/bin/bash"), GROUP),
    (PASSWD.replace("Apache ZooKeeper", ""), GROUP),        # the comment not set yet
])
def test_any_difference_leaves_the_calls_to_the_modules(passwd: str, group: str) -> None:
    assert not account_as_declared(passwd, group, **DECLARED)
