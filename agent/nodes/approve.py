"""Wait for a person: the graph pauses here until the proposal is approved, rejected or edited.

The node re-runs from the top on resume, so nothing before `interrupt()` may have side effects.
The resume is typed (agent.state `Decision` or `Edit`) and checked here, failing closed: one
naming another proposal, or a decision naming other SQL than this proposal's (or none), is not
a decision on this proposal, and execute runs only SQL with the hash the approval named. An edit
goes to the edit node, which checks it. A rejection is remembered (the remember-failures
strategy; not under a warehouse identity) so the model does not propose the same SQL again in
this thread.
"""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig
from langgraph.types import interrupt

from agent.context import AgentDeps, thread_of
from agent.memory.audit import sql_sha256
from agent.memory.failures import PERSON_REJECTED
from agent.outcome import Proposal
from agent.state import Decision, Edit, Step, ThreadState, Update


def approve(state: ThreadState, config: RunnableConfig, deps: AgentDeps) -> Update:
    stored = state["proposal"]
    assert stored is not None
    proposal = Proposal.from_dict(stored)
    value = interrupt(stored)
    # A resume naming another proposal (a stale click) is not a decision on this one; one
    # without a kind is a decision (as drivers of the graph sent before edits were typed).
    if not isinstance(value, dict) or value.get("proposal_id") != proposal.proposal_id:
        return {"decision": None, "edit": None}
    kind = value.get("kind", "decision")
    if kind == "edit":
        edit: Edit = {
            "kind": "edit",
            "proposal_id": proposal.proposal_id,
            "sql": str(value.get("sql", "")),
            "by": str(value.get("by", "")),
        }
        return {"decision": None, "edit": edit}
    if kind != "decision" or value.get("sql_sha256") != sql_sha256(proposal.sql):
        return {"decision": None, "edit": None}
    decision: Decision = {
        "kind": "decision",
        "proposal_id": proposal.proposal_id,
        "approved": bool(value.get("approved")),
        "by": str(value.get("by", "")),
        "labels": {str(k): str(v) for k, v in (value.get("labels") or {}).items()},
        "sql_sha256": str(value["sql_sha256"]),
    }
    deps.audit.record(
        thread_of(config),
        "approved" if decision["approved"] else "rejected",
        proposal_id=proposal.proposal_id,
        actor=decision["by"],
        sql=proposal.sql,
    )
    pid, by = proposal.proposal_id, decision["by"]
    if not decision["approved"]:
        if deps.remembers_failures(proposal.run_as):
            sql = " ".join(proposal.sql.split())
            problem = f"A person rejected this SQL, so do not propose it again: {sql}"
            deps.failures.record(
                deps.connector.name, thread_of(config), PERSON_REJECTED, [problem], proposal.sql
            )
        message = f"Rejected by {by}; nothing was run."
        step: Step = {"kind": "rejected", "text": message, "proposal_id": pid, "by": by}
        return {
            "decision": decision,
            "edit": None,
            "final": {"kind": "rejected", "message": message},
            "trace": [step],
        }
    step = {"kind": "approved", "text": f"Approved by {by}.", "proposal_id": pid, "by": by}
    return {"decision": decision, "edit": None, "trace": [step]}
