"""The admin helper's quorum membership (roles/kafka_broker/files/kafkaform_quorum.py, KR-15,
OP-12), on a scripted stand-in for Kafka's MetadataQuorumCommand that keeps a voter set the way
the quorum does: what describe prints (read as Kafka 4.4 prints it), when a controller joins and
what it waits for, a replacement that removes the old directory before the new one joins (Kafka
takes one voter per node id), a removal that waits for the other voters, and reruns that change
nothing."""

from __future__ import annotations

import getpass
import json
import socket
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

FILES = Path(__file__).resolve().parents[2] / "roles/kafka_broker/files"

STATUS = """ClusterId:              MkU3OEVBNTcwNTJENDM2Qg
LeaderId:               3001
LeaderEpoch:            1
HighWatermark:          57
MaxFollowerLag:         0
MaxFollowerLagTimeMs:   0
CurrentVoters:          [{"id": 3001, "directoryId": "5Kke2xHDRfCzP3scJi6LkA", "endpoints": \
["CONTROLLER://c1:9094"]}, {"id": 3002, "directoryId": "q1Hk3dAfR4uJ2yq9gk-tbw", "endpoints": \
["CONTROLLER://c2:9094"]}]
CurrentObservers:       [{"id": 1, "directoryId": "t8bBp8FIUVUGxCkcjrJFCg"}]
"""
TABLE = """NodeId\tDirectoryId           \tLogEndOffset\tLag\tLastFetchTimestamp\t\
LastCaughtUpTimestamp\tStatus\t
3001  \t5Kke2xHDRfCzP3scJi6LkA\t63          \t0  \t1796627960626     \t1796627960626        \t\
Leader\t
3002  \tq1Hk3dAfR4uJ2yq9gk-tbw\t60          \t3  \t1796627960626     \t1796627960626        \t\
Follower\t
1     \tt8bBp8FIUVUGxCkcjrJFCg\t63          \t0  \t1796627960626     \t1796627960626        \t\
Observer\t
"""


@pytest.fixture
def quorum(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(FILES))
    sys.modules.pop("kafkaform_quorum", None)
    import kafkaform_quorum  # pylint: disable=import-outside-toplevel

    monkeypatch.setattr(kafkaform_quorum, "POLL_S", 0.0)
    return kafkaform_quorum


def test_describe_is_read_as_kafka_prints_it(quorum: ModuleType) -> None:
    assert quorum.voters(STATUS) == [(3001, "5Kke2xHDRfCzP3scJi6LkA"),
                                     (3002, "q1Hk3dAfR4uJ2yq9gk-tbw")]
    # A static quorum's voters carry no directory.
    assert quorum.voters("CurrentVoters:          [3001,3002,3003]\n") == [
        (3001, ""), (3002, ""), (3003, "")]
    rows = quorum.replication_rows(TABLE)
    assert rows[(3002, "q1Hk3dAfR4uJ2yq9gk-tbw")] == {"lag": 3, "status": "Follower"}
    assert rows[(1, "t8bBp8FIUVUGxCkcjrJFCg")]["status"] == "Observer"


class Quorum:
    """MetadataQuorumCommand against a voter set: ``voters`` and every node's ``lag``, by
    (id, directory); add-controller adds the calling node, remove-controller removes one."""

    def __init__(self, voters: list[tuple[int, str]], lag: dict[tuple[int, str], int],
                 node: tuple[int, str], leader: tuple[int, str] | None = (1, "d1")) -> None:
        self.voters, self.lag, self.node, self.leader = list(voters), dict(lag), node, leader
        self.calls: list[str] = []
        self.described: list[str] = []  # each describe's option: one JVM each
        self.catch_up_after = 0  # describes before the node's lag drops to 0
        self.unread = 0  # describe --status calls that fail first (a leader change, a timeout)

    def status(self) -> str:
        listed = [{"id": i, "directoryId": d, "endpoints": []} for i, d in self.voters]
        return f"CurrentVoters:          {json.dumps(listed)}\n"

    def table(self) -> str:
        if self.catch_up_after:
            self.catch_up_after -= 1
            if not self.catch_up_after:
                self.lag[self.node] = 0
        rows = ["NodeId\tDirectoryId\tLogEndOffset\tLag\tStatus"]
        for (i, d), lag in self.lag.items():
            status = ("Leader" if (i, d) == self.leader else
                      "Follower" if (i, d) in self.voters else "Observer")
            rows.append(f"{i}\t{d}\t100\t{lag}\t{status}")
        return "\n".join(rows) + "\n"

    def run(self, main_class: str, *args: str, check: bool = True) -> SimpleNamespace:
        del main_class, check
        command = next(a for a in args if a in ("describe", "add-controller",
                                                 "remove-controller"))
        out = ""
        if command == "describe":
            self.described.append(args[args.index("describe") + 1])
        if command == "describe" and "--status" in args and self.unread:
            self.unread -= 1
            return SimpleNamespace(stdout="", returncode=1)
        if command == "describe":
            out = self.status() if "--status" in args else self.table()
        elif command == "add-controller":
            self.calls.append("add")
            if any(v[0] == self.node[0] for v in self.voters):
                raise SystemExit("DuplicateVoterException: one voter per node id")
            self.voters.append(self.node)
        else:
            node_id = int(args[args.index("--controller-id") + 1])
            directory = next(a for a in args if a.startswith("--controller-directory-id="))
            voter = (node_id, directory.split("=", 1)[1])
            self.calls.append(f"remove {voter[0]}:{voter[1]}")
            self.voters.remove(voter)
            self.lag.pop(voter, None)
        return SimpleNamespace(stdout=out, returncode=0)


class Tools:
    def __init__(self, kafka: Quorum, tmp: Path, dry_run: bool = False) -> None:
        self.kafka = kafka
        metadata = tmp / "metadata"
        metadata.mkdir(exist_ok=True)
        (metadata / "meta.properties").write_text(f"node.id={kafka.node[0]}\n"
                                                  f"directory.id={kafka.node[1]}\n")
        admin = tmp / "admin-client.properties"
        admin.write_text("security.protocol=SSL\n")
        self.server = {"node.id": str(kafka.node[0]), "process.roles": "controller",
                       "log.dirs": str(metadata), "listeners": "CONTROLLER://c9:9094",
                       "controller.listener.names": "CONTROLLER"}
        self.controllers, self.admin_config = "c1:9094", str(admin)
        self.args = SimpleNamespace(dry_run=dry_run)

    def run(self, main_class: str, *args: str, check: bool = True) -> SimpleNamespace:
        return self.kafka.run(main_class, *args, check=check)

    def change(self, main_class: str, *args: str) -> SimpleNamespace:
        return self.kafka.run(main_class, *args)


THREE = [(1, "d1"), (2, "d2"), (3, "d3")]
CAUGHT_UP = {v: 0 for v in THREE}


def test_a_new_controller_joins_once_caught_up_and_a_rerun_changes_nothing(
        quorum: ModuleType, tmp_path: Path) -> None:
    kafka = Quorum(THREE, {**CAUGHT_UP, (4, "d4"): 5000}, node=(4, "d4"))
    kafka.catch_up_after = 3
    tools = Tools(kafka, tmp_path)
    # Check mode says it would join and why it waits; nothing changes.
    dry = quorum.join(Tools(kafka, tmp_path, dry_run=True), 1000, 60)
    assert dry["joined"] and "this controller has not caught up" in dry["waiting"][0]
    assert kafka.calls == []
    assert quorum.join(tools, 1000, 60) == {"joined": True, "removed": []}
    assert kafka.calls == ["add"] and (4, "d4") in kafka.voters and kafka.lag[(4, "d4")] == 0
    assert quorum.join(tools, 1000, 60) == {"joined": False, "removed": []}
    assert kafka.calls == ["add"]


def test_a_replacing_hosts_old_directory_leaves_before_it_joins(
        quorum: ModuleType, tmp_path: Path) -> None:
    # Controller 2's host died with its disk: a new host under id 2 has a new directory.
    lag = {(1, "d1"): 0, (3, "d3"): 0, (2, "new"): 0}
    kafka = Quorum(THREE, lag, node=(2, "new"))
    assert quorum.join(Tools(kafka, tmp_path), 1000, 60) == {"joined": True,
                                                              "removed": [[2, "d2"]]}
    assert kafka.calls == ["remove 2:d2", "add"]
    assert sorted(kafka.voters) == [(1, "d1"), (2, "new"), (3, "d3")]


def test_a_join_waits_for_every_other_voter_and_says_what_it_waited_for(
        quorum: ModuleType, tmp_path: Path) -> None:
    kafka = Quorum(THREE, {**CAUGHT_UP, (3, "d3"): 9000, (4, "d4"): 0}, node=(4, "d4"))
    with pytest.raises(SystemExit, match=r"quorum-join: nothing changed after 0 s: voter 3 "
                                         r"\(directory d3\) lags 9000 records"):
        quorum.join(Tools(kafka, tmp_path), 1000, 0)
    assert kafka.calls == []
    leaderless = Quorum(THREE, {**CAUGHT_UP, (4, "d4"): 0}, node=(4, "d4"), leader=None)
    with pytest.raises(SystemExit, match="the metadata quorum has no leader"):
        quorum.join(Tools(leaderless, tmp_path), 1000, 0)


def test_a_static_quorum_is_never_joined_or_left(quorum: ModuleType, tmp_path: Path) -> None:
    kafka = Quorum([(1, ""), (2, ""), (3, "")], {(1, ""): 0}, node=(4, "d4"))
    with pytest.raises(SystemExit, match="quorum is static"):
        quorum.join(Tools(kafka, tmp_path), 1000, 0)
    with pytest.raises(SystemExit, match="quorum is static"):
        quorum.remove(Tools(kafka, tmp_path), 3, 1000, 0)


def test_a_removal_waits_for_the_others_then_a_rerun_changes_nothing(
        quorum: ModuleType, tmp_path: Path) -> None:
    four = [*THREE, (4, "d4")]
    kafka = Quorum(four, {**CAUGHT_UP, (4, "d4"): 0, (2, "d2"): 4000}, node=(1, "d1"))
    tools = Tools(kafka, tmp_path)
    with pytest.raises(SystemExit, match=r"voter 2 \(directory d2\) lags 4000 records"):
        quorum.remove(tools, 4, 1000, 0)
    assert kafka.calls == []
    kafka.lag[(2, "d2")] = 0
    assert quorum.remove(Tools(kafka, tmp_path, dry_run=True), 4, 1000, 0) == {
        "removed": [[4, "d4"]], "waiting": []}
    assert kafka.calls == []
    assert quorum.remove(tools, 4, 1000, 0) == {"removed": [[4, "d4"]]}
    assert kafka.calls == ["remove 4:d4"] and kafka.voters == THREE
    assert quorum.remove(tools, 4, 1000, 0) == {"removed": [], "waiting": []}


def test_add_controller_reads_the_controllers_own_properties(
        quorum: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kafka = Quorum(THREE, {**CAUGHT_UP, (4, "d4"): 0}, node=(4, "d4"))
    tools = Tools(kafka, tmp_path)
    seen: dict[str, Any] = {}
    real = kafka.run

    def run(main_class: str, *args: str, check: bool = True) -> SimpleNamespace:
        if "add-controller" in args:
            config = args[args.index("--command-config") + 1]
            seen["text"] = Path(config).read_text()
            seen["path"] = config
        return real(main_class, *args, check=check)

    monkeypatch.setattr(kafka, "run", run)
    quorum.join(tools, 1000, 60)
    assert seen["text"].splitlines()[0] == "security.protocol=SSL"
    assert "node.id=4" in seen["text"] and "listeners=CONTROLLER://c9:9094" in seen["text"]
    assert f"log.dirs={tmp_path / 'metadata'}" in seen["text"]
    assert not Path(seen["path"]).exists()


def test_voters_that_could_not_be_read_are_waited_for_never_taken_as_none(
        quorum: ModuleType, tmp_path: Path) -> None:
    # A voter already: the unread first look does not make it add itself again.
    kafka = Quorum(THREE, CAUGHT_UP, node=(3, "d3"))
    kafka.unread = 1
    assert quorum.join(Tools(kafka, tmp_path), 1000, 60) == {"joined": False, "removed": []}
    assert kafka.calls == []
    # A removal whose first look read no voters waits, then removes: the run never stops a
    # controller that is still a voter.
    kafka = Quorum([*THREE, (4, "d4")], {**CAUGHT_UP, (4, "d4"): 0}, node=(1, "d1"))
    kafka.unread = 2
    assert quorum.remove(Tools(kafka, tmp_path), 4, 1000, 60) == {"removed": [[4, "d4"]]}
    assert kafka.calls == ["remove 4:d4"]
    kafka.unread = 10
    with pytest.raises(SystemExit, match="the metadata quorum's voters could not be read"):
        quorum.remove(Tools(kafka, tmp_path), 3, 1000, 0)


class FormatTools(Tools):
    """The storage format's view: a blank log directory, the controllers at ``controllers``."""

    def __init__(self, kafka: Quorum, tmp: Path, controllers: str) -> None:
        super().__init__(kafka, tmp)
        (tmp / "data").mkdir()
        self.server["log.dirs"] = str(tmp / "data")
        self.controllers = controllers
        self.args = SimpleNamespace(dry_run=False, conf=str(tmp))
        self.formatted: list[tuple[str, ...]] = []

    def run(self, main_class: str, *args: str, check: bool = True) -> SimpleNamespace:
        if "format" in args:
            self.formatted.append(args)
            return SimpleNamespace(stdout="", returncode=0)
        return super().run(main_class, *args, check=check)


def test_a_run_limited_to_a_new_controller_joins_the_quorum_that_answers(
        quorum: ModuleType, tmp_path: Path) -> None:
    owner = getpass.getuser()
    first = "3001@c1:9094:d1,3002@c2:9094:d2,3003@c3:9094:d3"
    # Nothing listens (a new cluster: every controller is formatted before any starts).
    (tmp_path / "a").mkdir()
    quiet = FormatTools(Quorum(THREE, CAUGHT_UP, node=(4, "d4")), tmp_path / "a", "127.0.0.1:9")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        (tmp_path / "b").mkdir()
        live = FormatTools(Quorum(THREE, CAUGHT_UP, node=(4, "d4")), tmp_path / "b",
                           f"127.0.0.1:{server.getsockname()[1]}")
        quorum.storage(live, "cid", owner, initial=first)
    quorum.storage(quiet, "cid", owner, initial=first)
    assert quiet.formatted[0][-2:] == ("--initial-controllers", first)
    assert live.formatted[0][-1] == "--no-initial-controllers"
    # The probe asks the voters alone: one describe (one JVM), none where nothing listens.
    assert (live.kafka.described, quiet.kafka.described) == (["--status"], [])
