"""kafkaform.checksum: both Apache `.sha512` shapes, the errors, and streaming file hashes."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkaform.checksum import (
    file_sha512,
    format_gpg_print_md,
    format_sha512sum,
    parse_sha512,
)

FIXTURES = Path(__file__).parent / "fixtures" / "sha512"
ARCHIVE = "demo_2.13-1.0.0.tgz"
# sha512 of fixtures/sha512/demo_2.13-1.0.0.tgz (a made-up release archive).
DIGEST = (
    "8fdf562ddeaf86d9eb73521b193545a7cddbcc70ccad67144bf3f0c1da3e01aa"
    "bf526fea35e4f8d7ba1be2058c5278b4373f886065b19073af1cac342bbbdf61"
)


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_file_sha512_matches_hashlib_on_the_fixture_archive() -> None:
    path = FIXTURES / ARCHIVE
    assert file_sha512(path) == hashlib.sha512(path.read_bytes()).hexdigest() == DIGEST


def test_file_sha512_streams_files_larger_than_one_chunk(tmp_path: Path) -> None:
    data = bytes(range(256)) * 10_000  # 2.5 MB: several 1 MiB chunks plus a partial one
    path = tmp_path / "big.bin"
    path.write_bytes(data)
    assert file_sha512(path) == hashlib.sha512(data).hexdigest()


def test_parses_gpg_print_md_shape_wrapped_over_three_lines() -> None:
    text = fixture(f"{ARCHIVE}.gpg.sha512")
    assert len(text.splitlines()) == 3
    assert text.splitlines()[1].startswith(" " * len(f"{ARCHIVE}: "))
    assert parse_sha512(text, ARCHIVE) == DIGEST


def test_parses_sha512sum_shape() -> None:
    assert parse_sha512(fixture(f"{ARCHIVE}.sum.sha512"), ARCHIVE) == DIGEST


def test_sha512sum_binary_marker_and_directories_are_ignored() -> None:
    text = f"{DIGEST} *dist/{ARCHIVE}\n"
    assert parse_sha512(text, f"/var/cache/{ARCHIVE}") == DIGEST


def test_gpg_shape_with_a_long_name_starts_the_digest_on_the_next_line() -> None:
    name = "apache-zookeeper-3.8.4-bin-with-a-name-longer-than-forty.tar.gz"
    text = format_gpg_print_md(DIGEST, name)
    assert text.splitlines()[0] == f"{name}: "
    assert parse_sha512(text, name) == DIGEST


def test_bsd_shape_and_bare_digest_are_accepted() -> None:
    assert parse_sha512(f"SHA512 ({ARCHIVE}) = {DIGEST}\n", ARCHIVE) == DIGEST
    assert parse_sha512(DIGEST.upper() + "\n", ARCHIVE) == DIGEST


def test_crlf_and_blank_lines_do_not_matter() -> None:
    text = "\r\n" + format_gpg_print_md(DIGEST, ARCHIVE).replace("\n", "\r\n") + "\r\n"
    assert parse_sha512(text, ARCHIVE) == DIGEST


def test_a_listing_of_several_files_picks_the_named_one() -> None:
    other = "0" * 128
    text = format_sha512sum(other, "other.tgz") + format_sha512sum(DIGEST, ARCHIVE)
    assert parse_sha512(text, ARCHIVE) == DIGEST


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("empty.sha512", "holds no sha512 digest"),
        ("other-name.sha512", "names demo_2.13-0.9.0.tgz, not demo_2.13-1.0.0.tgz"),
        ("ambiguous.sha512", "ambiguous, 2 different sha512 digests"),
        ("sha256-instead.sha512", "has 64 hex digits (a sha256)"),
        ("html-error-page.sha512", "line 1 is not a checksum line"),
    ],
)
def test_bad_files_raise_naming_the_checksum_file(name: str, message: str) -> None:
    with pytest.raises(ValueError, match=r"^demo_2\.13-1\.0\.0\.tgz\.sha512: ") as error:
        parse_sha512(fixture(name), ARCHIVE)
    assert message in str(error.value)


def test_source_names_the_checksum_file_in_errors() -> None:
    with pytest.raises(ValueError, match=r"^https://mirror/x\.sha512: "):
        parse_sha512("", ARCHIVE, source="https://mirror/x.sha512")


def test_the_same_digest_twice_is_not_ambiguous() -> None:
    text = format_sha512sum(DIGEST, ARCHIVE) + format_gpg_print_md(DIGEST, ARCHIVE)
    assert parse_sha512(text, ARCHIVE) == DIGEST


def test_formatters_reject_non_digests() -> None:
    with pytest.raises(ValueError, match="not a sha512 digest"):
        format_sha512sum("abc", ARCHIVE)


def test_gpg_format_matches_gpg_print_md_layout() -> None:
    # gpg --print-md sha512: 8-hex upper-case groups, six per line after a short name,
    # continuation lines indented to the first group. The fixture was written by real gpg.
    text = format_gpg_print_md(DIGEST, ARCHIVE)
    assert text == fixture(f"{ARCHIVE}.gpg.sha512")
    assert (
        text.splitlines()[0] == f"{ARCHIVE}: 8FDF562D DEAF86D9 EB73521B 193545A7 CDDBCC70 CCAD6714"
    )


@pytest.mark.skipif(shutil.which("gpg") is None, reason="gpg is not installed")
@pytest.mark.parametrize("length", [5, 20, 38, 39, 40, 41, 60, 79, 80])
def test_gpg_format_is_byte_identical_to_gpg(tmp_path: Path, length: int) -> None:
    name = "k" * (length - 4) + ".tgz"
    path = tmp_path / name
    path.write_bytes(name.encode())
    real = subprocess.run(
        ["gpg", "--print-md", "sha512", name], cwd=tmp_path, capture_output=True, text=True
    )
    assert real.returncode == 0, real.stderr
    assert format_gpg_print_md(file_sha512(path), name) == real.stdout


FILE_NAMES = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,70}\.(tgz|tar\.gz|jar)", fullmatch=True)
DIGESTS = st.binary(min_size=64, max_size=64).map(bytes.hex)


@given(digest=DIGESTS, name=FILE_NAMES)
def test_any_digest_formatted_either_way_parses_back_to_itself(digest: str, name: str) -> None:
    assert parse_sha512(format_gpg_print_md(digest, name), name) == digest
    assert parse_sha512(format_sha512sum(digest, name), name) == digest
