"""Run the approved SQL, exactly as approved: only when its hash is the one the approval named
and the one the audit log recorded for the approval. An engine error goes back for repair (not
for SQL a person pasted: that error ends the question), a cancel (`Agent.cancel`) ends it."""

from __future__ import annotations

import datetime as dt
import decimal
import logging
import math
import sqlite3
from dataclasses import replace
from typing import Any

from langchain_core.runnables import RunnableConfig

from agent.context import AgentDeps, thread_of
from agent.memory.audit import sql_sha256
from agent.nodes.paste import NEXT_STEP
from agent.outcome import Answer, Proposal
from agent.state import Decision, Draft, Step, ThreadState, Update, failed
from agent.strategies.coverage import coverage_note
from agent.strategies.relax import is_empty
from connectors.base import ConnectorError, QueryCancelled, QueryResult, RunContext
from connectors.units import counted

log = logging.getLogger(__name__)

NO_IDENTITY = (
    "This warehouse runs every query as the identity of the person who asked, and this proposal "
    "names none, so it was not run. Ask the question again."
)


def plain(value: Any) -> Any:
    """A warehouse value as JSON: numbers stay numbers, the rest becomes readable text."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def answer_of(
    proposal: Proposal, decision: Decision, deps: AgentDeps, result: QueryResult
) -> Answer:
    return Answer(
        proposal_id=proposal.proposal_id,
        question=proposal.question,
        sql=proposal.sql,
        explanation=proposal.explanation,
        tables=proposal.tables,
        columns=result.columns,
        rows=[[plain(v) for v in row] for row in result.rows],
        total_rows=result.total_rows,
        capped=result.total_rows >= deps.limits.row_limit,
        elapsed_s=round(result.elapsed_s, 3),
        connector=deps.connector.name,
        approved_by=decision["by"],
        bytes_processed=result.bytes_processed,
        job_url=result.job_url,
        label=proposal.label,
        definitions=proposal.definitions,
    )


def _with_coverage(answer: Answer, deps: AgentDeps, identity: str) -> Answer:
    """An empty answer filtered on a period says which dates the data covers there."""
    if not is_empty(answer.columns, answer.rows, answer.total_rows):
        return answer
    note = coverage_note(answer.sql, answer.tables, deps, identity)
    if not note:
        return answer
    return replace(answer, coverage=note)


def learn(state: ThreadState, deps: AgentDeps) -> None:
    """Keep an approved query that returned rows as a verified example for later questions.

    The tables and columns are the gate's, recorded on the proposal when it passed: the gate is
    not run again (a proposal checkpointed before columns were recorded is kept without them).
    One asked as a warehouse identity records it, and is shown only to questions asked as that
    identity whose catalog view has all its tables. Learning must never cost the person their
    answer, so a failure is logged and dropped.
    """
    proposal, decision = state["proposal"], state["decision"]
    assert proposal is not None and decision is not None
    if str(proposal.get("label", "")).startswith("governed"):
        return  # the metric step answers it again; its long compiled SQL would crowd examples
    try:
        deps.examples.add(
            proposal["question"],
            proposal["sql"],
            tables=list(proposal["tables"]),
            columns=list(proposal.get("columns", [])),
            approved_by=decision["by"],
            run_as=str(proposal.get("run_as", "")),
        )
    except (sqlite3.Error, ConnectorError) as exc:
        log.warning("could not store the verified example: %s", exc)


def execute(state: ThreadState, config: RunnableConfig, deps: AgentDeps) -> Update:
    stored, decision = state["proposal"], state["decision"]
    assert stored is not None and decision is not None
    proposal = Proposal.from_dict(stored)
    to_run = sql_sha256(proposal.sql)
    approved = deps.audit.approved_sha256(proposal.proposal_id)
    if not decision["approved"] or decision.get("sql_sha256") != to_run or approved != to_run:
        return failed("This SQL does not match what was approved, so it was not run. Ask again.")
    if deps.run_as_required and not proposal.run_as:
        return failed(NO_IDENTITY)
    ran_as = {"ran_as": proposal.run_as} if proposal.run_as else {}

    def record(event: str, *, detail: dict[str, Any]) -> None:
        deps.audit.record(
            thread_of(config),
            event,
            proposal_id=proposal.proposal_id,
            actor=decision["by"],
            sql=proposal.sql,
            detail={**detail, **ran_as},
        )

    labels = {
        **decision.get("labels", {}),
        "requester": state.get("user", ""),
        "approver": decision["by"],
    }
    try:
        result = deps.connector.run(
            proposal.sql,
            max_rows=deps.limits.answer_rows,
            timeout_s=deps.limits.query_timeout_s,
            context=RunContext(
                job_key=proposal.proposal_id, labels=labels, identity=proposal.run_as
            ),
        )
    except QueryCancelled:
        by = deps.audit.cancelled_by(proposal.proposal_id) or "someone"
        record("execution_cancelled", detail={"cancelled_by": by})
        message = f"Cancelled by {by}; the query was stopped and returned nothing."
        step: Step = {"kind": "cancelled", "text": message, "by": by}
        return {"final": {"kind": "cancelled", "message": message}, "trace": [step]}
    except ConnectorError as exc:
        detail = {"error": exc.message, "type": type(exc).__name__}
        record("execution_failed", detail=detail)
        pasted = bool(state.get("pasted"))  # the person's SQL: not the model's to repair
        if deps.remembers_failures(proposal.run_as) and exc.retryable_by_repair and not pasted:
            problem = f"The warehouse refused: {exc.engine_message[:300]}"
            deps.failures.record(
                deps.connector.name, thread_of(config), "engine", [problem], proposal.sql
            )
        failures = state.get("exec_failures", 0) + 1
        error = f"The warehouse returned an error: {exc.message[:300]}"
        if exc.retryable_by_repair and failures < deps.limits.max_attempts and not pasted:
            draft: Draft = {"kind": "sql", "explanation": proposal.explanation, "sql": proposal.sql}
            return {
                "exec_failures": failures,
                "attempts": 0,
                "draft": draft,
                "proposal": None,
                "decision": None,
                "feedback": [f"The warehouse returned an error: {exc.engine_message[:1000]}"],
                "trace": [{"kind": "execution_failed", "text": f"{error}; sent to be corrected."}],
            }
        message = f"The query failed: {exc.message}" + (f" {exc.hint}" if exc.hint else "")
        if pasted and exc.retryable_by_repair:
            message += f"\n{NEXT_STEP}"
        ended = "the SQL was pasted, so it was not sent to the model" if pasted else "gave up"
        step = {"kind": "execution_failed", "text": f"{error}; {ended}."}
        return {"exec_failures": failures, **failed(message, step=step)}
    figures = {"rows": result.total_rows, "bytes": result.bytes_processed}
    record("executed", detail={**figures, "elapsed_s": result.elapsed_s})
    if result.total_rows > 0:
        learn(state, deps)
    ran_answer = answer_of(proposal, decision, deps, result)
    answer = _with_coverage(ran_answer, deps, proposal.run_as).to_state()
    rows = counted(result.total_rows, "row")
    ran = f"Ran in {result.elapsed_s:.2f} s on {deps.connector.name}: {rows}."
    step = {"kind": "executed", "text": ran, "proposal_id": proposal.proposal_id}
    return {"final": {"kind": "answer", "message": rows, "answer": answer}, "trace": [step]}
