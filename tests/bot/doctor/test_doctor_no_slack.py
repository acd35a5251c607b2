"""`querybot doctor --no-slack`: a deployment used only from the terminal (no Slack app) checks
its warehouses, state and model, and passes when they do; without the flag, a deployment with
no Slack bot token fails and is told about the flag."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from tests.support.cli_process import demo_env, run_querybot

SLACK = ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_API_URL")


def terminal_only(folder: Path) -> dict[str, str]:
    """The environment of a terminal-only deployment: the demo, a scripted model, no Slack."""
    script = folder / "script.jsonl"
    script.write_text(json.dumps({"kind": "clarify", "message": "?"}) + "\n")
    return demo_env(folder / "data", leave_out=SLACK, QUERYBOT_MODEL=f"scripted:{script}")


@pytest.mark.slow
def test_without_slack_the_rest_is_checked_and_passes(tmp_path: Path) -> None:
    # in tmp_path: no .env from the project
    done = run_querybot(["doctor", "--no-slack"], cwd=tmp_path, env=terminal_only(tmp_path))
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
