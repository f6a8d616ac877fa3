"""What a preflight rule reports: a finding names the hosts, the rule, what is wrong and
how to fix it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any, Literal

from ..model import InventoryView
from ..rules import cite

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    rule: str
    message: str
    fix: str
    hosts: tuple[str, ...] = ()
    severity: Severity = "error"

    def __post_init__(self) -> None:
        cite(self.rule)  # a finding outside the catalogue is a bug in the check, not in the input

    def text(self) -> str:
        where = ", ".join(self.hosts) if self.hosts else "inventory"
        return f"{self.severity.upper()} {where} [{self.rule}] {self.message}. Fix: {self.fix}."

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["hosts"] = list(self.hosts)
        data["text"] = self.text()
        return data


Rule = Callable[[InventoryView], Iterable[Finding]]
