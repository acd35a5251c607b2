"""Placeholders are unset (issue 17, item 1): `cp .env.example .env` leaves `xoxb-...` and
`xapp-...` in place, and `querybot` must call them missing, not take them for tokens. Any value
shaped like a template's "fill this in" counts as unset, for every variable querybot reads."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bot.settings import NO_KEY_ROUTES, Settings, SettingsError, is_placeholder

ROOT = Path(__file__).resolve().parents[2]
QUERYBOT = Path(sys.executable).with_name("querybot")
SECRETS = ["SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "GOOGLE_API_KEY"]
PLACEHOLDERS = [
    "xoxb-...",
    "xapp-…",
    "...",
    "your-key-here",
    "YOUR_API_KEY",
    "xoxb-your-bot-token",
    "<your token>",
    "paste-it-here",
    "changeme",
    "TODO",
    "xxxxxxxx",
    "   ",
]
REAL = [
    "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp",
    "xapp-1-A0123456789-1234567890123-0123456789abcdef",
    "AIzaSyA-1b2C3d4E5f6G7h8I9j0KlMnOpQrStUv",
    "8f14e45fceea167a5a36dedd4bea2543",
    "secret",
    "standin-signing-secret",
]


def querybot(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The `querybot` entry point in `cwd`, with none of querybot's settings in its environment
    (the .env of `cwd` gives them, as on a fresh machine)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLACK_", "QUERYBOT_")) and k != "GOOGLE_API_KEY"
    }
    return subprocess.run(
        [str(QUERYBOT), *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_a_copied_env_example_names_every_missing_secret(tmp_path: Path) -> None:
    shutil.copy(ROOT / ".env.example", tmp_path / ".env")
    done = querybot(cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "querybot cannot start; set these in .env or the environment (see .env.example):",
        "  SLACK_BOT_TOKEN (still a placeholder): Slack app > OAuth & Permissions > Bot User "
        "OAuth Token (xoxb-...)",
        "  SLACK_APP_TOKEN (still a placeholder): Slack app > Basic Information > App-Level "
        "Tokens, scope connections:write (xapp-...)",
        "  GOOGLE_API_KEY: Google AI Studio > Get API key (or set QUERYBOT_MODEL to another "
        "provider)",
        NO_KEY_ROUTES,
    ]

    doctor = querybot("doctor", cwd=tmp_path)
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    assert "Traceback" not in doctor.stderr
    report = doctor.stdout
    assert "✗ SLACK_BOT_TOKEN still holds a placeholder, not a value" in report
    assert "(SLACK_APP_TOKEN still holds a placeholder, not a value)" in report
    assert "✗ GOOGLE_API_KEY is not set" in report
    assert "Everything checked is fine." not in report
    assert report.splitlines()[-1].startswith("3 problems found (marked ✗)")


def test_env_example_holds_no_secret_that_counts_as_set() -> None:
    """Every secret .env.example names, commented out or not, is empty or a placeholder."""
    lines = (ROOT / ".env.example").read_text(encoding="utf-8").splitlines()
    pairs = [re.match(r"#?\s*([A-Z][A-Z0-9_]*)=(.*)$", line.strip()) for line in lines]
    secrets = {
        m.group(1): m.group(2) for m in pairs if m and re.search(r"TOKEN|SECRET|KEY|PASSWORD", m[1])
    }
    assert {"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "GOOGLE_API_KEY"} <= set(secrets)
    assert {k: v for k, v in secrets.items() if v and not is_placeholder(v)} == {}


@pytest.mark.parametrize("value", PLACEHOLDERS)
def test_a_placeholder_is_unset(value: str) -> None:
    settings = Settings.from_env(dict.fromkeys(SECRETS, value), dotenv=False)
    with pytest.raises(SettingsError) as caught:
        settings.require(*SECRETS)
    *lines, routes = str(caught.value).splitlines()[1:]
    assert routes == NO_KEY_ROUTES, "GOOGLE_API_KEY is missing: the way without a key is said"
    assert [line.split(":")[0].strip() for line in lines] == [
        f"{name}{' (still a placeholder)' * bool(value.strip())}" for name in SECRETS
    ]
    assert settings.google_api_key == ""


@pytest.mark.parametrize("value", REAL)
def test_real_values_are_not_placeholders(value: str) -> None:
    assert not is_placeholder(value)
    settings = Settings.from_env(dict.fromkeys(SECRETS, value), dotenv=False)
    settings.require(*SECRETS)
    assert settings.placeholders == frozenset()


def test_other_settings_fall_back_to_their_defaults() -> None:
    env = {"QUERYBOT_WAREHOUSE": "...", "QUERYBOT_ROW_LIMIT": "<rows>", "PATH": "/usr/bin:..."}
    settings = Settings.from_env(env, dotenv=False)
    assert (settings.warehouse, settings.row_limit) == ("demo", 1000)
    assert settings.placeholders == {"QUERYBOT_WAREHOUSE", "QUERYBOT_ROW_LIMIT"}
