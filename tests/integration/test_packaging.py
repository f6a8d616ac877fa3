"""Both ways of installing kafkaform, from a clean export, in fresh environments, far from here.

The wheel (`pip install kafkaform-*.whl`) and the Galaxy tarball (`ansible-galaxy collection
install`, then the collection's requirements.txt) are built from a copy of the tracked files,
installed into new virtual environments under a temporary directory, and used from there with no
ansible.cfg, no KAFKAFORM_COLLECTION and a HOME of their own: the preflight playbook and every
role playbook by FQCN, on a valid and on a broken inventory, and `kafkaform check` (wheel).
The wheel also goes, without extras, into an environment that already runs another supported
ansible-core, which it must leave as it was.
Needs PyPI through pip's configuration (the pinned dependencies; pip's cache makes it quick).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from kafkaform.paths import collection_root

CHECKOUT = collection_root()
BIN = Path(sys.executable).parent
ROLE_PLAYBOOKS = ("site", "zookeeper", "kafka_broker", "os_tuning", "spark_node", "pipeline",
                  "rolling_restart", "pipeline_check")

GOOD = (CHECKOUT / "tests" / "unit" / "fixtures" / "small-cluster.yml").read_text()
# Two of three ZooKeeper members in rack a: one rack failure loses the quorum.
BAD = GOOD.replace("zk3: {zookeeper_id: 3, rack: c}", "zk3: {zookeeper_id: 3, rack: a}")


def run(argv: list[str], cwd: Path, env: Mapping[str, str],
        expect: int | None = 0) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(argv, cwd=cwd, env=dict(env), capture_output=True, text=True,
                            timeout=900, check=False)
    if expect is not None:
        assert result.returncode == expect, (
            f"{' '.join(argv)} exited {result.returncode}, expected {expect}\n"
            f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
        )
    return result


def clean_env(home: Path, venv_dir: Path) -> dict[str, str]:
    """The caller's environment without anything pointing back at the checkout."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANSIBLE_", "KAFKAFORM_", "PYTHON", "VIRTUAL_ENV", "MOLECULE_"))}
    env.update(HOME=str(home), VIRTUAL_ENV=str(venv_dir),
               PATH=f"{venv_dir / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}",
               # pip compiles every module it installs, the ansible package's thousands of
               # collection files included, where these tests import a few: about 20 s of CPU
               # per install. Python compiles what is imported as it goes.
               PIP_NO_COMPILE="1")
    return env


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("packaging")


@pytest.fixture(scope="module")
def artifacts(work: Path) -> dict[str, Path]:
    """The wheel and the Galaxy tarball, built from a copy of the tracked (and new) files."""
    export = work / "export"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=CHECKOUT, capture_output=True, text=True, check=True).stdout
    for name in filter(None, listed.split("\0")):
        source = CHECKOUT / name
        if source.is_file():
            (export / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, export / name)
    dist = work / "dist"
    env = {**os.environ, "HOME": str(work / "build-home")}
    env.pop("ANSIBLE_CONFIG", None)
    run([str(BIN / "ansible-galaxy"), "collection", "build", "--output-path", str(dist),
         str(export)], cwd=work, env=env)
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(export)],
        cwd=work, env=env)
    (tarball,) = dist.glob("kafkaform-platform-*.tar.gz")
    (wheel,) = dist.glob("kafkaform-*-py3-none-any.whl")
    return {"tarball": tarball, "wheel": wheel}


@pytest.fixture(scope="module")
def vault_password(work: Path) -> Path:
    """The operator's vault secret: kafkaform seals the control node's secrets with it (SE-16)."""
    path = work / "vault-password"
    path.write_text("operators-own\n")
    path.chmod(0o600)
    return path


@pytest.fixture(scope="module")
def inventories(work: Path) -> dict[str, Path]:
    paths = {}
    for name, text in (("good", GOOD), ("bad", BAD)):
        (work / "inventories" / name).mkdir(parents=True)
        (work / "inventories" / name / "hosts.yml").write_text(text)
        paths[name] = work / "inventories" / name
    return paths


def new_venv(path: Path) -> Path:
    venv.EnvBuilder(with_pip=True, clear=True).create(path)
    return path


def pinned(name: str) -> str:
    """``name==version`` as constraints.txt pins it."""
    return next(line.strip() for line in (CHECKOUT / "constraints.txt").read_text().splitlines()
                if line.lower().startswith(f"{name}=="))


@pytest.fixture(scope="module")
def wheel_install(work: Path, artifacts: dict[str, Path]) -> dict[str, str]:
    """A fresh environment: the wheel with every extra (Ansible's collections, boto3, pyinfra,
    the verifiers)."""
    env_dir = new_venv(work / "wheel-venv")
    env = clean_env(work / "wheel-home", env_dir)
    run([str(env_dir / "bin" / "pip"), "install", "-q", f"{artifacts['wheel']}[all]"],
        cwd=work, env=env)
    return env


#: A supported ansible-core other than the one constraints.txt pins: an operator's own.
OPERATORS_ANSIBLE_CORE = "ansible-core==2.19.10"


def frozen(pip: Path, cwd: Path, env: Mapping[str, str]) -> dict[str, str]:
    """Every package of an environment and its version."""
    listed = json.loads(run([str(pip), "list", "--format=json"], cwd=cwd, env=env).stdout)
    return {entry["name"].lower(): entry["version"] for entry in listed}


@pytest.fixture(scope="module")
def beside_install(work: Path, artifacts: dict[str, Path]) -> dict[str, Any]:
    """An operator's environment with their own ansible-core, then the wheel without extras."""
    assert pinned("ansible-core") != OPERATORS_ANSIBLE_CORE
    env_dir = new_venv(work / "beside-venv")
    env = clean_env(work / "beside-home", env_dir)
    pip = env_dir / "bin" / "pip"
    run([str(pip), "install", "-q", OPERATORS_ANSIBLE_CORE], cwd=work, env=env)
    before = frozen(pip, work, env)
    run([str(pip), "install", "-q", str(artifacts["wheel"])], cwd=work, env=env)
    return {"env": env, "before": before, "after": frozen(pip, work, env)}


@pytest.fixture(scope="module")
def galaxy_install(work: Path, artifacts: dict[str, Path]) -> dict[str, str]:
    """ansible from PyPI (it carries ansible.posix and community.general, the collection's
    dependencies), the tarball through ansible-galaxy, then the collection's requirements.txt."""
    env_dir = new_venv(work / "galaxy-venv")
    env = clean_env(work / "galaxy-home", env_dir)
    run([str(env_dir / "bin" / "pip"), "install", "-q", pinned("ansible")], cwd=work, env=env)
    collections = work / "galaxy-collections"
    run([str(env_dir / "bin" / "ansible-galaxy"), "collection", "install", "--offline",
         "-p", str(collections), str(artifacts["tarball"])], cwd=work, env=env)
    installed = collections / "ansible_collections" / "kafkaform" / "platform"
    requirements = installed / "requirements.txt"
    assert "kafkaform" not in requirements.read_text().split("#")[0].lower()
    run([str(env_dir / "bin" / "pip"), "install", "-q", "-r", str(requirements)], cwd=work, env=env)
    return {**env, "ANSIBLE_COLLECTIONS_PATH": str(collections)}


def test_tarball_holds_the_collection_and_nothing_else(artifacts: dict[str, Path]) -> None:
    names = subprocess.run(["tar", "tzf", str(artifacts["tarball"])], capture_output=True,
                           text=True, check=True).stdout.split()
    assert "plugins/plugin_utils/kafkaform/model.py" in names  # what the filters import
    assert "LICENSE" in names and "meta/runtime.yml" in names
    assert all((f"roles/{role.name}/README.md" in names)
               for role in (CHECKOUT / "roles").iterdir())
    # Both engines render the roles' own templates from the installed collection.
    templates = [p.relative_to(CHECKOUT).as_posix()
                 for p in CHECKOUT.glob("roles/*/templates/**/*.j2")]
    assert templates and all(t in names for t in templates)
    leftovers = [n for n in names if n.split("/")[0] in {"lab", "inventory", "molecule",
                 "benchmarks", ".venv", ".git", "dist", "build"}
                 or "__pycache__" in n or n.endswith((".pyc", ".egg-info"))
                 or n.startswith(("tests/unit", "tests/integration"))]
    assert leftovers == []


@pytest.mark.parametrize("install", ["wheel_install", "galaxy_install"])
def test_preflight_by_fqcn_passes_a_good_and_stops_a_bad_inventory(
        install: str, request: pytest.FixtureRequest, work: Path,
        inventories: dict[str, Path], vault_password: Path) -> None:
    env = request.getfixturevalue(install)
    playbook = str(Path(env["VIRTUAL_ENV"]) / "bin" / "ansible-playbook")
    good = run([playbook, "-i", str(inventories["good"]), "--vault-password-file",
                str(vault_password), "kafkaform.platform.preflight"], cwd=work, env=env)
    assert "failed=0" in good.stdout
    bad = run([playbook, "-i", str(inventories["bad"]), "kafkaform.platform.preflight"],
              cwd=work, env=env, expect=2)
    assert "[ZK-07] rack a holds 2 of 3 ZooKeeper members" in bad.stdout


@pytest.mark.parametrize("install", ["wheel_install", "galaxy_install"])
def test_every_playbook_and_role_resolves_by_fqcn(install: str, request: pytest.FixtureRequest,
                                                  work: Path, inventories: dict[str, Path]) -> None:
    env = request.getfixturevalue(install)
    playbook = str(Path(env["VIRTUAL_ENV"]) / "bin" / "ansible-playbook")
    for name in ROLE_PLAYBOOKS:
        run([playbook, "-i", str(inventories["good"]), "--list-tasks",
             f"kafkaform.platform.{name}"], cwd=work, env=env)


def test_wheel_cli_checks_inventories_with_conventional_exit_codes(
        wheel_install: dict[str, str], work: Path, inventories: dict[str, Path]) -> None:
    cli = str(Path(wheel_install["VIRTUAL_ENV"]) / "bin" / "kafkaform")
    good = run([cli, "check", "-i", str(inventories["good"])], cwd=work, env=wheel_install)
    assert "no errors" in good.stderr
    bad = run([cli, "check", "-i", str(inventories["bad"])], cwd=work, env=wheel_install,
              expect=1)
    assert "[ZK-07]" in bad.stderr
    missing = run([cli, "check", "-i", str(work / "no-such-inventory")], cwd=work,
                  env=wheel_install, expect=2)
    assert "Traceback" not in missing.stderr


def test_the_wheel_installs_beside_an_operators_ansible_and_leaves_it_as_it_was(
        beside_install: dict[str, Any], work: Path, inventories: dict[str, Path],
        vault_password: Path) -> None:
    before, after, env = beside_install["before"], beside_install["after"], beside_install["env"]
    changed = {name: (version, after.get(name)) for name, version in before.items()
               if after.get(name) != version}
    assert changed == {}, changed
    assert after["ansible-core"] == OPERATORS_ANSIBLE_CORE.split("==")[1]
    assert "kafkaform" in after and "boto3" not in after and "pyinfra" not in after
    bindir = Path(env["VIRTUAL_ENV"]) / "bin"
    for argv in ([str(bindir / "kafkaform")], [str(bindir / "python"), "-m", "kafkaform"]):
        bad = run([*argv, "check", "-i", str(inventories["bad"])], cwd=work, env=env, expect=1)
        assert "[ZK-07]" in bad.stderr
    good = run([str(bindir / "ansible-playbook"), "-i", str(inventories["good"]),
                "--vault-password-file", str(vault_password), "kafkaform.platform.preflight"],
               cwd=work, env=env)
    assert "failed=0" in good.stdout
    # A part left out says which extra brings it, before touching any host.
    missing = run([str(bindir / "kafkaform"), "verify", "-i", str(inventories["good"])],
                  cwd=work, env=env, expect=2)
    assert "pip install 'kafkaform[verify]'" in missing.stderr, missing.stderr


def test_galaxy_importer_accepts_the_tarball(artifacts: dict[str, Path], work: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    # Its own ansible-lint run repeats the suite's (production profile, before these tests) on the
    # same files: a minute or two of CPU for nothing new.
    env.update(HOME=str(work / "importer-home"), PATH=f"{BIN}:{env.get('PATH', '')}",
               GALAXY_IMPORTER_RUN_ANSIBLE_LINT="false")
    result = run([sys.executable, "-m", "galaxy_importer.main", str(artifacts["tarball"])],
                 cwd=work, env=env)
    output = result.stdout + result.stderr
    assert "ERROR" not in output, output[-4000:]
    assert "Collection loading complete" in output or "Importer processing completed" in output, \
        output[-4000:]


@pytest.mark.no_hosts
def test_ansible_test_sanity_passes_on_the_collection(artifacts: dict[str, Path],
                                                      work: Path) -> None:
    """ansible-test sanity on the tarball's contents, with tests/sanity/ignore-2.19.txt.

    Its test environments live under $KAFKAFORM_CACHE/ansible-test, so later runs reuse them;
    the pip bootstrap it would download from outside the registries is tests/sanity/get_pip.py.
    """
    root = work / "sanity" / "ansible_collections" / "kafkaform" / "platform"
    root.mkdir(parents=True)
    subprocess.run(["tar", "xzf", str(artifacts["tarball"]), "-C", str(root)], check=True)
    home = Path(os.environ.get("KAFKAFORM_CACHE") or "/var/cache/kafkaform") / "ansible-test"
    source = (Path(sys.executable).parents[1] / "lib").glob(
        "python3*/site-packages/ansible_test/_internal/python_requirements.py")
    pip_version = re.search(r"pip='([\d.]+)'", next(source).read_text())
    assert pip_version, "cannot find the pip version ansible-test bootstraps"
    cache = home / ".ansible" / "test" / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    shutil.copy(CHECKOUT / "tests" / "sanity" / "get_pip.py",
                cache / f"get_pip_{pip_version.group(1).replace('.', '_')}.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env.update(HOME=str(home), PATH=f"{BIN}:{env.get('PATH', '')}",
               PIP_CACHE_DIR=os.environ.get("PIP_CACHE_DIR")
               or str(Path.home() / ".cache" / "pip"))
    result = run([str(BIN / "ansible-test"), "sanity", "--venv", "--python",
                  f"{sys.version_info.major}.{sys.version_info.minor}", "--color", "no"],
                 cwd=root, env=env, expect=None)
    assert result.returncode == 0, (result.stdout + result.stderr)[-6000:]
