"""Settings: one clear message naming every missing secret; .env read from the run directory."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import pytest

from bot.cli import main
from bot.settings import DEFAULT_WORKERS, Settings, SettingsError


def test_missing_secrets_are_named_with_where_to_get_them() -> None:
    settings = Settings.from_env({})
    with pytest.raises(SettingsError) as caught:
        settings.require("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", *settings.model_secrets())
    message = str(caught.value)
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "GOOGLE_API_KEY"):
        assert name in message
    assert "OAuth & Permissions" in message and ".env" in message


def test_scripted_models_need_no_key() -> None:
    assert Settings.from_env({"QUERYBOT_MODEL": "scripted:x.jsonl"}).model_secrets() == []


def test_bad_numbers_are_reported() -> None:
    with pytest.raises(SettingsError) as caught:
        Settings.from_env({"QUERYBOT_ROW_LIMIT": "lots"})
    assert str(caught.value) == (
        "QUERYBOT_ROW_LIMIT must be a whole number from 1 to 100000 (default 1000), got 'lots'."
    )


def test_dotenv_comes_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".env").write_text("QUERYBOT_WAREHOUSE=duckdb:/x.duckdb\nQUERYBOT_ROW_LIMIT=7\n")
    monkeypatch.chdir(tmp_path)
    # .env is loaded into the environment: a copy, so that nothing of it outlives the test
    monkeypatch.setattr(os, "environ", os.environ.copy())
    monkeypatch.delenv("QUERYBOT_WAREHOUSE", raising=False)
    monkeypatch.setenv("QUERYBOT_ROW_LIMIT", "9")
    settings = Settings.from_env()
    assert settings.warehouse == "duckdb:/x.duckdb"
    assert settings.row_limit == 9, "the environment wins over .env"


def test_cli_start_without_settings_prints_one_message_and_no_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "GOOGLE_API_KEY", "QUERYBOT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    assert main(["run"]) == 2
    err = capsys.readouterr().err
    assert "SLACK_BOT_TOKEN" in err and "SLACK_APP_TOKEN" in err
    assert "Traceback" not in err


def test_cli_reports_an_unknown_warehouse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.jsonl").write_text("")
    monkeypatch.setenv("QUERYBOT_MODEL", f"scripted:{tmp_path / 's.jsonl'}")
    monkeypatch.setenv("QUERYBOT_WAREHOUSE", "oracle:scott/tiger")
    assert main(["ask", "hello"]) == 2
    assert "demo" in capsys.readouterr().err


def test_cli_reports_a_broken_glossary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.jsonl").write_text("")
    (tmp_path / "glossary.yaml").write_text("terms: [unclosed\n")
    monkeypatch.setenv("QUERYBOT_MODEL", f"scripted:{tmp_path / 's.jsonl'}")
    monkeypatch.setenv("QUERYBOT_GLOSSARY", str(tmp_path / "glossary.yaml"))
    assert main(["ask", "hello"]) == 2
    err = capsys.readouterr().err
    assert "QUERYBOT_GLOSSARY" in err and "glossary.yaml" in err and "Traceback" not in err


def test_workers_default_and_bad_values() -> None:
    assert Settings.from_env({}).workers == DEFAULT_WORKERS
    assert Settings.from_env({"QUERYBOT_WORKERS": " 12 "}).workers == 12
    for bad in ("0", "-3", "many", "2.5", "1025"):
        with pytest.raises(SettingsError) as caught:
            Settings.from_env({"QUERYBOT_WORKERS": bad})
        assert str(caught.value) == (
            f"QUERYBOT_WORKERS must be a whole number from 1 to 1024 (default 64), got '{bad}'."
        )


def test_time_limits_default_and_bad_values() -> None:
    settings = Settings.from_env({"QUERYBOT_MODEL_TIMEOUT_S": "2.5"})
    assert (settings.model_timeout_s, settings.query_timeout_s) == (2.5, 60)
    for name, most in (("QUERYBOT_MODEL_TIMEOUT_S", 3600), ("QUERYBOT_QUERY_TIMEOUT_S", 86400)):
        for bad in ("0", "-1", "nan", "inf", "soon", str(most + 1)):
            with pytest.raises(SettingsError) as caught:
                Settings.from_env({name: bad})
            assert str(caught.value) == (
                f"{name} must be a number above 0, at most {most} (default 60), got '{bad}'."
            )


def test_today_is_a_date_or_unset() -> None:
    assert Settings.from_env({}, dotenv=False).today is None
    assert Settings.from_env({"QUERYBOT_TODAY": " 2026-11-01 "}, dotenv=False).today == date(
        2026, 11, 1
    )
    with pytest.raises(SettingsError, match="QUERYBOT_TODAY must be a date written YYYY-MM-DD"):
        Settings.from_env({"QUERYBOT_TODAY": "tomorrow"}, dotenv=False)
