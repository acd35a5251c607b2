"""After an empty result (no rows, or only NULLs): propose a loosened query
(the relax strategy, no model call) that goes through the same checks as any draft and needs
its own approval.

Once per question: a relaxed query that comes back empty too is the answer. When nothing can be
loosened, or the loosened query fails the checks, the empty answer stands and the trace says why.
The empty answer is kept in `relax` so the bot can show it above the new proposal.
"""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig

from agent.context import AgentDeps
from agent.nodes.finish import QUESTION_KEPT
from agent.nodes.validate import validate
from agent.outcome import Answer, Proposal
from agent.state import Draft, Step, ThreadState, Turn, Update
from agent.strategies.coverage import covers, period_range
from agent.strategies.relax import Relaxed
from agent.strategies.relax import relax as loosen
from connectors.base import ConnectorError


def relax(state: ThreadState, config: RunnableConfig, deps: AgentDeps) -> Update:
    final, proposal = state["final"], state["proposal"]
    assert final is not None and proposal is not None
    answer = Answer.from_dict(final["answer"])
    was = Proposal.from_dict(proposal).explanation.strip()
    why = "returned no rows" if answer.total_rows == 0 else "returned only empty (NULL) values"
    steps: list[Step] = [{"kind": "empty", "text": f"The query {why}."}]
    identity = state.get("identity", "")
    try:
        loosened = loosen(answer.sql, deps.visible(identity), answer.tables)
    except ConnectorError:
        loosened = None
    if loosened is None:
        text = "No filter could be loosened (case of text values, a date window), so it stands."
        steps.append({"kind": "not_relaxed", "text": text})
        return {"relaxed": True, "trace": steps}
    changes = loosened.describe()
    other_period = " It answers for another period than the one asked." if loosened.period else ""
    draft: Draft = {
        "kind": "sql",
        "explanation": f"Loosened: {changes}.{other_period} (Was: {was})",
        "sql": loosened.sql,
    }
    checked = validate({**state, "draft": draft, "attempts": 0}, config, deps)
    loosened_proposal = checked.get("proposal")
    if not loosened_proposal:
        text = (
            f"The loosened query ({changes}) did not pass the checks, so the empty result stands."
        )
        steps += [*checked.get("trace", []), {"kind": "not_relaxed", "text": text}]
        return {"relaxed": True, "trace": steps}
    steps.append({"kind": "relaxed", "text": f"Loosened it: {changes}; it needs its own approval."})
    message = _message(why, loosened, deps, identity)
    empty_turn: Turn = {
        "question": state["question"][:QUESTION_KEPT],
        "outcome": "answer",
        "sql": answer.sql,
        "explanation": answer.explanation,
        "columns": answer.columns,
        "total_rows": answer.total_rows,
    }
    return {
        "relaxed": True,
        "relax": {
            "answer": final["answer"],
            "proposal_id": loosened_proposal["proposal_id"],
            "message": message,
        },
        "draft": draft,
        "proposal": loosened_proposal,
        "decision": None,
        "final": None,
        "turns": [empty_turn],
        "trace": [*steps, *checked["trace"]],
    }


def _message(why: str, loosened: Relaxed, deps: AgentDeps, identity: str) -> str:
    """What the person reads above the loosened proposal. A dropped period is said plainly, with
    the dates the data covers: the loosened query answers another question."""
    period = loosened.period
    if period is None:  # the period, if any, is kept (the empty answer says what it covers)
        return (
            f"The query {why}, so I loosened it: {loosened.describe()}. "
            "The loosened version below needs its own approval."
        )
    found = period_range(period, deps, identity)
    known = covers(found) if found else "I could not tell which dates the data covers."
    return (
        f"The query {why}. {known} The only filter I could loosen is the period asked for "
        f"({period.terms}), so I loosened it: {loosened.describe()}. The loosened version below "
        "answers for a different period (every date), not the one asked; it needs its own "
        "approval."
    )
