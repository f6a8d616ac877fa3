"""The os_tuning role's kernel settings over what the host answers: which are set live, which are
left to the host (a container's global keys), which refuse the run, and the messages that say so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .os_tuning import unique


def left_because(key: str, state: str, container: bool, host_netns: bool,
                 prefixes: tuple[str, ...]) -> str:
    """Why ``key`` is left to the host rather than set live here; "" when it is set live.

    Inside a container only keys its own namespaces hold are set live: setting a global key from
    a privileged container would change every container on the machine.
    """
    if not container:
        return "" if state == "writable" else f"is {state} on this host"
    if not key.startswith(prefixes):
        return "is global to the machine"
    if key.startswith("net.") and host_netns:
        return "is in the host's network namespace"
    if state != "writable":
        where = "not in" if state == "absent" else "read-only in"
        return f"is {where} the container's namespace"
    return ""


def left_line(left: Mapping[str, str]) -> str:
    have = f"is {left['have']}" if left["have"] != "" else "absent here"
    return f"{left['key']} {left['why']} (wants {left['value']}, {have})"


def sysctl_messages(context: Mapping[str, Any], container: str, live: list[dict[str, str]],
                    left: list[dict[str, str]]) -> dict[str, str]:
    """The stop message (a key a real host cannot hold) and the container's report."""
    host = context["host"]
    if container == "none":
        refusal = (f"{host}: kernel settings that cannot be set here: "
                   f"{', '.join(x['key'] for x in left)} "
                   f"({'; '.join(unique(x['why'] for x in left))}). Fix: remove misspelt or "
                   "unsupported keys from os_tuning_sysctl_overrides.") if left else ""
        return {"refusal": refusal, "report": ""}
    report = (f"{host} is a container ({container}): all {len(context['sysctl'])} kernel "
              f"settings are in {context['sysctl_file']}; set live here: "
              f"{', '.join(x['key'] for x in live) or 'none'}. Left to the host, so not live "
              "here unless the host has the same value: "
              f"{'; '.join(left_line(x) for x in left)}.")
    return {"refusal": "", "report": report}


def sysctl_plan(context: Mapping[str, Any], states: Mapping[str, tuple[str, str]],
                container: str, host_netns: bool) -> dict[str, Any]:
    """Which kernel settings are set live here, which are left to the host, and the messages.

    ``states`` is what the host read found for each key: its state (writable, readonly or
    absent) and live value; ``container`` is systemd-detect-virt's name for the container the
    host is, or "none"; ``host_netns``: the machine's initial network namespace is visible
    (kafkaform.plans.os_tuning). ``apply`` lists the live ones whose value differs, compared word
    by word as ansible.posix.sysctl does, so a rerun changes nothing.
    """
    prefixes = tuple(context["namespaced_prefixes"])
    live: list[dict[str, str]] = []
    left: list[dict[str, str]] = []
    for key, value in context["sysctl"].items():
        state, have = states.get(key, ("", ""))
        why = left_because(key, state, container != "none", host_netns, prefixes)
        if why:
            left.append({"key": key, "have": have, "why": why, "value": value})
        else:
            live.append({"key": key, "have": have, "value": value})
    return {
        "container": container,
        "in_container": container != "none",
        "live": live,
        "left": left,
        "apply": [x for x in live if x["have"].split() != x["value"].split()],
        **sysctl_messages(context, container, live, left),
    }
