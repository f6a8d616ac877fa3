"""Exits 0 when the Spark master has finished its recovery (status ALIVE) and every application it
lists as RUNNING has an executor on some worker (each worker's own state, over its TLS port), or
waits for cores the master can neither grant nor has granted; prints what it saw. SP-10

A worker that registers again while the master recovers can lose its executors to a race in the
standalone master, and the application then waits for ever. Until the recovery ends, a worker
still lists the executors it had, which the master may yet kill; and just after it, the master's
first scheduling can still relaunch an executor the worker runs, which fails and ends the running
one. That worker can keep counting the ended executor's cores as used, so free cores are the
master's count, and cores the master granted to an application no worker runs an executor of are
lost too. A passing state counts only when it holds, the same executors listed, settle_s seconds
later. Run by the host's python3: python3 -c SCRIPT MASTER_URL TRUST WORKER_URL...
"""
import json
import ssl
import sys
import time
import urllib.request

settle_s = 10
master, trust, *workers = sys.argv[1:]


def state(url):
    with urllib.request.urlopen(url + "/json/", timeout=10, context=context) as answer:
        return json.load(answer)


def look():
    """(passes, the running applications' executors, what was seen)"""
    try:
        master_state = state(master)
        granted = {a["id"]: int(a.get("cores", 0)) for a in master_state.get("activeapps", [])
                   if a.get("state") == "RUNNING"}
        seen = [state(url) for url in workers]
    except (OSError, ValueError) as error:
        sys.exit(f"cannot read the master's or a worker's state: {error}")
    recovered = master_state.get("status") == "ALIVE"
    executors = {(e.get("appid"), e.get("id")) for w in seen for e in w.get("executors", [])
                 if e.get("appid") in granted}
    free = sum(int(w.get("coresfree", 0)) for w in master_state.get("workers", [])
               if w.get("state") == "ALIVE")
    unserved = sorted(set(granted) - {appid for appid, _executor in executors})
    lost = {app: granted[app] for app in unserved}  # cores the master thinks they hold
    stuck = [app for app, cores in lost.items() if cores or free]
    said = (f"master {master_state.get('status')}; running applications {sorted(granted)}; "
            f"without an executor {unserved}; their granted cores {lost}; free cores {free}")
    return recovered and not stuck, executors, said


context = ssl.create_default_context(cafile=trust)
passes, executors, said = look()
if passes:
    time.sleep(settle_s)
    passes_again, executors_again, said = look()
    if executors_again != executors:
        said += f" (the executors changed within {settle_s} s)"
    passes = passes_again and executors_again == executors
print(said)
sys.exit(0 if passes else 1)
