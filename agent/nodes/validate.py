"""Put the draft through the SQL gate, the connector's cost estimate and the value check (real
values for its literal filters, agent.grounding); a pass becomes a proposal, a failure feedback
for repair.

`screen` (the three checks) and `judge` (what their outcome does to the question) are shared
with the candidates strategy, which screens N drafts and judges the best.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from langchain_core.runnables import RunnableConfig

from agent.audit import sql_sha256
from agent.catalog import CatalogSnapshot
from agent.context import AgentDeps, thread_of
from agent.gate import Verdict, check_sql
from agent.grounding import check_values
from agent.outcome import Proposal
from agent.state import Draft, Final, Step, ThreadState, Update, failed, unreadable_tables
from connectors.base import ConnectorError, CostEstimate


@dataclass(frozen=True)
class Screened:
    """One statement after the gate, the cost estimate and the value check."""

    verdict: Verdict
    estimate: CostEstimate | None
    #: Why it cannot be proposed (none: it passed), with a stable code for each.
    problems: tuple[str, ...]
    codes: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return self.verdict.ok and not self.problems


def screen(sql: str, snapshot: CatalogSnapshot, deps: AgentDeps) -> Screened:
    """The gate first; then, for what it lets through, the cost estimate (a dry run where the
    engine has one: nothing runs) and the literal filter values."""
    verdict = check_sql(sql, snapshot.gate_schema, row_limit=deps.limits.row_limit)
    if not verdict.ok:
        reasons = verdict.reasons
        return Screened(verdict, None, tuple(map(str, reasons)), tuple(r.code for r in reasons))
    try:
        estimate = deps.connector.estimate(verdict.sql)
    except ConnectorError as exc:  # e.g. a dry run refused by the warehouse
        return Screened(verdict, None, (exc.engine_message[:1000],), ("estimate_failed",))
    if estimate and estimate.refusal:
        return Screened(verdict, estimate, (estimate.refusal,), ("over_cost_limit",))
    live = deps.connector if deps.limits.profile_values else None
    misses = tuple(str(m) for m in check_values(verdict.sql, snapshot, live))
    return Screened(verdict, estimate, misses, ("value_not_found",) * len(misses))


#: Gate codes that mean the draft needs data the warehouse does not name.
MISSING_NAMES = frozenset({"unknown_table", "unknown_column"})


def _tables_it_has(deps: AgentDeps) -> str:
    """The sentence naming the warehouse's tables (the first 20), or "" when unreadable."""
    try:
        names = [t.short_name for t in deps.catalog.snapshot().tables]
    except ConnectorError:
        return ""
    return f" It has these tables: {', '.join(names[:20])}." if names else ""


def _missing(listed: str, deps: AgentDeps) -> Final:
    """The tries are spent and the last one still named tables or columns the warehouse lacks:
    the question may need data it does not hold, or say it in other words; so ask, naming what
    the warehouse has."""
    has = _tables_it_has(deps)
    message = (
        f"I could not find the data this question needs: after {deps.limits.max_attempts} "
        "tries, the query still asks for tables or columns this warehouse does not have:\n"
        f"{listed}\n{has.strip()} "
        "Which of its data do you mean? If it does not record this, the question cannot be "
        "answered from it."
    )
    return {"kind": "clarify", "message": message}


def _reads_no_table(deps: AgentDeps) -> Final:
    """The model answered with a query that reads none of the warehouse's tables (`SELECT 'last
    quarter'`, `SELECT NULL AS visitors`): that is no answer from the data, so ask, naming what
    the warehouse has, rather than propose it."""
    has = _tables_it_has(deps)
    message = (
        "I could not tie this question to the warehouse's data: the query I wrote reads none of "
        f"its tables.{has} Which of its data do you mean (the measure, the period, the "
        "tables)? If it does not record this, the question cannot be answered from it."
    )
    return {"kind": "clarify", "message": message}


def validate(state: ThreadState, config: RunnableConfig, deps: AgentDeps) -> Update:
    draft = state["draft"]
    assert draft is not None
    try:
        snapshot = deps.catalog.snapshot()
    except ConnectorError as exc:
        return failed(unreadable_tables(exc))
    return judge(state, draft, screen(draft["sql"], snapshot, deps), config, deps)


def judge(
    state: ThreadState,
    draft: Draft,
    screened: Screened,
    config: RunnableConfig,
    deps: AgentDeps,
) -> Update:
    """The update for `draft` once `screened`: a proposal (its warnings include the draft's own
    notes), or feedback for repair (failed when the question's attempts are spent)."""
    verdict, estimate = screened.verdict, screened.estimate
    if screened.ok and not verdict.tables and draft.get("by_model"):
        text = "The model's query reads no table, so it was not proposed."
        return {"final": _reads_no_table(deps), "trace": [{"kind": "clarify", "text": text}]}
    if screened.ok:
        proposal = Proposal(
            proposal_id=uuid.uuid4().hex,
            question=state["question"],
            sql=verdict.sql,
            explanation=draft["explanation"],
            tables=list(verdict.tables),
            columns=list(verdict.columns),
            sql_sha256=sql_sha256(verdict.sql),
            warnings=[
                *draft.get("notes", []),
                *verdict.warnings,
                *(estimate.warnings if estimate else ()),
            ],
            estimated_bytes=estimate.bytes_processed if estimate else None,
            estimated_cost_usd=estimate.cost_usd if estimate else None,
        )
        deps.audit.record(
            thread_of(config),
            "proposed",
            proposal_id=proposal.proposal_id,
            actor=state.get("user", ""),
            sql=verdict.sql,
            detail={"question": state["question"][:2000], "tables": proposal.tables},
        )
        steps: list[Step] = []
        fixes = [*verdict.fixes]
        if verdict.row_cap_applied:
            fixes.append(f"row cap added (LIMIT {deps.limits.row_limit})")
        if fixes:
            steps.append({"kind": "gate_fix", "text": f"The gate changed it: {'; '.join(fixes)}."})
        proposed = f"Proposed for approval (reads {', '.join(proposal.tables)})."
        steps.append({"kind": "proposed", "text": proposed, "proposal_id": proposal.proposal_id})
        # the self-check strategy judges the model's SQL, not a person's
        check = deps.strategies.self_check and bool(draft.get("by_model"))
        return {
            "proposal": proposal.to_state(),
            "feedback": [],
            "trace": steps,
            "needs_check": check,
        }
    problems = list(screened.problems)
    deps.audit.record(
        thread_of(config),
        "gate_rejected",
        actor=state.get("user", ""),
        sql=draft["sql"],
        detail={"reasons": problems, "codes": list(screened.codes)},
    )
    # the model's mistakes only: a person's pasted or edited SQL, or the loosened query, says
    # nothing about what the model should avoid
    if deps.strategies.remember_failures and draft.get("by_model"):
        deps.failures.record(
            deps.connector.name, thread_of(config), "rejected", problems, draft["sql"]
        )
    refused: Step = {
        "kind": "checks_failed",
        "text": f"The checks refused it: {'; '.join(problems)}",
    }
    if state.get("attempts", 0) >= deps.limits.max_attempts:
        listed = "\n".join(f"• {p}" for p in problems)
        if screened.codes and set(screened.codes) <= MISSING_NAMES:
            return {"feedback": problems, "final": _missing(listed, deps), "trace": [refused]}
        message = (
            f"I could not write a query that passes the safety and schema checks after "
            f"{deps.limits.max_attempts} tries. The last problems:\n{listed}\n"
            "Try rephrasing: name the measure and the period, or the tables you mean."
        )
        return {"feedback": problems, **failed(message, step=refused)}
    return {"feedback": problems, "trace": [refused]}
