"""Exits 0 when the Spark master (its state over its TLS port, checked with the cluster CA) is
ALIVE and lists every given worker address as ALIVE; prints what it saw. Gates each worker's
restart (SP-09). Run by the host's python3: python3 -c SCRIPT MASTER_URL TRUST WORKER...
"""
import json
import ssl
import sys
import urllib.request

url, trust, *workers = sys.argv[1:]
try:
    context = ssl.create_default_context(cafile=trust)
    with urllib.request.urlopen(url + "/json/", timeout=10, context=context) as answer:
        state = json.load(answer)
except (OSError, ValueError) as error:
    sys.exit(f"master {url}: {error}")
alive = {w["host"] for w in state.get("workers", []) if w.get("state") == "ALIVE"}
missing = sorted(set(workers) - alive)
print(f"master {state.get('status')}; ALIVE workers {sorted(alive)}; missing {missing}")
sys.exit(0 if state.get("status") == "ALIVE" and not missing else 1)
