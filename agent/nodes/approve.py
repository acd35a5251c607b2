"""Wait for a person: the graph pauses here until the proposal is approved or rejected.

The node re-runs from the top on resume, so nothing before `interrupt()` may have side effects.
A decision names the hash of the SQL the person was shown; one naming other SQL (or none) is not
a decision on this proposal, and execute runs only SQL with the hash the approval named.
A rejection is remembered (the remember-failures strategy) so the model does not propose the same
SQL again in this thread.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import interrupt

from agent.audit import sql_sha256
from agent.context import AgentDeps, thread_of
from agent.failures import PERSON_REJECTED
from agent.state import ThreadState


def approve(state: ThreadState, config: RunnableConfig, deps: AgentDeps) -> dict[str, Any]:
    proposal = state["proposal"]
    assert proposal is not None
    value = interrupt(proposal)
    # A resume naming another proposal (a stale click) is not a decision on this one.
    if not isinstance(value, dict) or value.get("proposal_id") != proposal["proposal_id"]:
        return {"decision": None}
    if value.get("edited_sql"):
        # An edit is a new draft: it goes through the gate again and needs its own approval.
        by = str(value.get("by", ""))
        draft = {"kind": "sql", "explanation": f"SQL edited by {by}.", "sql": value["edited_sql"]}
        edited = f"{by} edited the SQL; the edit went through the checks again."
        pid = proposal["proposal_id"]
        step = {"kind": "edited", "text": edited, "proposal_id": pid, "by": by}
        return {"draft": draft, "proposal": None, "decision": None, "feedback": [], "trace": [step]}
    if value.get("sql_sha256") != sql_sha256(proposal["sql"]):
        return {"decision": None}
    decision = {
        "proposal_id": proposal["proposal_id"],
        "approved": bool(value.get("approved")),
        "by": str(value.get("by", "")),
        "labels": {str(k): str(v) for k, v in (value.get("labels") or {}).items()},
        "sql_sha256": str(value["sql_sha256"]),
    }
    deps.audit.record(
        thread_of(config),
        "approved" if decision["approved"] else "rejected",
        proposal_id=proposal["proposal_id"],
        actor=decision["by"],
        sql=proposal["sql"],
    )
    pid = proposal["proposal_id"]
    if not decision["approved"]:
        if deps.strategies.remember_failures:
            sql = " ".join(proposal["sql"].split())
            problem = f"A person rejected this SQL, so do not propose it again: {sql}"
            deps.failures.record(
                deps.connector.name, thread_of(config), PERSON_REJECTED, [problem], proposal["sql"]
            )
        message = f"Rejected by {decision['by']}; nothing was run."
        step = {"kind": "rejected", "text": message, "proposal_id": pid, "by": decision["by"]}
        return {
            "decision": decision,
            "final": {"kind": "rejected", "message": message},
            "trace": [step],
        }
    by = decision["by"]
    step = {"kind": "approved", "text": f"Approved by {by}.", "proposal_id": pid, "by": by}
    return {"decision": decision, "trace": [step]}
