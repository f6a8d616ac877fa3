"""Stand-in for the pip bootstrap script ansible-test downloads into its cache.

ansible-test fetches get-pip.py from a host outside the package registries; this script does the
same job with what Python ships (ensurepip) and then pip's own configuration (index, proxy), and
accepts get-pip's extra options. tests/sanity/run copies it into ansible-test's cache.
"""

import subprocess
import sys

GET_PIP_ONLY = {"--no-setuptools", "--no-wheel"}

subprocess.run([sys.executable, "-m", "ensurepip", "--upgrade", "--default-pip"], check=True,
               stdout=subprocess.DEVNULL)
args = [a for a in sys.argv[1:] if a not in GET_PIP_ONLY]
sys.exit(subprocess.run([sys.executable, "-m", "pip", "install", *args], check=False).returncode)
