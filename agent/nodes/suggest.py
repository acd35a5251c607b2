"""After an answer with rows: attach up to three follow-up questions (the follow-ups
strategy, no model call). A failure here costs the suggestions, never the answer."""

from __future__ import annotations

import logging

from agent.context import AgentDeps
from agent.state import ThreadState, Update
from agent.strategies.followups import suggest as follow_ups

log = logging.getLogger(__name__)


def suggest(state: ThreadState, deps: AgentDeps) -> Update:
    final = state["final"]
    assert final is not None
    try:
        questions = follow_ups(final["answer"], deps.visible(state.get("identity", "")))
    except Exception:  # suggestions are a nicety: the answer must still be shown
        log.exception("could not suggest follow-ups")
        return {}
    if not questions:
        return {}
    return {"final": {**final, "answer": {**final["answer"], "follow_ups": questions}}}
