"""`querybot doctor --no-slack`: a deployment used only from the terminal (no Slack app) checks
its warehouses, state and model, and passes when they do; without the flag, a deployment with
no Slack bot token fails and is told about the flag."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import main

SLACK = ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_API_URL")


def terminal_only(folder: Path) -> dict[str, str]:
    """The environment of a terminal-only deployment: the demo, a scripted model, no Slack."""
    script = folder / "script.jsonl"
    script.write_text(json.dumps({"kind": "clarify", "message": "?"}) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in SLACK and k != "QUERYBOT_CONFIG"}
    env.update(
        QUERYBOT_MODEL=f"scripted:{script}",
        QUERYBOT_WAREHOUSE="demo",
        QUERYBOT_DATA_DIR=str(folder / "data"),
    )
    return env


@pytest.mark.slow
def test_without_slack_the_rest_is_checked_and_passes(tmp_path: Path) -> None:
    code = "import sys; from bot.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", code, "doctor", "--no-slack"],
        cwd=tmp_path,  # no .env from the project
        env=terminal_only(tmp_path),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "✓ sample query passed the gate and ran" in out
    assert "✓ QUERYBOT_MODEL builds" in out and "✓ the data directory is writable" in out
    assert "slack\n  · not checked (--no-slack):" in out and "✗" not in out
    assert out.strip().endswith("Everything checked is fine.")


def test_with_no_slack_token_the_doctor_fails_and_names_the_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env from the project
    for name in (*SLACK, "QUERYBOT_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("QUERYBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "secret")  # a Slack setting, but no bot token
    assert main(["doctor", "--warehouse", "nowhere"]) == 1  # no warehouse of that name: none opens
    out = capsys.readouterr().out
    slack = out[out.index("\nslack\n") :]
    assert "✗ SLACK_BOT_TOKEN is not set" in slack
    assert "· for querybot in the terminal only (`querybot ask`, `querybot eval`)" in slack
    assert "check the rest with `querybot doctor --no-slack`" in slack
