"""Filter `kafkaform.platform.account_as_declared`: whether `getent` shows a service account as
the role's group and user tasks declare it, so they can be skipped. See kafkaform.accounts.

Usage: `{{ passwd_line | kafkaform.platform.account_as_declared(group_line, home, shell) }}`.
The module is imported when the filter is first called (kafkaform.lazy says why).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible_collections.kafkaform.platform.plugins.plugin_utils.kafkaform.lazy import lazy


class FilterModule:
    """Ansible entry point."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"account_as_declared": lazy("accounts", "account_as_declared")}
