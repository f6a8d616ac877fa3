"""Role READMEs: each one is what kafkaform.role_docs renders from the role's argument spec."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kafkaform import role_docs

ROOT = Path(__file__).resolve().parents[2]


def roles() -> list[str]:
    return sorted(p.name for p in (ROOT / "roles").iterdir() if p.is_dir())


def test_every_role_has_an_argument_spec_to_render_from() -> None:
    assert [p.name for p in role_docs.role_dirs(ROOT)] == roles()


@pytest.mark.parametrize("role", roles())
def test_readme_is_the_rendered_argument_spec(role: str) -> None:
    readme = ROOT / "roles" / role / "README.md"
    assert readme.is_file(), f"{readme} is missing: run python -m kafkaform.role_docs"
    assert readme.read_text() == role_docs.render_role(readme.parent, ROOT), \
        f"{readme} differs from meta/argument_specs.yml: run python -m kafkaform.role_docs"


def shown_defaults(readme: str) -> dict[str, Any]:
    """The variables of a README's Role Variables section, loaded from its YAML blocks."""
    section = readme.split("## Role Variables\n", 1)[1].split("\n## ", 1)[0]
    shown: dict[str, Any] = {}
    for block in section.split("```yaml\n")[1:]:
        shown.update(yaml.safe_load(block.split("```", 1)[0]))
    return shown


def defaults_of(spec: dict[str, Any]) -> dict[str, Any]:
    """Each main option's default, None for one without (how its YAML line loads)."""
    options = spec["argument_specs"]["main"].get("options") or {}
    return {name: option.get("default") for name, option in options.items()}


@pytest.mark.parametrize("role", roles())
def test_readme_shows_every_default_as_yaml_that_loads_back(role: str) -> None:
    readme = (ROOT / "roles" / role / "README.md").read_text()
    spec = yaml.safe_load((ROOT / "roles" / role / "meta" / "argument_specs.yml").read_text())
    assert shown_defaults(readme) == defaults_of(spec)


SPEC: dict[str, Any] = {
    "argument_specs": {
        "main": {
            "short_description": "Run the demo service",
            "description": ["Installs C(demo) under O(demo_home).", "Never as root."],
            "options": {
                "demo_port": {"type": "int", "default": 8080, "description": "Listen port."},
                "demo_mode": {"type": "str", "default": "fast", "choices": ["fast", "safe"],
                              "description": "How it runs."},
                "demo_home": {"type": "path", "default": "/opt/demo",
                              "description": "Install directory, e.g. /opt/demo-<version>."},
                "demo_tags": {"type": "list", "elements": "str", "default": ["a", "b"],
                              "description": "Tags."},
                "demo_token": {"type": "str", "required": True, "description": "API token."},
                "demo_disks": {"type": "list", "elements": "dict", "default": [],
                               "description": "Disks.",
                               "options": {"path": {"type": "path", "required": True,
                                                    "description": "Device."},
                                           "fs": {"type": "str", "default": "xfs",
                                                  "choices": ["xfs", "ext4"],
                                                  "description": "Filesystem."}}},
            },
        },
    },
}


def fake_collection(root: Path, spec: dict[str, Any] = SPEC) -> Path:
    role = root / "roles" / "demo"
    (role / "meta").mkdir(parents=True)
    (role / "meta" / "argument_specs.yml").write_text(yaml.safe_dump(spec, sort_keys=False))
    (role / "meta" / "main.yml").write_text(yaml.safe_dump({
        "galaxy_info": {"author": "demo people", "license": "Apache-2.0",
                        "min_ansible_version": "2.19",
                        "platforms": [{"name": "Debian", "versions": ["bookworm"]}]},
        "dependencies": []}))
    (root / "playbooks").mkdir()
    (root / "playbooks" / "demo.yml").write_text(yaml.safe_dump([
        {"name": "Demo", "hosts": "demo_hosts", "roles": [{"role": "kafkaform.platform.demo"}]}]))
    return role


def test_renderer_shows_types_defaults_choices_and_the_playbook(tmp_path: Path) -> None:
    text = role_docs.render_role(fake_collection(tmp_path), tmp_path)
    assert text.startswith(role_docs.HEADER + "\n")
    assert "# Ansible Role: kafkaform.platform.demo" in text
    assert "Run the demo service.\n\nInstalls `demo` under `demo_home`.\n\nNever as root." in text
    assert "```yaml\ndemo_port: 8080  # int\n```" in text
    assert "demo_mode: fast  # str" in text and "Choices of `demo_mode`: `fast`, `safe`." in text
    assert "demo_tags:  # list of str\n  - a\n  - b\n" in text
    assert "demo_token:  # str, required" in text
    assert "Variables without a default must be set, per host or per play: `demo_token`." in text
    assert "- `path` (`path`, required): Device." in text
    assert "- `fs` (`str`, default `xfs`, one of `xfs`, `ext4`): Filesystem." in text
    assert "/opt/demo-\\<version>" in text  # not swallowed as an HTML tag
    assert "- hosts: demo_hosts\n  roles:\n    - role: kafkaform.platform.demo" in text
    assert "ansible-playbook -i inventory kafkaform.platform.demo" in text
    assert "## Dependencies\n\nNone." in text
    assert "## License\n\nApache-2.0" in text
    assert shown_defaults(text) == defaults_of(SPEC)


def test_check_passes_after_writing_and_fails_when_the_spec_changes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    role = fake_collection(tmp_path)
    readme = role / "README.md"
    assert role_docs.main(["--check", "--collection", str(tmp_path)]) == 1  # missing
    assert role_docs.main(["--collection", str(tmp_path)]) == 0
    assert readme.is_file()
    assert role_docs.main(["--check", "--collection", str(tmp_path)]) == 0
    capsys.readouterr()

    spec = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text())
    spec["argument_specs"]["main"]["options"]["demo_port"]["default"] = 9090
    (role / "meta" / "argument_specs.yml").write_text(yaml.safe_dump(spec, sort_keys=False))
    before = readme.read_text()
    assert role_docs.main(["--check", "--collection", str(tmp_path)]) == 1
    assert str(readme) in capsys.readouterr().err
    assert readme.read_text() == before  # --check writes nothing
    assert role_docs.main(["--collection", str(tmp_path)]) == 0
    assert "demo_port: 9090  # int" in readme.read_text()


@pytest.mark.parametrize(("text", "markdown"), [
    ("C(/etc/fstab) and O(name) and V(true)", "`/etc/fstab` and `name` and `true`"),
    ("I(never) B(twice)", "*never* **twice**"),
    ("L(the docs,https://example.org/x) U(https://example.org)",
     "[the docs](https://example.org/x) <https://example.org>"),
    ("kafka-<version> under lib/* keeps os_tuning_sysctl and '__'",
     "kafka-\\<version> under lib/\\* keeps os_tuning_sysctl and '\\_\\_'"),
    ("`lib/*` stays as written", "`lib/*` stays as written"),
])
def test_markup_becomes_markdown(text: str, markdown: str) -> None:
    assert role_docs.markdown_text(text) == markdown


def test_wrapped_lines_never_start_a_list_or_heading() -> None:
    paragraph = ("word " * 19) + "- not a list item " + ("word " * 19) + "# not a heading"
    for line in role_docs.wrap(paragraph, 40).split("\n")[1:]:
        assert not line.startswith(("-", "#"))
