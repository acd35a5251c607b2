"""The settings that bound an agent's model calls and queries reach the limits every warehouse's
agent is built with (`Deployment.limits`), as `querybot run` reads them from the environment."""

from __future__ import annotations

from pathlib import Path

from bot.settings import Settings
from bot.wiring import Deployment


def test_the_retry_and_timeout_settings_reach_the_agents_limits(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text("", encoding="utf-8")
    env = {
        "QUERYBOT_MODEL": f"scripted:{script}",
        "QUERYBOT_DATA_DIR": str(tmp_path / "data"),
        "QUERYBOT_MODEL_BACKOFF_S": "0.25",
        "QUERYBOT_QUERY_TIMEOUT_S": "7",
        "QUERYBOT_MAX_REPAIRS": "2",
    }
    deployment = Deployment(Settings.from_env(env, dotenv=False))
    try:
        limits = deployment.limits
        assert (limits.model_backoff_s, limits.query_timeout_s, limits.max_attempts) == (0.25, 7, 2)
    finally:
        deployment.close()
