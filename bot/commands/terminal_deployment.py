"""The Deployment behind `querybot ask` and `querybot chat`: the configured model, the demo
mode's recorded replies (`--demo`), or, when the model's key is missing, no model at all.

Without the key a terminal still runs SQL a person pastes (it is never sent to the model); a
question in words is refused before the graph is asked, saying what is missing and where to go
(`refusal`).
"""

from __future__ import annotations

from agent.conversation import Agent
from agent.model.providers import UnavailableChatModel
from agent.screen.pasted import pasted_sql
from bot.settings import Settings
from bot.wiring import Deployment


def terminal_deployment(settings: Settings, *, demo: bool) -> Deployment:
    """The deployment a terminal command asks through (it opens no warehouse)."""
    if demo:
        from bot.commands.demo import demo_deployment

        return demo_deployment(settings)
    if not settings.missing_model_secrets():
        return Deployment(settings)
    keyless = settings.model_copy(update={"check_model": None})
    return Deployment(keyless, model=UnavailableChatModel(reason=settings.no_model_key()))


def refusal(agent: Agent, question: str) -> str | None:
    """Why `question` cannot be asked of `agent` (its model is unavailable and the question is
    not pasted SQL), else None."""
    model = agent.deps.model
    if isinstance(model, UnavailableChatModel) and not pasted_sql(
        question, agent.deps.connector.dialect
    ):
        return model.reason
    return None
