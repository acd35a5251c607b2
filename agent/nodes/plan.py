"""Plan first (strategy `plan`): the model reads the question as a plan before any SQL; the
plan's text filters are grounded in the real values (agent.strategies.planning) and the plan goes to
the SQL step, or a clarifying question ends the question when a value has nothing close."""

from __future__ import annotations

import logging

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig

from agent.context import AgentDeps
from agent.model import prompts
from agent.nodes.generate import build_messages, model_context
from agent.state import Step, ThreadState, Update
from agent.strategies.planning import PlanReply, ground_plan

log = logging.getLogger(__name__)


def plan(state: ThreadState, config: RunnableConfig, deps: AgentDeps) -> Update:
    """A plan for the SQL step; any failure here only means no plan (generate goes on, and
    reports a model or warehouse fault that stops it too)."""
    try:
        snapshot = deps.visible(state.get("identity", ""))
        context = model_context(state, deps, snapshot)
        messages = [*build_messages(state, deps, context, config), HumanMessage(prompts.PLAN)]
        out = deps.structured(PlanReply).invoke(messages, config)
    except Exception as exc:  # the SQL step meets (and reports) model and warehouse faults too
        log.warning("no plan: %r", exc)
        return _skipped("the plan step failed", f" ({type(exc).__name__}: {str(exc)[:200]})")
    reply: PlanReply | None = out.get("parsed")
    if reply is None:
        return _skipped("the model's plan could not be read")
    if reply.kind == "clarify":
        message = reply.explanation.strip() or "Could you say more precisely what you need?"
        return {
            "plan": {},
            "final": {"kind": "clarify", "message": message},
            "trace": [_step("Planning showed the question needs clarifying.")],
        }
    live = deps.live(state.get("identity", ""))
    grounded = ground_plan(reply, snapshot, context.tables, live)
    if grounded.clarify:
        return {
            "plan": {},
            "final": {"kind": "clarify", "message": grounded.clarify},
            "trace": [_step("A value the question filters on does not occur in the data.")],
        }
    fixed = [
        f"'{f['asked']}' to '{f['value']}' in {f['column']}"
        for f in grounded.plan["filters"]
        if f.get("asked")
    ]
    brief = "it planned the query first" + (f", correcting {', '.join(fixed)}" if fixed else "")
    text = "The model planned the query before writing SQL" + (
        f"; filter values that do not occur were corrected to real ones: {', '.join(fixed)}."
        if fixed
        else "."
    )
    return {"plan": grounded.plan, "trace": [_step(text, brief)]}


def _skipped(why: str, detail: str = "") -> Update:
    """No plan (the SQL step goes on without one), and the trace says why."""
    text = f"No plan was made: {why}{detail}. The SQL was written without one."
    return {"plan": {}, "trace": [_step(text, f"no plan was made ({why})")]}


def _step(text: str, brief: str = "") -> Step:
    step: Step = {"kind": "plan", "text": text}
    if brief:
        step["brief"] = brief
    return step
