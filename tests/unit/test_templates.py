"""Every config template lives once, in its role, and renders to the same bytes in every engine.

Each role's template ``roles/<role>/templates/<path>.j2`` is laid out like the file it writes
(``etc/kafka/server.properties.j2`` for /etc/kafka/server.properties); one written to several
files (a unit per Spark daemon, a drop-in per unit) keeps a name of its own in their directory.
Each has a sample input, ``tests/golden/<role>/<path>.context.yml`` or else the role's shared
``tests/golden/<role>/context.yml``, and its expected output ``tests/golden/<role>/<path>``;
`pytest --update-golden` rewrites the outputs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kafkaform import render
from kafkaform.plans.files import template as role_template

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
# build/ holds the collection a local `pip wheel .` unpacked (see setup.py): a copy, not a stray.
SKIP_DIRS = {".venv", ".collections", ".git", ".cache", ".ansible", "node_modules", "build", "dist"}
#: Each template as ``(role, path under roles/<role>/templates)``.
TEMPLATES = render.all_templates()
IDS = [f"{role}/{name}" for role, name in TEMPLATES]


def context_of(role: str, name: str) -> dict[str, object]:
    path = GOLDEN / role / (name.removesuffix(".j2") + ".context.yml")
    if not path.is_file():
        path = GOLDEN / role / "context.yml"
    assert path.is_file(), f"{role}/{name} needs a sample input in {path.relative_to(ROOT)}"
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict)
    return data


def test_every_template_lives_in_its_role() -> None:
    strays = []
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        strays += [Path(dirpath, f) for f in filenames if f.endswith(".j2")]
    found = sorted(p.relative_to(ROOT).as_posix() for p in strays)
    assert found == [f"roles/{role}/templates/{name}" for role, name in TEMPLATES]
    assert not (ROOT / "templates").exists(), "templates/ moved into the roles"


@pytest.mark.parametrize(("role", "name"), TEMPLATES, ids=IDS)
def test_template_names_itself_on_line_one(role: str, name: str) -> None:
    lines = Path(role_template(role, name)).read_text().splitlines()
    first = lines[1] if lines[0].startswith("#!") else lines[0]  # a script's shebang comes first
    assert "Managed by kafkaform" in first and f"roles/{role}/templates/{name}" in first


@pytest.mark.parametrize(("role", "name"), TEMPLATES, ids=IDS)
def test_template_matches_its_golden_file(role: str, name: str,
                                          request: pytest.FixtureRequest) -> None:
    rendered = render.render(role_template(role, name), context_of(role, name))
    golden = GOLDEN / role / name.removesuffix(".j2")
    if request.config.getoption("--update-golden"):
        golden.write_text(rendered)
    assert golden.is_file(), f"run pytest --update-golden to create {golden}"
    assert rendered == golden.read_text()


def test_rendering_is_deterministic() -> None:
    for role, name in TEMPLATES:
        context = context_of(role, name)
        path = role_template(role, name)
        assert render.render(path, context) == render.render(path, context)


@pytest.mark.skipif(not TEMPLATES, reason="no templates yet")
def test_ansible_renders_the_same_bytes(tmp_path: Path) -> None:
    """One local play renders every template with Ansible's template module."""
    tasks = []
    for index, (role, name) in enumerate(TEMPLATES):
        tasks.append({
            "name": f"Render {role}/{name}",
            "ansible.builtin.template": {"src": role_template(role, name),
                                         "dest": str(tmp_path / f"{index}.out")},
            "vars": context_of(role, name),
        })
    playbook = tmp_path / "render.yml"
    playbook.write_text(yaml.safe_dump([{
        "name": "Render every template", "hosts": "localhost", "gather_facts": False,
        "connection": "local", "collections": ["kafkaform.platform"], "tasks": tasks}]))
    bin_dir = Path(sys.executable).parent
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"))
    result = subprocess.run([str(bin_dir / "ansible-playbook"), "-i", "localhost,",
                             "-e", f"ansible_python_interpreter={sys.executable}",
                             str(playbook)], capture_output=True, text=True, cwd=ROOT, env=env,
                            check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    for index, (role, name) in enumerate(TEMPLATES):
        assert (tmp_path / f"{index}.out").read_text() == render.render(
            role_template(role, name), context_of(role, name)), name
