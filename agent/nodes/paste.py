"""Judge SQL a person pasted: the same checks as any draft (the gate, the cost estimate, the
value check: agent.screen.judge.screen), and never the model after them.

Accepted, it is proposed with what the checks changed named in its explanation: the person
wrote it, so they are told what no longer reads as they wrote it. Refused, the question ends
with the reasons and what to do next (fix the SQL and send it again, or ask in words): no model
writes another query in its place, which the person would take for theirs.
"""

from __future__ import annotations

from dataclasses import replace

from langchain_core.runnables import RunnableConfig

from agent.catalog.snapshot import CatalogSnapshot
from agent.context import AgentDeps
from agent.outcome import Proposal
from agent.screen.judge import MISSING_NAMES, Screened, judge, screen
from agent.state import Draft, ThreadState, Update, failed, unreadable_tables
from connectors.base import ConnectorError

#: What to do after pasted SQL was refused or failed in the warehouse.
NEXT_STEP = (
    "Fix the SQL and send it again, or ask your question in words "
    "(“Which region had the most revenue last month?”) and I will write the query."
)


def paste(state: ThreadState, config: RunnableConfig, deps: AgentDeps) -> Update:
    draft = state["draft"]
    assert draft is not None
    try:
        snapshot = deps.visible(state.get("identity", ""))
    except ConnectorError as exc:
        return failed(unreadable_tables(exc))
    return judge_pasted(
        state,
        draft,
        screen(draft["sql"], snapshot, deps, identity=state.get("identity", ""), person=True),
        snapshot,
        config,
        deps,
    )


def judge_pasted(
    state: ThreadState,
    draft: Draft,
    screened: Screened,
    snapshot: CatalogSnapshot,
    config: RunnableConfig,
    deps: AgentDeps,
) -> Update:
    """The update for a person's `draft` once `screened`: a proposal naming what the checks
    changed, or the end of the question with the reasons (agent.screen.judge.judge otherwise)."""
    # judge records the proposal or the refusal in the audit log and the trace; a pasted draft
    # is not the model's, so its refusal is not remembered as the model's mistake
    update = judge(state, draft, screened, config, deps)
    if screened.ok:
        proposal = update.get("proposal")
        changes = changed(screened, deps)
        if proposal and changes:
            told = Proposal.from_dict(proposal)
            explanation = f"{told.explanation} The checks changed it: {changes}."
            update["proposal"] = replace(told, explanation=explanation).to_state()
        return update
    if update.get("final"):  # outside the asker's access (agent.screen.judge.outside_access)
        return update
    names = [t.short_name for t in snapshot.tables]
    # judge's one step says why the checks refused it: the question ends with it
    (refused,) = update["trace"]
    return {**update, **failed(refusal(screened, names), step=refused)}


def changed(screened: Screened, deps: AgentDeps) -> str:
    """The gate's deterministic fixes to the statement (the row cap among them), in one line."""
    fixes = list(screened.verdict.fixes)
    if screened.verdict.row_cap_applied:
        fixes.append(f"row cap added (LIMIT {deps.limits.row_limit})")
    return "; ".join(fixes)


def refusal(screened: Screened, tables: list[str]) -> str:
    """Why the pasted SQL was not proposed, and what to do next; with the warehouse's tables
    when it named tables or columns the warehouse lacks."""
    listed = "\n".join(f"• {problem}" for problem in screened.problems)
    has = ""
    if set(screened.codes) & MISSING_NAMES and tables:
        has = f"This warehouse has these tables: {', '.join(tables[:20])}.\n"
    return f"I did not propose the SQL you sent: the checks refused it.\n{listed}\n{has}{NEXT_STEP}"
