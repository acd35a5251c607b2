"""Fetching shared files (bot/files/slack_files.py) with a real WebClient against the Web API
stand-in."""

from __future__ import annotations

from pathlib import Path

import pytest
from slack_sdk import WebClient

from bot.files.slack_files import FileTooLarge, FileUnavailable, SharedFile, SlackFiles, event_files
from tests.support.standin import SlackStandin

CSV = b"id,amount\n" + b"".join(f"{i},{i * 1.5}\n".encode() for i in range(200))


def fetcher(
    slack: SlackStandin, *, max_bytes: int = 1_000_000, token: str = "xoxb-t"
) -> SlackFiles:
    return SlackFiles(WebClient(token=token, base_url=slack.url), max_bytes=max_bytes)


def test_download_with_the_bot_token(slack: SlackStandin, tmp_path: Path) -> None:
    obj = slack.add_file("sales.csv", CSV)
    files = fetcher(slack)
    shared = files.describe(obj)
    assert (shared.name, shared.size) == ("sales.csv", len(CSV))
    path = files.download(shared, tmp_path / "upload.csv")
    assert path.read_bytes() == CSV
    assert slack.downloads == [(obj["id"], "xoxb-t", 200)]
    assert slack.calls_to("files.info") == [], "a full file object needs no files.info"


def test_a_stub_is_completed_with_files_info(slack: SlackStandin, tmp_path: Path) -> None:
    obj = slack.add_file("sales.csv", CSV)
    files = fetcher(slack)
    # an app_mention carries only ids; Slack Connect shares say check_file_info
    for stub in ({"id": obj["id"]}, {"id": obj["id"], "file_access": "check_file_info"}):
        assert files.describe(stub) == SharedFile.from_slack(obj)
    assert len(slack.calls_to("files.info")) == 2
    with pytest.raises(FileUnavailable) as caught:
        files.describe({"id": "F0MISSING"})
    assert "file_not_found" in str(caught.value) and "files:read" in str(caught.value)


def test_without_a_bot_token_slack_sends_a_sign_in_page(
    slack: SlackStandin, tmp_path: Path
) -> None:
    obj = slack.add_file("sales.csv", CSV)
    files = fetcher(slack, token="xoxp-user-token")
    with pytest.raises(FileUnavailable) as caught:
        files.download(SharedFile.from_slack(obj), tmp_path / "upload.csv")
    assert str(caught.value).startswith("Slack did not hand over sales.csv.")
    assert not (tmp_path / "upload.csv").exists(), "the sign-in page is not saved"


def test_the_size_limit_holds_before_and_during_the_download(
    slack: SlackStandin, tmp_path: Path
) -> None:
    files = fetcher(slack, max_bytes=1000)
    honest = SharedFile.from_slack(slack.add_file("big.csv", CSV))
    with pytest.raises(FileTooLarge) as caught:
        files.download(honest, tmp_path / "a.csv")
    assert str(caught.value).startswith("big.csv is 1.8 KiB; the limit is 1,000 bytes.")
    assert slack.downloads == [], "refused from the file object, nothing fetched"

    lying = SharedFile.from_slack(slack.add_file("lies.csv", CSV, reported_size=10))
    with pytest.raises(FileTooLarge):
        files.download(lying, tmp_path / "b.csv")  # Content-Length gives it away

    streamed = slack.add_file("stream.csv", CSV, reported_size=10, send_length=False)
    with pytest.raises(FileTooLarge) as caught:
        files.download(SharedFile.from_slack(streamed), tmp_path / "c.csv")
    assert "is over 1,000 bytes" in str(caught.value)
    assert (tmp_path / "c.csv").stat().st_size <= 1000


def test_the_token_goes_only_to_slack(slack: SlackStandin, tmp_path: Path) -> None:
    files = fetcher(slack)
    elsewhere = SharedFile("F1", "x.csv", 10, "http://files.example.com/x.csv")
    with pytest.raises(FileUnavailable):
        files.download(elsewhere, tmp_path / "x.csv")
    plain_http = SharedFile("F1", "x.csv", 10, "http://files.slack.com/x.csv")
    with pytest.raises(FileUnavailable):
        files.download(plain_http, tmp_path / "x.csv")
    assert slack.downloads == []


def test_event_files() -> None:
    event = {"files": [{"id": "F1"}, {"name": "no id"}, "junk"]}
    assert event_files(event) == [{"id": "F1"}]
    assert event_files({}) == []
