# Managed by kafkaform (roles/kafka_broker/files/kafkaform_quorum.py); local edits are lost.
"""A KRaft node's storage and the controllers' quorum membership: formatting a node's log
directories with the cluster id (KR-07), and on a dynamic quorum (KIP-853, KR-15) a controller
joining the voters once it has caught up and one leaving them (OP-12). ``kafkaform-kafka`` calls
it (storage, quorum-join, quorum-remove); it sits beside ``kafkaform_tools.py``.

A dynamic quorum's voters are (node id, directory id) pairs kept in the metadata log, changed
one at a time by Kafka's MetadataQuorumCommand (add-controller, remove-controller). A controller
formatted without initial controllers starts as an observer; it is added once its lag is small,
and the quorum's majority then counts it. A host that replaces a controller under the same node
id has a new directory id: Kafka takes one voter per node id, so the old pair (the dead host's)
leaves first, once the other voters are caught up, then the new one joins; no live voter leaves.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import socket
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kafkaform_admin import properties
from kafkaform_tools import METADATA_QUORUM, STORAGE_TOOL, describe_quorum, replication_rows

#: How often quorum-join and quorum-remove look again, in seconds.
POLL_S = 2.0
#: The properties of server.properties that add-controller reads of the controller it adds:
#: its id, its listeners and where its metadata log (and so its directory id) is.
CONTROLLER_KEYS = ("node.id", "process.roles", "controller.listener.names", "listeners",
                   "advertised.listeners", "log.dirs", "metadata.log.dir")
VOTERS = re.compile(r"^CurrentVoters:\s*(?P<voters>\[.*\])\s*$", re.M)


def storage(tools: Any, cluster_id: str, owner: str, initial: str = "",
            no_initial: bool = False) -> int:
    """Format, with ``cluster_id``, every log directory of server.properties that has no
    meta.properties yet; refuse, naming it, one formatted for another cluster (KR-07). A
    controller of a dynamic quorum is formatted with the quorum's first voters (``initial``), or
    as one that joins later (``no_initial``, KR-15)."""
    dirs = [d for d in tools.server.get("log.dirs", "").split(",") if d]
    dirs += [d for d in [tools.server.get("metadata.log.dir", "")] if d and d not in dirs]
    blank = []
    for directory in dirs:
        meta = os.path.join(directory, "meta.properties")
        if not os.path.exists(meta):
            blank.append(directory)
            continue
        found = properties(meta).get("cluster.id", "")
        if found != cluster_id:
            raise SystemExit(
                f"kafkaform-kafka: {directory} is formatted for cluster {found or '(none)'}, not "
                f"{cluster_id}: kafkaform never formats a used directory (KR-07). If this node "
                f"belongs to cluster {found}, set kafka_cluster_id: {found}; if not, move the "
                "directory away yourself")
    if blank and not tools.args.dry_run:
        # The run's reads said no controller holds a metadata log, but a run limited to some
        # hosts reads only those: a quorum that answers is joined, never formed again.
        if initial and running_quorum(tools):
            initial, no_initial = "", True
        quorum = (["--initial-controllers", initial] if initial
                  else ["--no-initial-controllers"] if no_initial else [])
        # One argument: a cluster id may begin with "-" (base64url), which a separate value
        # would pass as an option.
        tools.run(STORAGE_TOOL, "format", f"--cluster-id={cluster_id}",
                  "--config", f"{tools.args.conf}/server.properties", "--ignore-formatted",
                  *quorum)
        user, _colon, group = owner.partition(":")
        for directory in blank:
            for root, subdirs, files in os.walk(directory):
                for name in [root, *(os.path.join(root, f) for f in subdirs + files)]:
                    shutil.chown(name, user, group or None)
    print(json.dumps({"formatted": blank}))
    return 0


def running_quorum(tools: Any) -> bool:
    """Whether a controller of server.properties listens and the quorum names its voters (a
    new cluster's controllers are all formatted before any starts: nothing listens)."""
    def listens(endpoint: str) -> bool:
        host, _colon, port = endpoint.rpartition(":")
        try:
            with socket.create_connection((host, int(port)), timeout=2):
                return True
        except (OSError, ValueError):
            return False

    if not any(listens(e) for e in tools.controllers.split(",") if e):
        return False
    return bool(quorum_voters(tools))


def voters(status: str) -> list[tuple[int, str]]:
    """(node id, directory id) of each voter in ``describe --status``'s CurrentVoters (a static
    quorum's voters have no directory id: "")."""
    found = VOTERS.search(status)
    if found is None:
        return []
    listed = json.loads(found["voters"])
    return [(int(v["id"]), str(v.get("directoryId") or "")) if isinstance(v, dict)
            else (int(v), "") for v in listed]


def quorum_voters(tools: Any) -> list[tuple[int, str]]:
    """The voters, asked of the controllers (``describe --status``, one JVM); none when no
    controller answered."""
    status = describe_quorum(tools, "--status", check=False)
    return voters(status.stdout) if status.returncode == 0 else []


def quorum_state(tools: Any) -> dict[str, Any]:
    """The voters and every node's lag, asked of the controllers."""
    found = quorum_voters(tools)
    table = describe_quorum(tools, "--replication", check=False)
    rows = replication_rows(table.stdout) if table.returncode == 0 else {}
    return {"voters": found, "rows": rows,
            "leader": next((key for key, row in rows.items() if row["status"] == "Leader"),
                           None)}


def static(state: Mapping[str, Any]) -> bool:
    """A static quorum's voters have no directory id (an unread quorum is not static)."""
    return any(not v[1] for v in state["voters"])


def unhealthy(state: Mapping[str, Any], max_lag: int,
              excused: Sequence[tuple[int, str]] = ()) -> list[str]:
    """Why the voters are not all caught up with a leader (those ``excused`` aside): a
    membership change waits, as a restart does, for a healthy quorum (KR-08)."""
    if not state["voters"]:
        return ["the metadata quorum's voters could not be read"]
    if state["leader"] is None:
        return ["the metadata quorum has no leader"]
    problems = []
    for voter in state["voters"]:
        if voter in excused:
            continue
        row = state["rows"].get(voter)
        if row is None or row["lag"] > max_lag:
            lag = "does not fetch" if row is None else f"lags {row['lag']} records"
            problems.append(f"voter {voter[0]} (directory {voter[1]}) {lag}")
    return problems


def join_decision(state: Mapping[str, Any], node: tuple[int, str],
                  max_lag: int) -> dict[str, Any]:
    """What quorum-join does for this controller (``node``: its id and directory id): nothing,
    add it (once it has caught up), and remove the voters of the same id with another
    directory (the host it replaces); ``wait`` says why it cannot yet."""
    joined = node in state["voters"]
    stale = [v for v in state["voters"] if v[0] == node[0] and v != node]
    if static(state):
        return {"refusal": "the metadata quorum is static (controller.quorum.voters): a "
                           "controller joins only a dynamic one (KR-15)"}
    wait = unhealthy(state, max_lag, stale)
    row = state["rows"].get(node)
    if not joined and (row is None or row["lag"] > max_lag):
        wait.append("this controller has not caught up with the metadata log yet"
                    + ("" if row is None else f" ({row['lag']} records behind)"))
    return {"add": not joined, "remove": stale, "wait": wait}


def remove_decision(state: Mapping[str, Any], node_id: int, max_lag: int) -> dict[str, Any]:
    """What quorum-remove does for the controller ``node_id``: the voters of that id to remove,
    and why it cannot yet (the other voters must be caught up: they are the quorum after)."""
    leaving = [v for v in state["voters"] if v[0] == node_id]
    if static(state):
        return {"refusal": "the metadata quorum is static (controller.quorum.voters): a "
                           "controller leaves only a dynamic one (KR-15)"}
    # Unread voters are never taken for "not a voter": the run would then stop a voter.
    return {"remove": leaving, "wait": unhealthy(state, max_lag, leaving)
            if leaving or not state["voters"] else []}


def own_node(tools: Any) -> tuple[int, str]:
    """This node's id and the directory id of its metadata log (meta.properties)."""
    metadata = tools.server.get("metadata.log.dir") or tools.server.get("log.dirs", "").split(
        ",")[0]
    meta = os.path.join(metadata, "meta.properties")
    # Not formatted yet: only a dry run on a new node asks.
    found = properties(meta) if os.path.exists(meta) else {}
    return int(tools.server["node.id"]), found.get("directory.id", "")


def _waited(look: Callable[[], dict[str, Any]], done: Callable[[dict[str, Any]], list[str]],
            wait_s: float, what: str, sleep: Callable[[float], None] = time.sleep,
            clock: Callable[[], float] = time.monotonic) -> dict[str, Any]:
    deadline = clock() + wait_s
    while True:
        state = look()
        problems = done(state)
        if not problems:
            return state
        if clock() >= deadline:
            raise SystemExit(f"kafkaform-kafka: {what}: nothing changed after {wait_s:.0f} s: "
                             f"{'; '.join(problems)}. Check the controllers' journals "
                             "(journalctl -u kafka), then run again")
        sleep(POLL_S)


def _add_config(tools: Any) -> str:
    """add-controller's --command-config: the admin client's TLS settings and this controller's
    own properties (its id, listeners and metadata directory), in a file only root reads, removed
    once the call returns."""
    with open(tools.admin_config, encoding="utf-8") as admin:
        client = admin.read()
    own = "".join(f"{k}={tools.server[k]}\n" for k in CONTROLLER_KEYS if k in tools.server)
    with tempfile.NamedTemporaryFile("w", prefix="kafkaform-quorum-", suffix=".properties",
                                     delete=False) as handle:
        handle.write(client.rstrip("\n") + "\n" + own)
    return handle.name


def _remove(tools: Any, voter: tuple[int, str]) -> None:
    tools.change(METADATA_QUORUM, "--bootstrap-controller", tools.controllers,
                 "--command-config", tools.admin_config, "remove-controller",
                 "--controller-id", str(voter[0]), f"--controller-directory-id={voter[1]}")


def join(tools: Any, max_lag: int, wait_s: float) -> dict[str, Any]:
    """quorum-join: this controller becomes a voter once it has caught up, in place of the
    voters of its id with another directory. Nothing when it already is one."""
    node = own_node(tools)
    look = functools.partial(quorum_state, tools)
    decided = join_decision(look(), node, max_lag)
    if "refusal" in decided:
        raise SystemExit(f"kafkaform-kafka: quorum-join: {decided['refusal']}")
    stale = [list(v) for v in decided["remove"]]
    if not decided["add"] and not stale:
        return {"joined": False, "removed": []}
    if tools.args.dry_run:
        return {"joined": decided["add"], "removed": stale, "waiting": decided["wait"]}
    # Decided again on the state waited for: the first look may not have read the voters.
    decided = join_decision(_waited(look, lambda s: join_decision(s, node, max_lag)["wait"],
                                    wait_s, "quorum-join"), node, max_lag)
    stale = [list(v) for v in decided["remove"]]
    # Kafka takes one voter per node id: the dead host's directory leaves before this one joins.
    for voter in decided["remove"]:
        _remove(tools, voter)
    if stale:
        _waited(look, lambda s: [f"voter {v} still listed" for v in decided["remove"]
                                 if v in s["voters"]] + unhealthy(s, max_lag), wait_s,
                "quorum-join")
    if decided["add"]:
        config = _add_config(tools)
        try:
            tools.run(METADATA_QUORUM, "--bootstrap-controller", tools.controllers,
                      "--command-config", config, "add-controller")
        finally:
            os.remove(config)
        _waited(look, lambda s: [] if node in s["voters"] else ["not a voter yet"], wait_s,
                "quorum-join")
    return {"joined": decided["add"], "removed": stale}


def remove(tools: Any, node_id: int, max_lag: int, wait_s: float) -> dict[str, Any]:
    """quorum-remove: the controller ``node_id`` leaves the voters, once the others are caught
    up; its process keeps running (as an observer) until the run stops it. Nothing when it is
    not a voter."""
    look = functools.partial(quorum_state, tools)
    decided = remove_decision(look(), node_id, max_lag)
    if "refusal" in decided:
        raise SystemExit(f"kafkaform-kafka: quorum-remove: {decided['refusal']}")
    leaving = decided["remove"]
    if (not leaving and not decided["wait"]) or tools.args.dry_run:
        return {"removed": [list(v) for v in leaving], "waiting": decided["wait"]}
    leaving = remove_decision(_waited(look, lambda s: remove_decision(s, node_id, max_lag)[
        "wait"], wait_s, "quorum-remove"), node_id, max_lag)["remove"]
    for voter in leaving:
        _remove(tools, voter)
    _waited(look, lambda s: [f"voter {v} still listed" for v in leaving if v in s["voters"]]
            + unhealthy(s, max_lag, leaving), wait_s, "quorum-remove")
    return {"removed": [list(v) for v in leaving]}


def commands(tools: Any, ids: Sequence[str], args: Any) -> dict[str, Callable[[], int]]:
    """kafkaform-kafka's storage and quorum commands, each printing its JSON answer."""
    def say(found: Mapping[str, Any]) -> int:
        print(json.dumps(found), flush=True)
        return 0

    return {
        "storage": lambda: storage(tools, args.cluster_id, args.owner,
                                   args.initial_controllers, args.no_initial_controllers),
        "quorum-join": lambda: say(join(tools, args.max_lag, args.wait)),
        "quorum-remove": lambda: say(remove(tools, int(ids[0]), args.max_lag, args.wait)),
    }
