"""Plan first (strategy `plan`): the model reads the question as a plan before any SQL; the
plan's text filters are grounded in the real values (agent.planning) and the plan goes to the SQL
step, or a clarifying question ends the question when a value has nothing close."""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig

from agent import prompts
from agent.context import AgentDeps
from agent.nodes.generate import build_messages, model_context
from agent.planning import PlanReply, ground_plan
from agent.state import ThreadState

log = logging.getLogger(__name__)


def plan(state: ThreadState, config: RunnableConfig, deps: AgentDeps) -> dict[str, Any]:
    """A plan for the SQL step; any failure here only means no plan (generate goes on)."""
    try:
        snapshot = deps.catalog.snapshot()
        context = model_context(state, deps, snapshot)
        messages = [*build_messages(state, deps, context, config), HumanMessage(prompts.PLAN)]
        out = deps.structured(PlanReply).invoke(messages, config)
    except Exception as exc:  # the SQL step meets (and reports) model and warehouse faults too
        log.warning("no plan: %r", exc)
        return {"plan": {}}
    reply: PlanReply | None = out.get("parsed")
    if reply is None:
        return {
            "plan": {},
            "trace": [_step("The plan could not be read; SQL was written without one.")],
        }
    if reply.kind == "clarify":
        message = reply.explanation.strip() or "Could you say more precisely what you need?"
        return {
            "plan": {},
            "final": {"kind": "clarify", "message": message},
            "trace": [_step("Planning showed the question needs clarifying.")],
        }
    live = deps.connector if deps.limits.profile_values else None
    grounded = ground_plan(reply, snapshot, context.tables, live)
    if grounded.clarify:
        return {
            "plan": {},
            "final": {"kind": "clarify", "message": grounded.clarify},
            "trace": [_step("A value the question filters on does not occur in the data.")],
        }
    fixed = grounded.plan["corrections"]
    text = "The model planned the query" + (
        f" ({len(fixed)} filter value(s) corrected to real ones)." if fixed else "."
    )
    return {"plan": grounded.plan, "trace": [_step(text)]}


def _step(text: str) -> dict[str, str]:
    return {"kind": "plan", "text": text}
