"""kafkaform.lab_image: the image's Debian archives come from the machine's own apt sources.

Offline and without podman: only the parsing of apt source files and the recipe are tested.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkaform import lab_image
from kafkaform.lab_image import AptSource, DebianMirrors
from kafkaform.podman import CommandError

MAIN = "http://debian.corp.example/debian"
SECURITY = "http://debian.corp.example/debian-security"

DEB822 = f"""\
Types: deb
# http://snapshot.example/archive/debian/20250520T000000Z
URIs: {MAIN}
Suites: bookworm bookworm-updates
Components: main contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb deb-src
URIs: {SECURITY}
Suites: bookworm-security
Components: main
Signed-By:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 mQINBGR
 -----END PGP PUBLIC KEY BLOCK-----

Enabled: no
Types: deb
URIs: http://disabled.example/debian
Suites: bookworm
Components: main
"""


@pytest.fixture(autouse=True)
def no_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(lab_image.MIRROR_ENV, raising=False)
    monkeypatch.delenv(lab_image.SECURITY_MIRROR_ENV, raising=False)


def apt_dir(root: Path, files: dict[str, str]) -> Path:
    """An /etc/apt with the given files (relative paths) in it."""
    directory = root / "apt"
    (directory / "sources.list.d").mkdir(parents=True)
    for name, text in files.items():
        (directory / name).write_text(text)
    return directory


def test_one_line_sources_skip_comments_and_bracketed_options() -> None:
    text = (
        "# deb http://commented.example/debian bookworm main\n"
        "\n"
        f"deb [ arch=amd64 signed-by=/usr/share/keyrings/k.gpg ] {MAIN} bookworm main  # note\n"
        f"deb-src {MAIN} bookworm main\n"
        f"deb [trusted=yes] {SECURITY} bookworm-security main non-free-firmware\n"
    )
    assert lab_image.parse_one_line_sources(text) == [
        AptSource("deb", MAIN, "bookworm", ("main",)),
        AptSource("deb-src", MAIN, "bookworm", ("main",)),
        AptSource("deb", SECURITY, "bookworm-security", ("main", "non-free-firmware")),
    ]


def test_deb822_sources_expand_stanzas_and_skip_disabled_ones() -> None:
    sources = lab_image.parse_deb822_sources(DEB822)
    assert AptSource("deb", MAIN, "bookworm", ("main", "contrib")) in sources
    assert AptSource("deb", MAIN, "bookworm-updates", ("main", "contrib")) in sources
    assert AptSource("deb-src", SECURITY, "bookworm-security", ("main",)) in sources
    assert all("disabled" not in source.uri for source in sources)
    assert len(sources) == 4


def test_the_file_name_picks_the_format() -> None:
    assert lab_image.parse_apt_sources("debian.sources", DEB822)[0].uri == MAIN
    assert lab_image.parse_apt_sources("x.list", f"deb {MAIN} bookworm main\n")[0].uri == MAIN


def test_mirrors_come_from_the_machine_sources(tmp_path: Path) -> None:
    directory = apt_dir(
        tmp_path,
        {
            "sources.list": "# see sources.list.d\n",
            "sources.list.d/debian.sources": DEB822,
            "sources.list.d/other.list": "deb https://vendor.example/apt vendor-bookworm main\n",
            "sources.list.d/old.list.disabled": "deb http://ignored.example/debian bookworm main\n",
        },
    )
    assert lab_image.debian_mirrors(directory) == DebianMirrors(MAIN, SECURITY)


def test_the_main_archive_must_serve_the_main_component(tmp_path: Path) -> None:
    lines = f"deb http://contrib.example/debian bookworm contrib\ndeb {MAIN} bookworm main\n"
    directory = apt_dir(tmp_path, {"sources.list": lines})
    assert lab_image.debian_mirrors(directory) == DebianMirrors(MAIN, None)


def test_no_source_for_the_suite_names_the_files_read_and_the_fix(tmp_path: Path) -> None:
    directory = apt_dir(
        tmp_path, {"sources.list.d/trixie.sources": DEB822.replace("bookworm", "trixie")}
    )
    with pytest.raises(CommandError) as raised:
        lab_image.debian_mirrors(directory)
    message = str(raised.value)
    assert str(directory / "sources.list.d/trixie.sources") in message
    assert "add an apt source for Debian bookworm" in message
    assert f"{lab_image.MIRROR_ENV}=URI" in message


def test_no_source_files_at_all_is_reported(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="no source file under"):
        lab_image.debian_mirrors(apt_dir(tmp_path, {}))


def test_environment_overrides_the_apt_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(lab_image.MIRROR_ENV, "http://override.example/debian")
    directory = apt_dir(tmp_path, {})
    assert lab_image.debian_mirrors(directory) == DebianMirrors(
        "http://override.example/debian", None
    )
    monkeypatch.setenv(lab_image.SECURITY_MIRROR_ENV, "http://override.example/security")
    assert lab_image.debian_mirrors(directory).security == "http://override.example/security"


def test_an_override_must_be_one_uri(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(lab_image.MIRROR_ENV, "http://a.example/debian bookworm")
    with pytest.raises(CommandError, match="not a single URI"):
        lab_image.debian_mirrors(apt_dir(tmp_path, {}))


def test_sources_list_omits_a_missing_security_archive() -> None:
    assert lab_image.sources_list(DebianMirrors(MAIN, SECURITY)) == (
        f"deb {MAIN} bookworm main\n"
        f"deb {MAIN} bookworm-updates main\n"
        f"deb {SECURITY} bookworm-security main\n"
    )
    assert "security" not in lab_image.sources_list(DebianMirrors(MAIN, None))


def test_another_mirror_changes_the_recipe() -> None:
    recipe = lab_image.recipe_hash([], DebianMirrors(MAIN, SECURITY))
    assert recipe == lab_image.recipe_hash([], DebianMirrors(MAIN, SECURITY))
    assert recipe != lab_image.recipe_hash([], DebianMirrors("http://other/debian", SECURITY))
    assert recipe != lab_image.recipe_hash([], DebianMirrors(MAIN, None))
