"""Stands in for podman in the exec channel's tests: ``exec [-i] [--user U] CONTAINER ARGV...``
runs ARGV on this machine; the container ``stopped`` answers as podman does for one not running."""

import os
import sys

args = sys.argv[1:]
assert args.pop(0) == "exec", args
if args[0] == "-i":
    args.pop(0)
if args[0] == "--user":
    del args[:2]
container, argv = args[0], args[1:]
if container == "stopped":
    sys.stderr.write("Error: can only create exec sessions on running containers\n")
    sys.exit(125)
os.execvp(argv[0], argv)
