"""Every group of settings checks its variables at start, one message per bad variable naming it
and what to set (issue 18, item 8); the process environment and a dict give the same settings;
settings built in code read no environment."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.settings import Settings, SettingsError
from connectors.settings import LookerSettings

#: (variable, bad value, the message) for each group: model, query, limits, Slack, state,
#: files, BigQuery, Looker.
BAD = [
    pytest.param(
        "QUERYBOT_MAX_REPAIRS",
        "0",
        "QUERYBOT_MAX_REPAIRS must be a whole number from 1 to 10 (default 3), got '0'.",
        id="model-repairs",
    ),
    pytest.param(
        "QUERYBOT_STRATEGIES",
        "plam",
        "QUERYBOT_STRATEGIES: Unknown strategy 'plam'",
        id="model-strategies",
    ),
    pytest.param(
        "QUERYBOT_ROW_LIMIT",
        "100001",
        "QUERYBOT_ROW_LIMIT must be a whole number from 1 to 100000 (default 1000), got '100001'.",
        id="query-row-limit",
    ),
    pytest.param(
        "QUERYBOT_DISPLAY_ROWS",
        "twenty",
        "QUERYBOT_DISPLAY_ROWS must be a whole number from 1 to 1000 (default 20), got 'twenty'.",
        id="query-display-rows",
    ),
    pytest.param(
        "QUERYBOT_PROFILE_VALUES",
        "sometimes",
        "QUERYBOT_PROFILE_VALUES must be one of auto, on, off (default auto), got 'sometimes'.",
        id="query-profile",
    ),
    pytest.param(
        "QUERYBOT_ALLOWED_FUNCTIONS",
        "fiscal_week, ops.",
        "QUERYBOT_ALLOWED_FUNCTIONS: 'ops.' is not a function name; list names separated by "
        "commas, e.g. fiscal_week",
        id="query-functions",
    ),
    pytest.param(
        "QUERYBOT_ALLOWED_TYPES",
        "mood, .geography",
        "QUERYBOT_ALLOWED_TYPES: '.geography' is not a type name; list names separated by "
        "commas, e.g. mood,geography",
        id="query-types",
    ),
    pytest.param(
        "QUERYBOT_MAX_CELL_BYTES",
        "1.5",
        "QUERYBOT_MAX_CELL_BYTES must be a whole number from 1 to 1073741824 (default 1048576), "
        "got '1.5'.",
        id="limits-cell",
    ),
    pytest.param(
        "QUERYBOT_ENGINE_TEMP_MB",
        "0",
        "QUERYBOT_ENGINE_TEMP_MB must be a whole number from 1 to 1048576 (default 2048), got '0'.",
        id="limits-temp",
    ),
    pytest.param(
        "QUERYBOT_HTTP_MAX_BODY_KB",
        "102401",
        "QUERYBOT_HTTP_MAX_BODY_KB must be a whole number from 1 to 102400 (default 1024), "
        "got '102401'.",
        id="slack-body",
    ),
    pytest.param(
        "QUERYBOT_NO_SELF_APPROVAL",
        "sometimes",
        "QUERYBOT_NO_SELF_APPROVAL must be true or false, got 'sometimes'.",
        id="slack-self-approval",
    ),
    pytest.param(
        "QUERYBOT_CHANNELS",
        "C0123ABCD, #general",
        "QUERYBOT_CHANNELS: #general is not a channel id; list ids (like C0123456789, from the "
        "channel's details in Slack) separated by commas, not names.",
        id="slack-channels",
    ),
    pytest.param(
        "QUERYBOT_APPROVERS",
        "everyone",
        "QUERYBOT_APPROVERS: everyone is not anyone, requester, a user id (U…) or a user group "
        "id (S…)",
        id="slack-approvers",
    ),
    pytest.param(
        "QUERYBOT_STATE_URL",
        "mysql://x/y",
        "QUERYBOT_STATE_URL: should be a postgresql://user@host:port/database URL (leave it "
        "unset to keep state in SQLite files in QUERYBOT_DATA_DIR).",
        id="state-url",
    ),
    pytest.param(
        "QUERYBOT_FILE_IDLE_S",
        "0",
        "QUERYBOT_FILE_IDLE_S must be a number above 0, at most 2592000 (default 86400), got '0'.",
        id="files-idle",
    ),
    pytest.param(
        "QUERYBOT_FILE_MAX_TABLES",
        "1001",
        "QUERYBOT_FILE_MAX_TABLES must be a whole number from 1 to 1000 (default 20), got '1001'.",
        id="files-tables",
    ),
    pytest.param(
        "QUERYBOT_BQ_PRICE_PER_TIB",
        "free",
        "QUERYBOT_BQ_PRICE_PER_TIB must be a number from 0 to 1000 (default 6.25), got 'free'.",
        id="bigquery-price",
    ),
    pytest.param(
        "LOOKER_SAMPLE_ROWS",
        "-1",
        "LOOKER_SAMPLE_ROWS must be a whole number from 0 to 100 (default 3), got '-1'.",
        id="looker-samples",
    ),
]


@pytest.mark.parametrize(("variable", "value", "message"), BAD)
def test_a_bad_variable_is_named_with_what_to_set(variable: str, value: str, message: str) -> None:
    with pytest.raises(SettingsError) as caught:
        Settings.from_env({variable: value}, dotenv=False)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_each_bad_variable_has_its_own_line() -> None:
    env = {"QUERYBOT_ROW_LIMIT": "lots", "QUERYBOT_WORKERS": "0", "QUERYBOT_MODEL": "x:y"}
    with pytest.raises(SettingsError) as caught:
        Settings.from_env(env, dotenv=False)
    assert str(caught.value).splitlines() == [
        "Some settings are wrong; fix them in .env or the environment:",
        "  QUERYBOT_ROW_LIMIT must be a whole number from 1 to 100000 (default 1000), got 'lots'.",
        "  QUERYBOT_WORKERS must be a whole number from 1 to 1024 (default 64), got '0'.",
    ]


def test_the_ranges_ends_are_taken() -> None:
    env = {
        "QUERYBOT_ROW_LIMIT": "100000",
        "QUERYBOT_MAX_REPAIRS": "1",
        "QUERYBOT_BQ_PRICE_PER_TIB": "0",
        "LOOKER_SAMPLE_ROWS": "0",
        "QUERYBOT_QUERY_TIMEOUT_S": "0.5",
        "QUERYBOT_PROFILE_VALUES": " OFF ",
        "QUERYBOT_NO_SELF_APPROVAL": "yes",
        "QUERYBOT_CHANNELS": "C0123ABCD, G0123ABCD",
    }
    settings = Settings.from_env(env, dotenv=False)
    assert (settings.row_limit, settings.max_repairs, settings.query_timeout_s) == (100000, 1, 0.5)
    assert (settings.bq_price_per_tib, settings.looker_sample_rows) == (0, 0)
    assert (settings.profile_values, settings.no_self_approval) == ("off", True)
    assert settings.channels == {"C0123ABCD", "G0123ABCD"}


def test_blank_is_unset() -> None:
    settings = Settings.from_env({"QUERYBOT_ROW_LIMIT": "  ", "QUERYBOT_MODEL": ""}, dotenv=False)
    assert (settings.row_limit, settings.model) == (1000, Settings().model)


def test_the_process_environment_gives_what_a_dict_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {
        "QUERYBOT_ROW_LIMIT": "7",
        "QUERYBOT_CHANNELS": "C0123ABCD,C0456EFGH",
        "QUERYBOT_ALLOWED_FUNCTIONS": "Fiscal_Week, ops.margin",
        "QUERYBOT_ALLOWED_TYPES": 'Mood, ops."Currency"',
        "QUERYBOT_GLOSSARY": str(tmp_path / "glossary.yaml"),
        "QUERYBOT_MAX_RESULT_MB": "8",
        "BIGQUERY_LOCATION": "EU",
        "LOOKER_SAMPLE_ROWS": "5",
        "SLACK_BOT_TOKEN": "xoxb-...",
    }
    for field in Settings.model_fields.values():
        if isinstance(field.validation_alias, str):
            monkeypatch.delenv(field.validation_alias, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    from_process = Settings.from_env(dotenv=False)
    assert from_process.row_limit == 7 and from_process.limits.max_result_bytes == 8 * 1024**2
    assert from_process.allowed_functions == ("fiscal_week", "ops.margin")
    assert from_process.allowed_types == ("mood", "ops.currency")
    assert from_process.placeholders == {"SLACK_BOT_TOKEN"}
    assert from_process.slack_bot_token == ""
    assert from_process == Settings.from_env(env, dotenv=False)


def test_settings_built_in_code_read_no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUERYBOT_ROW_LIMIT", "7")
    monkeypatch.setenv("LOOKER_SAMPLE_ROWS", "9")
    assert Settings(slack_bot_token="xoxb-test").row_limit == 1000
    assert LookerSettings().looker_sample_rows == 3
    assert LookerSettings.from_env().looker_sample_rows == 9


def test_secrets_stay_out_of_the_repr() -> None:
    secrets = {
        "SLACK_BOT_TOKEN": "xoxb-1234567890-secret",
        "SLACK_APP_TOKEN": "xapp-1-secret",
        "SLACK_SIGNING_SECRET": "signing-secret-value",
        "GOOGLE_API_KEY": "AIzaSy-secret",
        "LOOKER_CLIENT_SECRET": "looker-secret-value",
        "SNOWFLAKE_PASSWORD": "snowflake-password-value",
        "SNOWFLAKE_PRIVATE_KEY_PASSPHRASE": "snowflake-passphrase-value",
        "QUERYBOT_STATE_URL": "postgresql://bot:hunter2@db/state",
    }
    shown = repr(Settings.from_env(secrets, dotenv=False))
    assert [value for value in secrets.values() if value in shown] == []


def ranges() -> dict[str, str]:
    """Each numeric setting's variable and what it takes, in the words of its messages."""
    return {
        str(field.validation_alias): Settings.expected(name)
        for name, field in Settings.model_fields.items()
        if field.annotation in (int, float)
    }


def test_every_numeric_setting_has_a_range() -> None:
    numeric = ranges()
    assert len(numeric) == 31  # a numeric setting typed otherwise would slip past this test
    unbounded = {
        variable: words
        for variable, words in numeric.items()
        if not re.fullmatch(r"a (whole )?number (from \S+ to|above \S+, at most) \d+", words)
    }
    assert unbounded == {}


def test_the_ranges_in_docs_are_the_ranges_checked() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "settings.md").read_text("utf-8")
    shown = dict(re.findall(r"^\| `([A-Z_]+)` \| (a (?:whole )?number [^|]+?) \|$", docs, re.M))
    assert shown == ranges()
