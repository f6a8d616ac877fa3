"""Shared pytest options."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests judge results, never speed (speed lives in benchmarks/): no per-example deadline,
# which a machine busy with the hosts' lanes would trip.
settings.register_profile("kafkaform", deadline=None)
settings.load_profile("kafkaform")

# kafkaform seals the control node's secrets with the run's vault secret (kafkaform.sealed);
# ./dev gives the suite the lab's. A test run started by hand gets one of its own, set before
# anything imports Ansible's configuration, which reads it once.
if not (os.environ.get("ANSIBLE_VAULT_PASSWORD_FILE")
        or os.environ.get("ANSIBLE_VAULT_IDENTITY_LIST")):
    _secret = Path(tempfile.mkdtemp(prefix="kafkaform-tests-")) / "vault-password"
    _secret.write_text("kafkaform-tests\n")
    _secret.chmod(0o600)
    os.environ["ANSIBLE_VAULT_PASSWORD_FILE"] = str(_secret)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite tests/golden/ from the current templates instead of comparing")


@pytest.fixture
def failing_ls(tmp_path: Path) -> Callable[[Path], dict[str, str]]:
    """An environment whose ``ls`` fails on one path with an I/O error, as every call on a
    shut-down XFS does (EIO), and lists any other: the failed-disk reads run here for real."""

    def environment(failing: Path) -> dict[str, str]:
        bin_dir = tmp_path / "failing-ls"
        bin_dir.mkdir(exist_ok=True)
        (bin_dir / "ls").write_text(
            '#!/bin/sh\nfor a; do last="$a"; done\n'
            f'if [ "$last" = "{failing}" ]; then\n'
            "  echo \"ls: cannot access '$last': Input/output error\" >&2; exit 2\nfi\n"
            'exec /bin/ls "$@"\n')
        (bin_dir / "ls").chmod(0o755)
        return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}

    return environment
