"""The unpack marker both engines write and read (kafkaform.release_marker)."""

from __future__ import annotations

from kafkaform.release_marker import archive_name, marker_version, release_marker

URL = "http://kf-mirror:8080/kafka/3.9.2/kafka_2.13-3.9.2.tgz?mirror=lab"


def test_the_archive_is_the_last_segment_of_the_url_path() -> None:
    assert archive_name(URL) == "kafka_2.13-3.9.2.tgz"


def test_what_an_unpack_writes_is_recognised_as_this_release_in_place() -> None:
    written = release_marker("kafka", "3.9.2", URL, "ab" * 64)
    assert written == ["name=kafka", "version=3.9.2", "archive=kafka_2.13-3.9.2.tgz",
                       "sha512=" + "ab" * 64]
    assert set(release_marker("kafka", "3.9.2", URL)) <= set(written)


def test_another_version_or_archive_is_not_in_place() -> None:
    written = set(release_marker("kafka", "3.9.2", URL, "ab" * 64))
    assert not set(release_marker("kafka", "4.1.2", URL)) <= written
    assert not set(release_marker("kafka", "3.9.2", URL.replace("2.13", "2.12"))) <= written


def test_the_version_is_read_back_from_what_an_unpack_wrote() -> None:
    assert marker_version("\n".join(release_marker("spark", "4.2.0", URL, "ab" * 64))) == "4.2.0"
    assert marker_version(None) == "" and marker_version("name=spark") == ""
