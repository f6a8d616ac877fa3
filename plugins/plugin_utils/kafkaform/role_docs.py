"""Role READMEs, generated from each role's ``meta/argument_specs.yml``.

Every role under ``roles/`` gets a ``README.md`` (Galaxy's importer requires one) rendered from the
``main`` entry point of its argument spec, its ``meta/main.yml``, the collection playbooks that
apply it and the roles its tasks include, so what a README says about a variable is what Ansible
validates. ``tests/unit/test_role_docs.py`` fails when a README differs from its rendering::

    python -m kafkaform.role_docs           # write roles/*/README.md
    python -m kafkaform.role_docs --check   # exit 1, listing the READMEs that differ
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

COLLECTION = "kafkaform.platform"

HEADER = ("<!-- Generated from meta/argument_specs.yml: edit that, then run "
          "`python -m kafkaform.role_docs`. -->")

WIDTH = 100

# Ansible documentation markup (ansible-doc) and what it becomes in Markdown.
_MARKUP = re.compile(r"\b(RV|[CVOEPMIBUL])\(([^)]*)\)")
_CODE_MARKUP = {"C", "V", "O", "RV", "E", "P", "M"}
_CODE_SPAN = re.compile(r"(`[^`]*`)")
# A wrapped line starting like this would turn into a list item, heading, quote or table row.
_UNSAFE_LINE_START = re.compile(r"^(?:[-+*>#=|]|\d+[.)](?:\s|$)|```)")


def _escape(text: str) -> str:
    """Plain text as Markdown: no emphasis, HTML or escapes where the text means none."""
    text = text.replace("\\", "\\\\").replace("*", "\\*").replace("<", "\\<")
    # An underscore inside a word (os_tuning_sysctl) never starts emphasis; elsewhere it may.
    return re.sub(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])", r"\\_", text)


def _plain(text: str) -> str:
    """Text without Ansible markup, escaped outside code spans."""
    return "".join(part if part.startswith("`") and part.endswith("`") and len(part) > 1
                   else _escape(part) for part in _CODE_SPAN.split(text))


def markdown_text(text: str) -> str:
    """Description text as Markdown: Ansible markup (C(), O(), I(), L()...) converted, the rest
    escaped so that it reads as written."""
    out: list[str] = []
    last = 0
    for match in _MARKUP.finditer(text):
        out.append(_plain(text[last:match.start()]))
        kind, inner = match.groups()
        if kind in _CODE_MARKUP:
            out.append(f"`{inner}`")
        elif kind == "I":
            out.append(f"*{_escape(inner)}*")
        elif kind == "B":
            out.append(f"**{_escape(inner)}**")
        elif kind == "U":
            out.append(f"<{inner}>")
        else:  # L(text,url)
            label, _comma, url = inner.partition(",")
            out.append(f"[{_escape(label.strip())}]({url.strip()})")
        last = match.end()
    out.append(_plain(text[last:]))
    return "".join(out)


def wrap(paragraph: str, width: int = WIDTH) -> str:
    """A Markdown paragraph wrapped at ``width``, never starting a line with list, heading or
    quote syntax (such a line is kept on the line before, however long)."""
    lines: list[str] = []
    for line in textwrap.wrap(paragraph, width, break_long_words=False, break_on_hyphens=False):
        if lines and _UNSAFE_LINE_START.match(line):
            lines[-1] += " " + line
        else:
            lines.append(line)
    return "\n".join(lines)


def bullet(item: str, width: int = WIDTH) -> list[str]:
    """A Markdown list item (``- text``) wrapped, its continuation lines indented under it."""
    first, *rest = wrap(item.removeprefix("- "), width - 2).split("\n")
    return [f"- {first}", *(f"  {line}" for line in rest)]


def sentence(text: str) -> str:
    """``text`` ending with a full stop unless it already ends with punctuation."""
    return text if not text or text[-1] in ".!?:;)" else text + "."


def paragraphs(description: Any) -> list[str]:
    """An argument spec description (a string or a list of them) as wrapped Markdown
    paragraphs."""
    if description is None:
        return []
    items = description if isinstance(description, list) else [description]
    return [wrap(markdown_text(" ".join(str(item).split()))) for item in items if str(item)]


class _Dumper(yaml.SafeDumper):
    """YAML as people write it: nested lists indented, multi-line strings as blocks."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def type_of(spec: Mapping[str, Any]) -> str:
    """The option's type as the spec gives it (``str`` when unset, as Ansible assumes)."""
    kind = str(spec.get("type", "str"))
    if kind == "list" and spec.get("elements"):
        return f"list of {spec['elements']}"
    return kind


def yaml_lines(name: str, spec: Mapping[str, Any]) -> list[str]:
    """``name: default`` as YAML, its first line commented with the type (and required)."""
    note = type_of(spec) + (", required" if spec.get("required") else "")
    if "default" not in spec:
        return [f"{name}:  # {note}"]
    dumped = yaml.dump({name: spec["default"]}, Dumper=_Dumper, default_flow_style=False,
                       sort_keys=False, width=WIDTH, allow_unicode=True)
    lines = dumped.rstrip("\n").split("\n")
    lines[0] += f"  # {note}"
    return lines


def _code(value: Any) -> str:
    text = value if isinstance(value, str) else yaml.safe_dump(
        value, default_flow_style=True, width=10**6).strip()
    text = text.removesuffix("\n...").strip()
    return f"`{text}`"


def _choices(spec: Mapping[str, Any]) -> str:
    return ", ".join(_code(c) for c in spec.get("choices") or ())


def _suboptions(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    options = spec.get("options") or spec.get("suboptions") or {}
    return options if isinstance(options, Mapping) else {}


def suboption_lines(options: Mapping[str, Any], depth: int = 0) -> list[str]:
    """A nested bullet list of suboptions: name, type, required/default, choices, description."""
    lines: list[str] = []
    indent = "  " * depth
    for name, spec in options.items():
        spec = spec or {}
        facts = [f"`{type_of(spec)}`"]
        if spec.get("required"):
            facts.append("required")
        if "default" in spec:
            facts.append(f"default {_code(spec['default'])}")
        if spec.get("choices"):
            facts.append(f"one of {_choices(spec)}")
        text = " ".join(" ".join(p.split()) for p in paragraphs(spec.get("description")))
        item = f"- `{name}` ({', '.join(facts)})" + (f": {text}" if text else "")
        lines += [indent + line for line in bullet(item, WIDTH - len(indent))]
        lines += suboption_lines(_suboptions(spec), depth + 1)
    return lines


def _groups(options: Mapping[str, Any]) -> Iterator[list[tuple[str, Mapping[str, Any]]]]:
    """Options in spec order, consecutive ones sharing a description and no suboptions grouped
    (they are documented together, like the JMX settings)."""
    group: list[tuple[str, Mapping[str, Any]]] = []
    for name, spec in options.items():
        spec = spec or {}
        if (group and not _suboptions(spec) and not _suboptions(group[-1][1])
                and spec.get("description") == group[-1][1].get("description")):
            group.append((name, spec))
            continue
        if group:
            yield group
        group = [(name, spec)]
    if group:
        yield group


def option_sections(options: Mapping[str, Any]) -> list[str]:
    """Role Variables: each option (or group) as a YAML block with its default, then its
    description, choices, list elements and suboptions."""
    lines: list[str] = []
    for group in _groups(options):
        lines.append("```yaml")
        for name, spec in group:
            lines += yaml_lines(name, spec)
        lines += ["```", ""]
        for paragraph in paragraphs(group[0][1].get("description")):
            lines += [paragraph, ""]
        for name, spec in group:
            if spec.get("choices"):
                lines += [f"Choices of `{name}`: {_choices(spec)}.", ""]
        for name, spec in group:
            subs = _suboptions(spec)
            if subs:
                lines += [f"Each item of `{name}`:", "", *suboption_lines(subs), ""]
    return lines


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text()) if path.is_file() else None


def _task_files(role_dir: Path) -> list[Path]:
    return sorted((role_dir / "tasks").glob("*.yml")) + sorted(
        (role_dir / "handlers").glob("*.yml"))


def _walk(node: Any) -> Iterator[Mapping[str, Any]]:
    if isinstance(node, list):
        for item in node:
            yield from _walk(item)
    elif isinstance(node, Mapping):
        yield node
        for value in node.values():
            if isinstance(value, list | Mapping):
                yield from _walk(value)


def included_roles(role_dir: Path) -> list[str]:
    """Other roles this role's tasks include or import, by name as written."""
    found: dict[str, None] = {}
    for path in _task_files(role_dir):
        for node in _walk(load_yaml(path)):
            for key, value in node.items():
                if str(key).rsplit(".", 1)[-1] in ("include_role", "import_role") \
                        and isinstance(value, Mapping) and value.get("name"):
                    name = str(value["name"])
                    if name.rsplit(".", 1)[-1] != role_dir.name:
                        found[name] = None
    return list(found)


def _role_names(play: Any) -> list[str]:
    entries = play.get("roles") or () if isinstance(play, Mapping) else ()
    return [str(e.get("role") or e.get("name")) if isinstance(e, Mapping) else str(e)
            for e in entries]


def playbooks_applying(collection: Path, role: str) -> list[tuple[str, str]]:
    """``(playbook name, hosts)`` of each collection playbook with a play that lists the role
    (its first such play)."""
    found: list[tuple[str, str]] = []
    for path in sorted((collection / "playbooks").glob("*.yml")):
        plays = load_yaml(path)
        for play in plays if isinstance(plays, list) else []:
            if {role, f"{COLLECTION}.{role}"} & set(_role_names(play)):
                found.append((path.stem, str(play.get("hosts", "all"))))
                break
    return found


def _requirements_section(info: Mapping[str, Any]) -> list[str]:
    lines = ["## Requirements", ""]
    requirements = []
    if info.get("min_ansible_version"):
        requirements.append(f"ansible-core {info['min_ansible_version']} or later on the "
                            "controller.")
    requirements.append(f"The collection `{COLLECTION}` with its dependencies, and the Python "
                        "packages of its `requirements.txt` on the controller: the roles' filters "
                        "call the `kafkaform` package.")
    platforms = [f"{p['name']} {' '.join(str(v) for v in p.get('versions') or ())}".strip()
                 for p in info.get("platforms") or () if isinstance(p, Mapping) and p.get("name")]
    if platforms:
        requirements.append(f"Target hosts: {', '.join(platforms)}.")
    for requirement in requirements:
        lines += bullet(f"- {requirement}")
    lines.append("")
    return lines


def _variables_section(role_dir: Path, options: Mapping[str, Any]) -> list[str]:
    lines = ["## Role Variables", ""]
    if not options:
        return [*lines, "None.", ""]
    where = "`meta/argument_specs.yml`"
    if (role_dir / "defaults" / "main.yml").is_file():
        where += "; why each default: `defaults/main.yml`"
    lines += [wrap("Available variables are listed below, along with their types and default "
                   f"values ({where}). Ansible checks every variable against the argument "
                   "spec before the role runs."), ""]
    return lines + option_sections(options)


def _entry_points_section(specs: Mapping[str, Any]) -> list[str]:
    """The role's entry points besides main, for ``tasks_from``; none, no section."""
    others = {name: spec for name, spec in specs.items() if name != "main"}
    if not others:
        return []
    lines = ["## Other Entry Points", "",
             wrap("Run with `tasks_from` (`ansible.builtin.include_role`); each takes the "
                  "variables of the same name above."), ""]
    for name, spec in others.items():
        text = " ".join(" ".join(p.split())
                        for p in paragraphs((spec or {}).get("short_description")))
        lines += bullet(f"- `{name}`: {sentence(text)}")
    lines.append("")
    return lines


def _dependencies_section(role_dir: Path, meta: Mapping[str, Any]) -> list[str]:
    lines = ["## Dependencies", ""]
    dependencies = [str(d.get("role") or d.get("name")) if isinstance(d, Mapping) else str(d)
                    for d in meta.get("dependencies") or ()]
    lines.append(", ".join(f"`{d}`" for d in dependencies) if dependencies else "None.")
    included = included_roles(role_dir)
    if included:
        lines += ["", wrap("Its tasks include " + ", ".join(f"`{r}`" for r in included)
                           + " from the same collection.")]
    lines.append("")
    return lines


def _example_section(collection: Path, role: str, options: Mapping[str, Any]) -> list[str]:
    """A play applying the role, the variables it must be given, and the collection's playbooks
    that apply it."""
    applying = playbooks_applying(collection, role)
    hosts = applying[0][1] if applying else "all"
    lines = ["## Example Playbook", "", "```yaml", f"- hosts: {hosts}", "  roles:",
             f"    - role: {COLLECTION}.{role}", "```", ""]
    required = [name for name, spec in options.items()
                if (spec or {}).get("required") and "default" not in (spec or {})]
    if required:
        lines += [wrap("Variables without a default must be set, per host or per play: "
                       + ", ".join(f"`{name}`" for name in required) + "."), ""]
    for playbook, play_hosts in applying:
        lines += [wrap(f"The collection's playbook `playbooks/{playbook}.yml` applies the role "
                       f"to `{play_hosts}`:"), "", "```sh",
                  f"ansible-playbook -i inventory {COLLECTION}.{playbook}", "```", ""]
    return lines


def render_role(role_dir: Path, collection: Path) -> str:
    """The README of one role, from its argument spec, meta and the collection's playbooks."""
    role = role_dir.name
    specs = (load_yaml(role_dir / "meta" / "argument_specs.yml") or {}).get("argument_specs", {})
    main = specs.get("main") or {}
    meta = load_yaml(role_dir / "meta" / "main.yml") or {}
    info = meta.get("galaxy_info") or {}
    options: Mapping[str, Any] = main.get("options") or {}

    lines = [HEADER, "", f"# Ansible Role: {COLLECTION}.{role}", ""]
    for paragraph in [sentence(p) for p in paragraphs(main.get("short_description"))] + \
            paragraphs(main.get("description")):
        lines += [paragraph, ""]
    lines += _requirements_section(info)
    lines += _variables_section(role_dir, options)
    lines += _entry_points_section(specs)
    lines += _dependencies_section(role_dir, meta)
    lines += _example_section(collection, role, options)
    lines += ["## License", "", str(info.get("license") or "Apache-2.0"), ""]
    if info.get("author"):
        lines += ["## Author Information", "", f"{info['author']}.", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def role_dirs(collection: Path) -> list[Path]:
    """Every role of the collection: a directory under roles/ with an argument spec."""
    return sorted(p.parent.parent for p in (collection / "roles").glob(
        "*/meta/argument_specs.yml"))


def drifted(collection: Path) -> list[Path]:
    """READMEs that are missing or differ from their rendering."""
    stale = []
    for role_dir in role_dirs(collection):
        readme = role_dir / "README.md"
        if not readme.is_file() or readme.read_text() != render_role(role_dir, collection):
            stale.append(readme)
    return stale


def write(collection: Path) -> list[Path]:
    """Write every README that differs; return those written."""
    written = drifted(collection)
    for readme in written:
        readme.write_text(render_role(readme.parent, collection))
    return written


def main(argv: Sequence[str] | None = None) -> int:
    from .paths import collection_root

    parser = argparse.ArgumentParser(prog="python -m kafkaform.role_docs",
                                     description="Write roles/*/README.md from each role's "
                                     "meta/argument_specs.yml.")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 listing the READMEs that differ")
    parser.add_argument("--collection", type=Path, default=None,
                        help="the collection root holding roles/ (default: this package's)")
    args = parser.parse_args(argv)
    collection: Path = args.collection or collection_root()
    if args.check:
        stale = drifted(collection)
        for readme in stale:
            print(f"{readme} differs from meta/argument_specs.yml", file=sys.stderr)
        if stale:
            print("regenerate them: python -m kafkaform.role_docs", file=sys.stderr)
        return 1 if stale else 0
    for readme in write(collection):
        print(f"wrote {readme}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
