"""What the drills check of the ZooKeeper members after a CA rotation (SE-18): each reloads its
keystore and trust bundle as it runs.

Imported by the scripts beside it (run as ``.venv/bin/python benchmarks/<script>.py``, which puts
this folder first on the import path); not a benchmark itself.
"""

from __future__ import annotations

import time
from typing import Any

from _podman import main_pids, sh

from kafkaform.defaults import setting


def after_rotation(listed: dict[str, Any], members: list[str], pids: dict[str, str],
                   client: str, trust: str) -> bool:
    """No member restarted (``pids``: each one's main PID before the rotation), and each serves
    its new material (:func:`serves_new_material`); ``listed`` is the inventory as
    ``ansible-inventory --list`` gives it."""
    now = main_pids(members, "zookeeper")
    restarted = [m for m in members if now[m] != pids[m]]
    print(f"rotate: ZooKeeper members restarted: {len(restarted)} of {len(members)}")
    hostvars = listed["_meta"]["hostvars"]
    ports = {m: int(setting(hostvars.get(m, {}), "zookeeper_secure_client_port"))
             for m in members}
    return not restarted and serves_new_material(ports, client, trust)


def serves_new_material(members: dict[str, int], client: str, trust: str) -> bool:
    """Once the rotation is over, without a restart: each member's secure client port presents
    a certificate that ``client`` (a broker, trusting the new CA alone) verifies. Then one
    follower restarted presents its new certificate and trusts the new CA alone, so it joins the
    quorum only if the leader reloaded both as it ran. ``members``: each one's secure port."""
    for member, port in members.items():
        answer = sh(client, f"openssl s_client -connect {member}:{port} "
                            f"-CAfile {trust} < /dev/null 2>&1 | grep 'Verify return code'",
                    check=False).strip()
        if not answer.startswith("Verify return code: 0 "):
            print(f"rotate: ZooKeeper member {member}'s client port presents a certificate the "
                  f"new CA does not verify ({answer or 'no answer'}) -> FAIL")
            return False
    print("rotate: every ZooKeeper member's client port presents a certificate of the new CA")
    modes = {m: sh(m, "zookeeper-4lw srvr", check=False) for m in members}
    follower = next((m for m, out in modes.items() if "Mode: follower" in out), "")
    if not follower:
        print(f"rotate: no ZooKeeper follower to restart among {members} -> FAIL")
        return False
    sh(follower, "systemctl restart zookeeper")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if "Mode: follower" in sh(follower, "zookeeper-4lw srvr", check=False):
            print(f"rotate: ZooKeeper member {follower} restarted on the new material and "
                  "rejoined as a follower")
            return True
        time.sleep(2)
    print(f"rotate: ZooKeeper member {follower} restarted on the new material did not rejoin "
          "within 120 s: the leader did not reload its keystore or trust bundle -> FAIL")
    return False
