"""Every config template lives once in templates/ and renders to the same bytes in every engine.

Each template ``templates/<c>/<name>.j2`` has a sample input,
``tests/golden/<c>/<name>.context.yml`` or else the component's shared
``tests/golden/<c>/context.yml``, and its expected output
``tests/golden/<c>/<name>``; `pytest --update-golden` rewrites the outputs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kafkaform import render
from kafkaform.paths import templates_dir

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
# build/ holds the collection a local `pip wheel .` unpacked (see setup.py): a copy, not a stray.
SKIP_DIRS = {".venv", ".collections", ".git", ".cache", ".ansible", "node_modules", "build", "dist"}
TEMPLATES = render.all_templates()


def context_of(template: str) -> dict[str, object]:
    path = GOLDEN / (template.removesuffix(".j2") + ".context.yml")
    if not path.is_file():
        path = GOLDEN / Path(template).parent / "context.yml"
    assert path.is_file(), f"{template} needs a sample input in {path.relative_to(ROOT)}"
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict)
    return data


def test_no_template_lives_outside_templates_dir() -> None:
    strays = []
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        strays += [Path(dirpath, f) for f in filenames if f.endswith(".j2")]
    assert all(templates_dir() in p.parents for p in strays), strays


@pytest.mark.parametrize("template", TEMPLATES)
def test_template_names_itself_on_line_one(template: str) -> None:
    lines = (templates_dir() / template).read_text().splitlines()
    first = lines[1] if lines[0].startswith("#!") else lines[0]  # a script's shebang comes first
    assert "Managed by kafkaform" in first and f"templates/{template}" in first


@pytest.mark.parametrize("template", TEMPLATES)
def test_template_matches_its_golden_file(template: str, request: pytest.FixtureRequest) -> None:
    rendered = render.render(template, context_of(template))
    golden = GOLDEN / template.removesuffix(".j2")
    if request.config.getoption("--update-golden"):
        golden.write_text(rendered)
    assert golden.is_file(), f"run pytest --update-golden to create {golden}"
    assert rendered == golden.read_text()


def test_rendering_is_deterministic() -> None:
    for template in TEMPLATES:
        context = context_of(template)
        assert render.render(template, context) == render.render(template, context)


@pytest.mark.skipif(not TEMPLATES, reason="no templates yet")
def test_ansible_renders_the_same_bytes(tmp_path: Path) -> None:
    """One local play renders every template with Ansible's template module."""
    tasks = []
    for index, template in enumerate(TEMPLATES):
        tasks.append({
            "name": f"Render {template}",
            "ansible.builtin.template": {"src": str(templates_dir() / template),
                                         "dest": str(tmp_path / f"{index}.out")},
            "vars": context_of(template),
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
    for index, template in enumerate(TEMPLATES):
        assert (tmp_path / f"{index}.out").read_text() == render.render(
            template, context_of(template)), template
