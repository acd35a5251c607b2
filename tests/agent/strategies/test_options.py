"""`QUERYBOT_STRATEGIES`: names switch steps on over the default, `-name` off, `none` all off."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.context import Strategies
from agent.model.providers import ScriptedChatModel
from agent.strategies.options import StrategiesError, describe, parse_strategies
from bot.settings import Settings, SettingsError
from bot.wiring import Deployment
from connectors.duckdb.connector import DuckDBConnector


def test_the_default_and_additions() -> None:
    assert parse_strategies("") == parse_strategies("default") == Strategies()
    both = parse_strategies("plan, self_check,candidates:4")
    assert (both.plan, both.self_check, both.candidates, both.variations) == (True, True, 4, 0)
    assert both.relax_empty and both.remember_failures  # the default stays on
    assert parse_strategies("candidates").candidates == 3
    assert parse_strategies("variations").variations == 2
    assert (
        describe(both)
        == "plan,self_check,candidates:4,remember_failures,redraft,ask_unmatched,ask_vague"
    )


def test_none_and_switching_off() -> None:
    off = parse_strategies("none")
    assert not (off.relax_empty or off.follow_ups or off.remember_failures or off.plan)
    assert off.candidates == 1 and describe(off) == "none"
    assert describe(parse_strategies("none,plan")) == "plan"
    no_follow = parse_strategies("-follow_ups")
    assert not no_follow.follow_ups and no_follow.relax_empty


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("plam", "Unknown strategy 'plam'"),
        ("candidates:x", "must be a number"),
        ("candidates:20", "must be 1 to 8"),
        ("plan:2", "plan takes no count"),
    ],
)
def test_bad_settings_say_what_is_accepted(text: str, says: str) -> None:
    with pytest.raises(StrategiesError, match=says):
        parse_strategies(text)
    with pytest.raises(SettingsError, match=f"QUERYBOT_STRATEGIES: .*{says}"):
        Settings.from_env({"QUERYBOT_STRATEGIES": text}, dotenv=False)


def test_settings_read_the_strategies_and_check_model() -> None:
    env = {"QUERYBOT_STRATEGIES": "self_check", "QUERYBOT_CHECK_MODEL": "google_genai:small"}
    settings = Settings.from_env({**env, "QUERYBOT_MODEL": "scripted:x"}, dotenv=False)
    assert settings.parsed_strategies().self_check
    assert settings.check_model == "google_genai:small"
    assert settings.model_secrets() == ["GOOGLE_API_KEY"]


def test_the_deployment_gives_its_agents_the_strategies_and_the_check_model(
    tmp_path: Path, shop_path: Path
) -> None:
    script = tmp_path / "s.jsonl"
    script.write_text('"unused"\n')
    env = {
        "QUERYBOT_MODEL": f"scripted:{script}",
        "QUERYBOT_CHECK_MODEL": f"scripted:{script}",
        "QUERYBOT_STRATEGIES": "plan,self_check",
        "QUERYBOT_DATA_DIR": str(tmp_path / "data"),
    }
    deployment = Deployment(Settings.from_env(env, dotenv=False), env={})
    connector = DuckDBConnector(shop_path)
    try:
        agent = deployment.agent_for(connector, name="shop")
        assert agent.deps.strategies.plan and agent.deps.strategies.self_check
        assert isinstance(agent.deps.check_model, ScriptedChatModel)
        assert agent.deps.check_model is not agent.deps.model
        assert deployment.failures_path("shop") == tmp_path / "data" / "failures.sqlite"
    finally:
        agent.deps.catalog.wait_idle(timeout_s=30)
        connector.close()
        deployment.close()
