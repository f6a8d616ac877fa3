import json, ssl, sys, urllib.request
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
