"""The command line: `kafkaform mirror build` and `kafkaform mirror serve`, their options and
handlers."""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import sys
import time
from pathlib import Path
from typing import Any

from ..catalog import CATALOG
from .archive import MANIFEST
from .build import ADMIN_CLIENT, JMX_EXPORTER, BuildOptions, build, cache_root, default_mirror_dir
from .common import MirrorError


def handle_build(args: argparse.Namespace) -> int:
    """`kafkaform mirror build`."""
    known = {c.name for c in CATALOG.components} | {JMX_EXPORTER, ADMIN_CLIENT}
    unknown = set(args.only) - known
    if unknown:
        print(f"error: unknown component(s) {sorted(unknown)}; choose from {sorted(known)}",
              file=sys.stderr)  # fmt: skip
        return 2
    options = BuildOptions(Path(args.dir), cache_root(), frozenset(args.only))
    started = time.monotonic()
    try:
        built = build(options)
    except MirrorError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"error: {error}; check free space and permissions of {options.mirror_dir} and "
              f"{options.cache}", file=sys.stderr)  # fmt: skip
        return 1
    elapsed = time.monotonic() - started
    print(f"mirror {options.mirror_dir}: {built} artifact(s) built, {elapsed:.1f} s",
          file=sys.stderr)  # fmt: skip
    return 0


def handle_serve(args: argparse.Namespace) -> int:
    """`kafkaform mirror serve`: a threaded static HTTP server over the mirror directory."""
    directory = Path(args.dir)
    if not (directory / MANIFEST).is_file():
        print(f"error: {directory} holds no mirror; run `kafkaform mirror build --dir {directory}`",
              file=sys.stderr)  # fmt: skip
        return 1
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(directory))
    try:
        server = http.server.ThreadingHTTPServer((args.bind, args.port), handler)
    except OSError as error:
        print(f"error: cannot listen on {args.bind}:{args.port}: {error}", file=sys.stderr)
        return 1
    with server:
        # The bound port, not args.port: `--port 0` picks a free one (tests use that).
        port = server.server_address[1]
        print(f"serving {directory} at http://{args.bind}:{port}/ (Ctrl-C stops)",
              file=sys.stderr, flush=True)  # fmt: skip
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()
    return 0


def add_commands(commands: Any) -> None:
    """Register `mirror build` and `mirror serve` on the CLI's subparsers object."""
    mirror = commands.add_parser("mirror", help="build and serve the artifact mirror")
    sub = mirror.add_subparsers(dest="mirror_command", required=True, metavar="SUBCOMMAND")
    default_dir = str(default_mirror_dir())

    build_parser = sub.add_parser("build", help="assemble the release archives of the catalog")
    build_parser.add_argument(
        "--dir", default=default_dir, help=f"mirror root (default {default_dir})"
    )
    build_parser.add_argument(
        "--only", action="append", default=[], metavar="NAME",
        help=f"build only this component (kafka, zookeeper, spark, {JMX_EXPORTER},"
        f" {ADMIN_CLIENT}); repeatable",
    )  # fmt: skip
    build_parser.set_defaults(handler=handle_build)

    serve = sub.add_parser("serve", help="serve the mirror over HTTP")
    serve.add_argument("--dir", default=default_dir, help=f"mirror root (default {default_dir})")
    serve.add_argument(
        "--bind", default="127.0.0.1", help="address to listen on (default loopback)"
    )
    serve.add_argument("--port", type=int, default=8000, help="TCP port (default 8000)")
    serve.set_defaults(handler=handle_serve)
