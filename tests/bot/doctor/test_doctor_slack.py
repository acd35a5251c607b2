"""`querybot doctor` asks Slack about the tokens (the real CLI against the Web API stand-in):
`auth.test` with the bot token, `apps.connections.open` with the app-level one. A token Slack
refuses is a problem; a Slack that cannot be reached, or is rate limiting, leaves the tokens
unchecked (`?`), never "fine"; placeholders are not tokens and Slack is not asked about them."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bot.cli import main
from tests.support.botproc import free_port, write_script
from tests.support.standin import SlackStandin

BOT_FIX = "copy the Bot User OAuth Token (xoxb-...) from your Slack app > OAuth & Permissions"


@pytest.fixture
def slack() -> Iterator[SlackStandin]:
    """The Web API stand-in, without conftest's check that nothing was refused (refusals are
    what these tests are about); with a Socket Mode URL to hand out."""
    with SlackStandin() as standin:
        standin.socket_mode_url = "ws://127.0.0.1:9/link"  # handed out, never opened
        yield standin


@pytest.fixture(autouse=True)
def deployment(tmp_path: Path, demo_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo warehouse, a scripted model, no .env and no Slack setting but each test's."""
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith(("SLACK_", "QUERYBOT_")) or name == "GOOGLE_API_KEY":
            monkeypatch.delenv(name)
    script = write_script(tmp_path / "script.jsonl", [])
    monkeypatch.setenv("QUERYBOT_MODEL", f"scripted:{script}")
    monkeypatch.setenv("QUERYBOT_WAREHOUSE", f"duckdb:{demo_file}")
    monkeypatch.setenv("QUERYBOT_DATA_DIR", str(tmp_path / "data"))


def doctor(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, **env: str
) -> tuple[int, list[str], str]:
    """`querybot doctor` with `env` set: its exit code, the slack section's lines, the verdict."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    code = main(["doctor"])
    lines = capsys.readouterr().out.splitlines()
    start = lines.index("slack")
    section = [line.strip() for line in lines[start + 1 :] if line.startswith("  ")]
    return code, section, lines[-1]


@pytest.mark.slow
def test_tokens_slack_accepts(
    slack: SlackStandin, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, section, verdict = doctor(
        capsys,
        monkeypatch,
        SLACK_BOT_TOKEN="xoxb-good",
        SLACK_APP_TOKEN="xapp-good",
        SLACK_API_URL=slack.url,
    )
    assert section == [
        "✓ Slack accepts SLACK_BOT_TOKEN: bot @querybot in Stand-in https://standin.slack.com/",
        "✓ Slack accepts SLACK_APP_TOKEN: `querybot run` can connect in Socket Mode",
    ]
    assert (code, verdict) == (0, "Everything checked is fine.")
    calls = [(c.method, c.token) for c in slack.calls]
    assert calls == [("auth.test", "xoxb-good"), ("apps.connections.open", "xapp-good")]


@pytest.mark.slow
def test_an_app_from_an_older_manifest_is_told_what_to_add(
    slack: SlackStandin, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    slack.revoke_scope("assistant:write")  # installed before the manifest asked for it
    code, section, _ = doctor(
        capsys, monkeypatch, SLACK_BOT_TOKEN="xoxb-good", SLACK_API_URL=slack.url
    )
    older = [line for line in section if "older manifest" in line]
    assert len(older) == 1 and older[0].startswith("✗ The Slack app was created from an older")
    for what in ("assistant:write", "agent view", "app_home_opened", "manifest.yaml"):
        assert what in older[0]
    assert code == 1


@pytest.mark.slow
def test_a_refused_bot_token_is_a_problem(
    slack: SlackStandin, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    slack.refuse_token("xoxb-revoked", "token_revoked")
    code, section, verdict = doctor(
        capsys,
        monkeypatch,
        SLACK_BOT_TOKEN="xoxb-revoked",
        SLACK_SIGNING_SECRET="signing-secret",
        SLACK_API_URL=slack.url,
    )
    assert section == [
        "✓ SLACK_SIGNING_SECRET is set: `querybot run --http` can verify requests",
        f"✗ Slack refused SLACK_BOT_TOKEN (token_revoked): {BOT_FIX} into SLACK_BOT_TOKEN "
        "(reinstall the app to the workspace if it was removed).",
    ]
    assert code == 1
    assert verdict == "1 problem found (marked ✗); fix them and run `querybot doctor` again."


def test_a_refused_app_token_is_a_problem(
    slack: SlackStandin, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    slack.refuse_token("xapp-revoked")
    code, section, _ = doctor(
        capsys,
        monkeypatch,
        SLACK_BOT_TOKEN="xoxb-good",
        SLACK_APP_TOKEN="xapp-revoked",
        SLACK_API_URL=slack.url,
    )
    assert code == 1
    assert section[0].startswith("✓ Slack accepts SLACK_BOT_TOKEN")
    assert section[1].startswith(
        "✗ Slack refused SLACK_APP_TOKEN (invalid_auth): create an App-Level Token with the "
        "connections:write scope"
    )


@pytest.mark.slow
def test_an_unreachable_slack_is_not_checked_not_fine(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()  # nothing listens there
    code, section, verdict = doctor(
        capsys,
        monkeypatch,
        SLACK_BOT_TOKEN="xoxb-good",
        SLACK_APP_TOKEN="xapp-good",
        SLACK_API_URL=f"http://127.0.0.1:{port}/api/",
    )
    assert section == [
        "? could not check SLACK_BOT_TOKEN and SLACK_APP_TOKEN with Slack: Slack cannot be "
        f"reached at http://127.0.0.1:{port}/api/ (ConnectionRefusedError: [Errno 111] "
        "Connection refused): check this machine's network connection, proxy and firewall (and "
        "SLACK_API_URL if you set it), then try again."
    ]
    assert code == 1
    assert verdict == (
        "No problem found, but 1 check could not be made (marked ?): see why, and run "
        "`querybot doctor` again."
    )


class SignInPage(BaseHTTPRequestHandler):
    """A proxy between this machine and Slack that answers with its own sign-in page."""

    def do_POST(self) -> None:
        body = b"<html><body>Sign in to the corporate proxy</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.mark.slow
def test_an_answer_that_is_not_slacks_is_not_checked(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with ThreadingHTTPServer(("127.0.0.1", 0), SignInPage) as proxy:
        threading.Thread(target=proxy.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{proxy.server_address[1]}/api/"
        code, section, _ = doctor(
            capsys,
            monkeypatch,
            SLACK_BOT_TOKEN="xoxb-good",
            SLACK_API_URL=url,
            SLACK_APP_TOKEN="xapp-good",
        )
        proxy.shutdown()
    assert section == [
        "? could not check SLACK_BOT_TOKEN and SLACK_APP_TOKEN with Slack: what answered "
        f"auth.test at {url} is not Slack (Received a response in a non-JSON format: <html><body>"
        "Sign in to the corporate proxy</body></html>): check SLACK_API_URL and any proxy "
        "between this machine and Slack, then try again."
    ]
    assert code == 1


def test_a_rate_limited_slack_is_not_checked(
    slack: SlackStandin, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    slack.rate_limit("auth.test", retry_after=30)
    code, section, verdict = doctor(
        capsys,
        monkeypatch,
        SLACK_BOT_TOKEN="xoxb-good",
        SLACK_SIGNING_SECRET="signing-secret",
        SLACK_API_URL=slack.url,
    )
    assert section[1] == (
        "? could not check SLACK_BOT_TOKEN with Slack: Slack is rate-limiting auth.test (it asks "
        "to wait 30 s before trying again): wait that long, then try again."
    )
    assert code == 1 and "could not be made" in verdict
    assert len(slack.calls_to("auth.test")) == 1, "the doctor does not wait out a rate limit"


def test_placeholders_are_not_tokens_and_slack_is_not_asked(
    slack: SlackStandin, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """.env.example's values, as `cp .env.example .env` leaves them."""
    code, section, verdict = doctor(
        capsys,
        monkeypatch,
        SLACK_BOT_TOKEN="xoxb-...",
        SLACK_APP_TOKEN="xapp-...",
        SLACK_API_URL=slack.url,
    )
    assert section == [
        "✗ SLACK_BOT_TOKEN still holds a placeholder, not a value: Slack app > OAuth & "
        "Permissions > Bot User OAuth Token (xoxb-...).",
        "✗ neither SLACK_APP_TOKEN (Socket Mode) nor SLACK_SIGNING_SECRET (--http) is set "
        "(SLACK_APP_TOKEN still holds a placeholder, not a value): set the one for how you run "
        "the bot.",
        "· for querybot in the terminal only (`querybot ask`, `querybot eval`), which needs no "
        "Slack, check the rest with `querybot doctor --no-slack`",
    ]
    assert code == 1 and verdict.startswith("2 problems found")
    assert slack.calls == []
