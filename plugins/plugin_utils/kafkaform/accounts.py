"""Whether a service account is on a host as a role declares it, from `getent`'s answers.

A role's first read of its host prints `getent passwd USER` and `getent group GROUP`; when they
show the account as declared, the role skips its group and user tasks, which would change
nothing (ansible.builtin.user compares an existing user's primary group, home, shell and
comment, and ansible.builtin.group an existing group's name only, when no gid is given).
"""

from __future__ import annotations


def account_as_declared(passwd_entry: str, group_entry: str, home: str, shell: str,
                        comment: str | None = None) -> bool:
    """True when the user and its group exist and the user has the declared primary group,
    home, shell and (when one is declared) comment.

    + passwd_entry: ``name:password:uid:gid:comment:home:shell``, or "" for no such user
    + group_entry: ``name:password:gid:members``, or "" for no such group
    """
    user = passwd_entry.strip().split(":")
    group = group_entry.strip().split(":")
    if len(user) != 7 or len(group) != 4:
        return False
    _name, _password, _uid, gid, gecos, user_home, user_shell = user
    return (gid == group[2] and user_home == home and user_shell == shell
            and (comment is None or gecos == comment))
