"""Action kafkaform.platform.install_files: reads or renders each file on the control node and
hands every file to the module of the same name in one call to the host; the module documents
it."""

from __future__ import annotations

import base64
import hashlib
import os
from typing import Any

from ansible.errors import AnsibleActionFail, AnsibleError
from ansible.plugins.action import ActionBase
from ansible.template import trust_as_template

#: Where a file's bytes come from: exactly one per file.
SOURCES = ("src", "content", "template")
#: As ansible.builtin.template renders, so both give the same bytes.
TEMPLATE_OVERRIDES = {"trim_blocks": True, "lstrip_blocks": False, "newline_sequence": "\n"}


def _octal(value: Any) -> str:
    """A mode as ``stat -c %a`` prints it: an int YAML made of 0640, or an octal string."""
    return format(value if isinstance(value, int) else int(str(value), 8), "o")


def _in_place(args: dict[str, Any], sent: list[dict[str, Any]], state: dict[str, str]) -> bool:
    """Whether the host state a role's host read found (kafkaform.plans.hostread.path_states)
    shows every directory and every file as the module would leave it: then the module would
    change nothing, and is not called. A path the read did not see is not in place."""
    def owned(item: dict[str, Any]) -> str:
        return f"{item.get('owner') or args.get('owner') or 'root'} " \
               f"{item.get('group') or args.get('group') or 'root'}"

    for item in args.get("directories") or []:
        path = os.path.normpath(str(item["path"]))
        if state.get(path) != f"{_octal(item['mode'])} {owned(item)} directory":
            return False
    for item in sent:
        digest = hashlib.sha1(base64.b64decode(item["content_base64"]),
                              usedforsecurity=False).hexdigest()
        mode = _octal(item.get("mode") or args.get("mode") or "0644")
        if state.get(str(item["dest"])) != f"{mode} {owned(item)} {digest}":
            return False
    return True


class ActionModule(ActionBase):  # type: ignore[misc]  # untyped base
    TRANSFERS_FILES = False
    _supports_check_mode = True

    def _rendered(self, item: dict[str, Any], task_vars: dict[str, Any]) -> bytes:
        source = self._find_needle("templates", str(item["template"]))
        text = trust_as_template(self._loader.get_text_file_contents(source))
        searchpath = [*task_vars.get("ansible_search_path", []), self._loader._basedir,
                      os.path.dirname(source)]
        templar = self._templar.copy_with_new_env(
            searchpath=[path for base in searchpath
                        for path in (os.path.join(base, "templates"), base)],
            available_variables={**task_vars, **(item.get("vars") or {})})
        rendered = templar.template(text, escape_backslashes=False, overrides=TEMPLATE_OVERRIDES)
        return str(rendered or "").encode("utf-8")

    def _bytes(self, item: dict[str, Any], task_vars: dict[str, Any]) -> bytes:
        given = [key for key in SOURCES if item.get(key) is not None]
        if len(given) != 1:
            raise AnsibleActionFail(f"{item['dest']}: give exactly one of {', '.join(SOURCES)}")
        if given == ["content"]:
            return str(item["content"]).encode("utf-8")
        if given == ["template"]:
            return self._rendered(item, task_vars)
        source = self._find_needle("files", str(item["src"]))
        try:
            # Decrypted when vault-encrypted (the control node's keys are), as copy does.
            real = self._loader.get_real_file(source, decrypt=True)
            try:
                with open(real, "rb") as handle:
                    return handle.read()
            finally:
                self._loader.cleanup_tmp_file(real)
        except (OSError, AnsibleError) as error:
            raise AnsibleActionFail(f"{item['dest']}: cannot read {source}: {error}") from error

    def run(self, tmp: str | None = None,
            task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = super().run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        args = dict(self._task.args)
        files = args.get("files", [])
        if not isinstance(files, list) or not all(isinstance(f, dict) and f.get("dest")
                                                  for f in files):
            raise AnsibleActionFail("files must be a list of mappings, each with a dest")
        sent = [{**{k: v for k, v in item.items() if k not in (*SOURCES, "vars")},
                 "content_base64": base64.b64encode(self._bytes(item, task_vars)).decode("ascii")}
                for item in files]
        state = args.pop("host_state", None)
        if state is not None and not isinstance(state, dict):
            raise AnsibleActionFail("host_state must be a mapping of path to state")
        if state and _in_place(args, sent, state):
            result.update(changed=False, files=[{"dest": item["dest"], "changes": []}
                                                for item in sent],
                          directories=[{"path": str(item["path"]), "changes": []}
                                       for item in args.get("directories") or []])
            return result
        result.update(self._execute_module(
            module_name="kafkaform.platform.install_files",
            module_args={**args, "files": sent}, task_vars=task_vars))
        self._remove_tmp_path(self._connection._shell.tmpdir)
        return result
