"""Demo mode (`querybot chat --demo`, `querybot ask --demo`): the demo warehouse answered from
recorded model replies (`demo_replies.json`, shipped in the package), so a newcomer sees the
whole flow (proposal, approval, answer, a follow-up) with no model key and no network.

The settings are the person's own (data directory, row limit, timeouts), but the warehouse is
always the demo one and only the shipped strategies run: their replies are what was recorded.
"""

from __future__ import annotations

from pathlib import Path

from agent.model.recorded import RecordedChatModel
from bot.settings import Settings
from bot.wiring import Deployment

#: Said first, on screen, whenever demo mode runs.
DEMO_LABEL = "demo mode: recorded model replies, no model is called"

REPLIES = Path(__file__).with_name("demo_replies.json")


def demo_model() -> RecordedChatModel:
    return RecordedChatModel.from_json(REPLIES)


def demo_deployment(settings: Settings) -> Deployment:
    """A Deployment of the demo warehouse alone, on the recorded replies."""
    demo = settings.model_copy(
        update={
            "warehouse": "demo",
            "config_file": None,
            "glossary": None,
            "dbt_project": None,
            "check_model": None,
            "strategies": "",
        }
    )
    return Deployment(demo, model=demo_model(), env={})
