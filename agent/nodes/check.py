"""Self-check (strategy `self_check`): after the gate accepts the model's SQL, a second model
call (`QUERYBOT_CHECK_MODEL`, else the same model) judges its meaning against the question and
the plan. Invalid: the feedback goes to the repair step, within the question's attempt budget.

The check is advice, never a gate: when the budget is spent, the proposal goes to the person with
the reviewer's doubt among its warnings; when the check cannot run (the call failed, or its
verdict could not be read), with a warning that it was not double-checked. Nothing is lost.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from textwrap import shorten

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, Field

from agent.catalog.snapshot import table_key
from agent.context import AgentDeps, thread_of
from agent.model import prompts
from agent.model.question_context import table_text
from agent.outcome import Plain, Proposal
from agent.state import Step, ThreadState, Update
from agent.strategies.planning import plan_text

log = logging.getLogger(__name__)


class CheckReply(BaseModel):
    valid: bool = Field(description="True when the SQL answers the question as asked.")
    feedback: str = Field(default="", description="When not valid: what to change, briefly.")


def check(state: ThreadState, config: RunnableConfig, deps: AgentDeps) -> Update:
    stored = state["proposal"]
    assert stored is not None
    proposal = Proposal.from_dict(stored)
    plan = state.get("plan")
    try:
        snapshot = deps.visible(state.get("identity", ""))
        read = {table_key(t) for t in proposal.tables}
        tables = [t for key, t in snapshot.by_key.items() if key in read]
        schema = "\n\n".join(table_text(t, snapshot, deps.context.limits) for t in tables)
        human = prompts.CHECK.format(
            plan_note=" and the plan" if plan else "",
            question=state["question"],
            plan=plan_text(plan) + "\n" if plan else "",
            sql=proposal.sql,
        )
        messages = [SystemMessage(f"Tables the SQL reads:\n{schema}"), HumanMessage(human)]
        out = deps.structured(CheckReply, deps.check_model).invoke(messages, config)
    except Exception as exc:  # advice only: a failed check never costs the person the proposal
        log.warning("the self-check failed: %r", exc)
        return _unchecked(proposal, f"the check's model call failed ({type(exc).__name__})")
    reply: CheckReply | None = out.get("parsed")
    if reply is None:
        return _unchecked(proposal, "the check's verdict could not be read")
    if reply.valid:
        text = "A second model call checked the SQL against the question and found no problem."
        return {"needs_check": False, "trace": [_step(text, "a second check passed it")]}
    doubt = reply.feedback.strip()[:1000] or "it does not answer the question as asked"
    deps.audit.record(
        thread_of(config),
        "self_check_failed",
        proposal_id=proposal.proposal_id,
        actor=state.get("user", ""),
        sql=proposal.sql,
        detail={"feedback": doubt},
    )
    if state.get("attempts", 0) >= deps.limits.max_attempts:
        warning = f"A second check doubted this query: {doubt}"
        step = _step(warning, "a second check doubted it (no attempts left to rewrite it)")
        return {"needs_check": False, "proposal": _warned(proposal, warning), "trace": [step]}
    text = f"A second check found a problem, so the SQL was rewritten: {doubt}"
    brief = f"a second check had it rewritten ({shorten(doubt, 120, placeholder='…')})"
    return {
        "needs_check": False,
        "proposal": None,
        "feedback": [f"A review of your SQL against the question found: {doubt}"],
        "trace": [_step(text, brief)],
    }


def _unchecked(proposal: Proposal, why: str) -> Update:
    """The proposal goes on, telling the person approving that it was not double-checked."""
    warning = f"Not double-checked: {why}. Only the safety and schema checks passed it."
    step = _step(f"The self-check could not run: {why}.", "it was not double-checked")
    return {"needs_check": False, "proposal": _warned(proposal, warning), "trace": [step]}


def _warned(proposal: Proposal, warning: str) -> Plain:
    """`proposal` (as the state keeps it) with `warning` added to its warnings."""
    return replace(proposal, warnings=[*proposal.warnings, warning]).to_state()


def _step(text: str, brief: str) -> Step:
    return {"kind": "self_check", "text": text, "brief": brief}
