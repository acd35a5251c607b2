"""Build the agent a process needs from its settings (shared by the bot and the terminal)."""

from __future__ import annotations

from agent.audit import AuditLog, PostgresAuditLog
from agent.context import AgentDeps, Limits
from agent.conversation import Agent, postgres_checkpointer, sqlite_checkpointer
from agent.examples import ExampleStore
from agent.glossary import Glossary, GlossaryError
from agent.models import load_model
from bot.settings import Settings, SettingsError
from connectors import open_connector


def build_agent(settings: Settings) -> Agent:
    """Open the warehouse, load the model and the thread store. Raises on bad settings.

    Errors raised (SettingsError, ModelConfigError, ConnectorError, ValueError) carry messages
    written for the person starting the bot.
    """
    settings.require(*settings.model_secrets())
    if settings.profile_values not in {"auto", "on", "off"}:
        raise SettingsError(
            f"QUERYBOT_PROFILE_VALUES={settings.profile_values!r}: use auto, on or off."
        )
    try:
        glossary = Glossary.load(settings.glossary) if settings.glossary else None
    except GlossaryError as exc:
        raise SettingsError(f"QUERYBOT_GLOSSARY: {exc}") from exc
    model = load_model(settings.model)
    connector = open_connector(settings.warehouse, data_dir=settings.data_dir)
    profile = settings.profile_values == "on" or (
        settings.profile_values == "auto" and connector.name != "bigquery"
    )
    limits = Limits(
        row_limit=settings.row_limit,
        # the answer keeps the whole capped result, so the CSV in the thread holds all of it
        answer_rows=settings.row_limit,
        query_timeout_s=settings.query_timeout_s,
        max_attempts=settings.max_repairs,
        profile_values=profile,
    )
    deps = AgentDeps(
        connector=connector,
        model=model,
        limits=limits,
        audit=(
            PostgresAuditLog(settings.state_url)
            if settings.state_url
            else AuditLog(settings.audit_db)
        ),
        examples=ExampleStore(settings.examples_db),
        glossary=glossary,
    )
    if settings.state_url:
        # Every worker may hold a checkpointer connection at once; one more for set-up.
        checkpointer = postgres_checkpointer(
            settings.state_url, max_connections=settings.workers + 1
        )
    else:
        checkpointer = sqlite_checkpointer(settings.state_db)
    return Agent(deps, checkpointer)
