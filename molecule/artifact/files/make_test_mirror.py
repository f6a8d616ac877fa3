"""Write the scenario's test mirror: tiny release-shaped archives, their `.sha512` files, their
signatures and each project's KEYS.

Usage: make_test_mirror.py DIR. Archives are written with kafkaform.mirror.write_tarball,
checksums with kafkaform.checksum and signatures with kafkaform.mirror.signing (a key made in
DIR's sibling gnupg/), the code the real mirror uses. DIR/expected.json tells the
verifier which digests the broken cases must report. DIR.tar holds the same tree, so prepare
copies one file into the mirror container instead of one per file.
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
import tarfile
from pathlib import Path

from kafkaform.checksum import format_gpg_print_md, format_sha512sum
from kafkaform.mirror import Member, text_member, write_tarball
from kafkaform.mirror.signing import Signer


def archive(top_dir: str, label: str) -> bytes:
    """A release-shaped .tgz: one top-level directory with bin/ and conf/."""
    members: list[Member] = [
        text_member("bin/demo.sh", f"#!/bin/sh\necho {label}\n", executable=True),
        text_member("conf/demo.conf", f"label={label}\n"),
    ]
    out = io.BytesIO()
    write_tarball(members, top_dir, out)
    return out.getvalue()


def publish(root: Path, path: str, data: bytes, checksum: str, signer: Signer) -> None:
    """Write `root/path`, `root/path.sha512`, its signature `root/path.asc` and the project's
    `KEYS` (two levels up, as Apache lays them out)."""
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    (root / f"{path}.sha512").write_text(checksum)
    signer.sign(target)
    (target.parent.parent / "KEYS").write_text(signer.keys_text())


def main(root: Path) -> None:
    signer = Signer(root.with_name(root.name + "-gnupg"))
    # demo 1.0.0: gpg --print-md shape, as Kafka publishes.
    demo = archive("demo-1.0.0", "demo 1.0.0")
    name = "demo-1.0.0.tgz"
    publish(root, f"demo/1.0.0/{name}", demo, format_gpg_print_md(_sha(demo), name), signer)
    # sample 2.0.0: sha512sum shape, as ZooKeeper and Spark publish.
    sample = archive("sample-2.0.0", "sample 2.0.0")
    name = "sample-2.0.0.tar.gz"
    publish(root, f"sample/2.0.0/{name}", sample, format_sha512sum(_sha(sample), name), signer)
    # broken 1.0.0: the served archive is not the one the checksum was made for (corruption).
    intended = archive("broken-1.0.0", "broken 1.0.0")
    served = intended[:-64] + bytes(64)
    name = "broken-1.0.0.tgz"
    publish(root, f"broken/1.0.0/{name}", served, format_sha512sum(_sha(intended), name), signer)
    # misnamed 1.0.0: the checksum file is another archive's.
    misnamed = archive("misnamed-1.0.0", "misnamed 1.0.0")
    name = "misnamed-1.0.0.tgz"
    other = format_gpg_print_md(_sha(misnamed), "misnamed-0.9.0.tgz")
    publish(root, f"misnamed/1.0.0/{name}", misnamed, other, signer)
    # forged 1.0.0: its sha512 matches, but its signature is by a key the project's KEYS lacks.
    forged = archive("forged-1.0.0", "forged 1.0.0")
    name = "forged-1.0.0.tgz"
    publish(root, f"forged/1.0.0/{name}", forged, format_sha512sum(_sha(forged), name),
            stranger := Signer(root.with_name(root.name + "-stranger")))
    stranger.close()
    (root / "forged" / "KEYS").write_text(signer.keys_text())
    signer.close()
    expected = {"broken": {"expected": _sha(intended), "actual": _sha(served)}}
    (root / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")
    with tarfile.open(root.with_name(root.name + ".tar"), "w") as bundle:
        for path in sorted(root.rglob("*")):
            bundle.add(path, arcname=path.relative_to(root).as_posix(), recursive=False)


def _sha(data: bytes) -> str:
    return hashlib.sha512(data).hexdigest()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
