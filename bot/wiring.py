"""Build the agent a process needs from its settings (shared by the bot and the terminal)."""

from __future__ import annotations

from agent.audit import AuditLog
from agent.context import AgentDeps, Limits
from agent.conversation import Agent, sqlite_checkpointer
from agent.models import load_model
from bot.settings import Settings
from connectors import open_connector


def build_agent(settings: Settings) -> Agent:
    """Open the warehouse, load the model and the thread store. Raises on bad settings.

    Errors raised (SettingsError, ModelConfigError, ConnectorError, ValueError) carry messages
    written for the person starting the bot.
    """
    settings.require(*settings.model_secrets())
    model = load_model(settings.model)
    connector = open_connector(settings.warehouse, data_dir=settings.data_dir)
    limits = Limits(
        row_limit=settings.row_limit,
        query_timeout_s=settings.query_timeout_s,
        max_attempts=settings.max_repairs,
    )
    deps = AgentDeps(
        connector=connector, model=model, limits=limits, audit=AuditLog(settings.audit_db)
    )
    return Agent(deps, sqlite_checkpointer(settings.state_db))
