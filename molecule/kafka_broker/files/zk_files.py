#!/usr/bin/python3
"""Print the snapshots and transaction logs of ZooKeeper directories as JSON, oldest first.

Usage: zk_files.py DATA_DIR [DATA_LOG_DIR]; zxids are the hex suffixes of the file names.
"""

import json
import os
import sys


def files(directory, prefix):
    path = os.path.join(directory, "version-2")
    if not os.path.isdir(path):
        return []
    names = [n for n in os.listdir(path) if n.startswith(prefix + ".")]
    return sorted((int(n.split(".")[1], 16), n) for n in names)


data_dir = sys.argv[1]
log_dir = sys.argv[2] if len(sys.argv) > 2 else data_dir
print(json.dumps({
    "snapshots": [{"zxid": z, "name": n} for z, n in files(data_dir, "snapshot")],
    "logs": [{"zxid": z, "name": n} for z, n in files(log_dir, "log")],
}))
