"""The attributes of a module that only reads the host: the same answer in check mode, no diff."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
attributes:
  check_mode:
    description: Reads only; answers the same in check mode.
    support: full
  diff_mode:
    description: Shows no diff.
    support: none
"""
