"""Check a person's edit of the waiting proposal (an `Edit` resume, taken by approve).

The edit goes through the same checks as any draft (agent.screen.judge.screen), once. When the
gate refuses it, or the warehouse's tables cannot be read to check it, nothing changes: the
original proposal waits on, and the edit's `refused` says why and what to do next. Otherwise it
is a new draft by that person, judged as validate (or paste, in a thread of pasted SQL) judges
one: a new proposal needing its own approval, or, when the later checks (the cost estimate, the
value check) refuse it, what they do to any draft. It never runs directly.
"""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig

from agent.context import AgentDeps
from agent.nodes.paste import judge_pasted
from agent.screen.judge import judge, outside_access, screen
from agent.state import Draft, Edit, Step, ThreadState, Update, unreadable_tables
from connectors.base import ConnectorError


def edit(state: ThreadState, config: RunnableConfig, deps: AgentDeps) -> Update:
    edited = state["edit"]
    assert edited is not None
    try:
        snapshot = deps.visible(state.get("identity", ""))
    except ConnectorError as exc:
        return _refused(
            edited,
            f"The edit could not be checked, so nothing changed. {unreadable_tables(exc)}\n"
            "Try the edit again in a moment, or approve the original proposal.",
        )
    identity = state.get("identity", "")
    screened = screen(edited["sql"], snapshot, deps, identity=identity, person=True)
    draft: Draft = {
        "kind": "sql",
        "explanation": f"SQL edited by {edited['by']}.",
        "sql": edited["sql"],
    }
    beyond = None if screened.ok else outside_access(state, screened, deps)
    if beyond is not None:
        # the question runs as the asker's identity, whose view has no such table
        return _refused(
            edited,
            f"The edit was not accepted, so nothing changed: {beyond}\n"
            "Edit again, or approve the original proposal.",
        )
    if not screened.verdict.ok:
        reasons = "\n".join(f"• {problem}" for problem in screened.problems)
        return _refused(
            edited,
            f"The edited SQL was not accepted, so nothing changed:\n{reasons}\n"
            "Fix it and edit again, or approve the original proposal.",
        )
    by = edited["by"]
    text = f"{by} edited the SQL; the edit went through the checks again."
    step: Step = {"kind": "edited", "text": text, "proposal_id": edited["proposal_id"], "by": by}
    replaced: Update = {
        "draft": draft,
        "proposal": None,
        "decision": None,
        "feedback": [],
        "edit": None,
    }
    now: ThreadState = {**state, **replaced}
    if state.get("pasted"):
        judged = judge_pasted(now, draft, screened, snapshot, config, deps)
    else:
        judged = judge(now, draft, screened, config, deps)
    return {**replaced, **judged, "trace": [step, *judged.get("trace", [])]}


def _refused(edited: Edit, why: str) -> Update:
    """Nothing changes: the proposal waits on, and the edit says why it was refused."""
    return {"edit": {**edited, "refused": why}}
