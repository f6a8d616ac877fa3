"""Build hook: the wheel carries the collection kafkaform.platform beside the Python package.

The collection's contents are exactly what ``ansible-galaxy collection build`` puts in the Galaxy
tarball (``galaxy.yml`` decides, ``build_ignore`` included); the wheel unpacks that tarball under
``ansible_collections/kafkaform/platform``, where ansible-core finds collections installed in a
Python environment. Editable installs skip it: a checkout is its own collection.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

COLLECTION_DIR = Path("ansible_collections", "kafkaform", "platform")


class BuildPyWithCollection(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib, COLLECTION_DIR)
        with tempfile.TemporaryDirectory() as out:
            subprocess.run(
                [sys.executable, "-m", "ansible.cli.galaxy", "collection", "build",
                 "--force", "--output-path", out, str(Path(__file__).parent)],
                check=True, stdout=subprocess.DEVNULL,
            )
            (tarball,) = Path(out).glob("kafkaform-platform-*.tar.gz")
            target.mkdir(parents=True, exist_ok=True)
            # The tarball was built from this checkout a moment ago. Python 3.11.0 to 3.11.3
            # (Debian 12's python3) have no extraction filters; later ones get the "data" one.
            safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            with tarfile.open(tarball) as archive:
                archive.extractall(target, **safe)


setup(cmdclass={"build_py": BuildPyWithCollection})
