#!/usr/bin/python
"""kafkaform.platform.install_files: several small files installed in one call to the host
(plugins/module_utils/install_files.py); the action plugin of the same name reads their sources
on the control node (plugins/action/install_files.py)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: install_files
author: kafkaform (@kafkaform)
short_description: Install several small files and their directories on a host in one round trip
description:
  - Installs each file of O(files) with its content, owner, group and mode, writing only what
    differs, in one call to the host. M(ansible.builtin.copy) or M(ansible.builtin.template)
    cost two calls per file.
  - A changed file is written beside the old one with its owner and mode already set, then renamed
    over it, so a reader never sees half a file or a key with loose permissions.
  - Meant for small files (certificates, keys, scripts, a job's modules), as their content travels
    in the module's arguments. Use M(ansible.builtin.copy) for large ones.
options:
  directories:
    description:
      - Directories to create, or whose owner, group and mode to set, before the files are
        written, in the same call; missing parents are made with the same attributes, as
        M(ansible.builtin.file) with C(state=directory) makes them.
    type: list
    elements: dict
    default: []
    suboptions:
      path:
        description: Absolute path of the directory on the host.
        type: path
        required: true
      owner:
        description: Owner of the directory; O(owner) when not given.
        type: str
      group:
        description: Group of the directory; O(group) when not given.
        type: str
      mode:
        description: Octal mode of the directory, such as V("0750").
        type: raw
        required: true
  files:
    description: The files to install.
    type: list
    elements: dict
    default: []
    suboptions:
      dest:
        description: Absolute path on the host; its directory must exist or be in O(directories).
        type: path
        required: true
      src:
        description:
          - A file on the control node to install; exclusive with O(files[].content),
            O(files[].template) and O(files[].content_base64).
        type: path
      content:
        description:
          - The text to install; exclusive with O(files[].src), O(files[].template) and
            O(files[].content_base64).
        type: str
      template:
        description:
          - A Jinja2 template on the control node, rendered as M(ansible.builtin.template)
            renders it (C(trim_blocks), Unix newlines), with the task's variables and
            O(files[].vars); exclusive with O(files[].src) and O(files[].content).
          - Handled by the action plugin, which sends the rendered text.
        type: path
      vars:
        description: Variables added for this file's O(files[].template) only.
        type: dict
      content_base64:
        description:
          - The bytes to install, base64-encoded; exclusive with O(files[].src),
            O(files[].content) and O(files[].template).
          - The action plugin sends every file this way, reading O(files[].src) and rendering
            O(files[].template) on the control node.
        type: str
      owner:
        description: Owner of the file; O(owner) when not given.
        type: str
      group:
        description: Group of the file; O(group) when not given.
        type: str
      mode:
        description: Octal mode of the file, such as V("0640"); O(mode) when not given.
        type: raw
      validate:
        description:
          - A command that must accept a changed content before it replaces the file, run on the
            host without a shell; V(%s) stands for the new file's path, as in
            M(ansible.builtin.template). The file is left as it was when the command fails.
          - Not run in check mode, as M(ansible.builtin.template) does not.
        type: str
  host_state:
    description:
      - What a read of the host earlier in the run found at these paths, path to
        C(MODE OWNER GROUP SHA1) for a file and C(MODE OWNER GROUP directory) for a directory
        (MODE in octal as C(stat -c %a) prints it), as a role's host read reports them
        (kafkaform.plans.hostread.path_states).
      - When every directory and every file, its content's sha1 included, already matches, the
        action plugin reports no change without calling the host; otherwise, or when a path is
        missing from it, the module compares and writes as always.
      - Only for files no other task changes between that read and this task.
    type: dict
  owner:
    description: Owner of every file that names none.
    type: str
    default: root
  group:
    description: Group of every file that names none.
    type: str
    default: root
  mode:
    description: Octal mode of every file that names none.
    type: raw
    default: "0644"
attributes:
  check_mode:
    description: Reports what would change and writes nothing.
    support: full
  diff_mode:
    description: Shows the text of each changed file; set C(diff) to false on the task for keys.
    support: full
"""

EXAMPLES = r"""
- name: Install the cluster CA and the service's certificate and key
  kafkaform.platform.install_files:
    group: prometheus
    mode: "0640"
    files:
      - {src: /control/pki/ca.pem, dest: /etc/monitoring/tls/ca.pem}
      - {src: /control/pki/cert.pem, dest: /etc/monitoring/tls/cert.pem}
      - {src: /control/pki/key.pem, dest: /etc/monitoring/tls/key.pem}
  diff: false
- name: Create the service's configuration and data directories
  kafkaform.platform.install_files:
    group: zookeeper
    directories:
      - {path: /etc/zookeeper, mode: "0750"}
      - {path: /var/lib/zookeeper, owner: zookeeper, mode: "0750"}
"""

RETURN = r"""
directories:
  description: Each directory's path and what changed in it (created, owner, group, mode).
  returned: success
  type: list
  elements: dict
files:
  description: Each file's path and what changed in it (content, owner, group, mode).
  returned: success
  type: list
  elements: dict
"""

import base64
from typing import Any

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kafkaform.platform.plugins.module_utils.install_files import install

FILE_SPEC = {
    "dest": {"type": "path", "required": True},
    "src": {"type": "path"},
    "content": {"type": "str", "no_log": True},
    "template": {"type": "path"},
    "vars": {"type": "dict"},
    "content_base64": {"type": "str", "no_log": True},
    "owner": {"type": "str"},
    "group": {"type": "str"},
    "mode": {"type": "raw"},
    "validate": {"type": "str"},
}
DIRECTORY_SPEC = {
    "path": {"type": "path", "required": True},
    "owner": {"type": "str"},
    "group": {"type": "str"},
    "mode": {"type": "raw", "required": True},
}
ARGUMENT_SPEC = {
    "directories": {"type": "list", "elements": "dict", "default": [], "options": DIRECTORY_SPEC},
    "files": {"type": "list", "elements": "dict", "default": [], "options": FILE_SPEC,
              "mutually_exclusive": [("src", "content", "template", "content_base64")],
              "required_one_of": [("src", "content", "template", "content_base64")]},
    "owner": {"type": "str", "default": "root"},
    "group": {"type": "str", "default": "root"},
    "mode": {"type": "raw", "default": "0644"},
    # Read by the action plugin, which never sends it here.
    "host_state": {"type": "dict"},
}


def _content(item: dict[str, Any]) -> bytes:
    if item["content_base64"] is not None:
        return base64.b64decode(item["content_base64"])
    if item["content"] is not None:
        return str(item["content"]).encode("utf-8")
    raise ValueError(f"{item['dest']}: src and template are read on the control node by the "
                     "action plugin; "
                     "call kafkaform.platform.install_files as a task, not as a bare module")


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    params = module.params
    try:
        files = [{"dest": item["dest"], "content": _content(item), "validate": item["validate"],
                  **{key: item[key] or params[key] for key in ("owner", "group", "mode")}}
                 for item in params["files"]]
        directories = [{**item, **{key: item[key] or params[key] for key in ("owner", "group")}}
                       for item in params["directories"]]
        result = install(files, check_mode=module.check_mode, want_diff=module._diff,
                         directories=directories)
    except (ValueError, OSError) as error:
        module.fail_json(msg=str(error))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
