"""Candidates (strategy `candidates:N`): N drafts asked at once (`Runnable.batch`), each put
through the gate, the connector's cost estimate (a dry run where the engine has one) and the
value check; drafts that are the same query once normalised by sqlglot count as agreeing. The
best is the one that passes the checks with the most agreement (then the earliest); the person
approving is told when the drafts disagreed ("2 of 3 drafts agreed").

Only the first attempt of a question is drafted N times; repairs go to `generate` (one call).
Nothing here runs a query: a dry run is the most the warehouse is asked.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import sqlglot
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from sqlglot.errors import SqlglotError

from agent import prompts
from agent.catalog import CatalogSnapshot
from agent.context import AgentDeps
from agent.gate import check_sql
from agent.grounding import check_values
from agent.model_errors import is_retryable, user_message
from agent.nodes.generate import build_messages, model_context
from agent.reply import SqlReply
from agent.state import ThreadState
from connectors.base import ConnectorError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Draft:
    index: int
    reply: SqlReply
    #: The gate's, the estimate's and the value check's problems (none: it passed).
    problems: tuple[str, ...]
    #: The statement normalised for comparison ("" for a clarifying reply).
    key: str


def normalised(sql: str, dialect: str) -> str:
    """`sql` in one canonical spelling (sqlglot: case, quoting, spacing, comments), so drafts
    written differently but meaning the same statement compare equal."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except SqlglotError:
        return " ".join(sql.lower().split())
    return tree.sql(dialect=dialect, normalize=True, comments=False)


def _problems(sql: str, snapshot: CatalogSnapshot, deps: AgentDeps) -> tuple[tuple[str, ...], str]:
    verdict = check_sql(sql, snapshot.gate_schema, row_limit=deps.limits.row_limit)
    if not verdict.ok:
        return tuple(str(r) for r in verdict.reasons), normalised(sql, snapshot.dialect)
    key = normalised(verdict.sql, snapshot.dialect)
    try:
        estimate = deps.connector.estimate(verdict.sql)
    except ConnectorError as exc:
        return (exc.engine_message[:1000],), key
    if estimate and estimate.refusal:
        return (estimate.refusal,), key
    live = deps.connector if deps.limits.profile_values else None
    return tuple(str(m) for m in check_values(verdict.sql, snapshot, live)), key


def rank(drafts: list[Draft]) -> tuple[Draft, int]:
    """The best draft and how many drafts agree with it: passing the checks first, then
    agreement, then the earliest."""
    votes: dict[str, int] = {}
    for d in drafts:
        votes[d.key] = votes.get(d.key, 0) + 1
    best = min(drafts, key=lambda d: (bool(d.problems), -votes[d.key], d.index))
    return best, votes[best.key]


def candidates(state: ThreadState, config: RunnableConfig, deps: AgentDeps) -> dict[str, Any]:
    attempts = state.get("attempts", 0) + 1
    total = deps.strategies.candidates
    try:
        snapshot = deps.catalog.snapshot()
    except ConnectorError as exc:
        message = f"I could not read the warehouse's tables: {exc.message} {exc.hint}"
        return {"attempts": attempts, "final": {"kind": "failed", "message": message}}
    base = build_messages(state, deps, model_context(state, deps, snapshot), config)
    prompts_ = [base] + [
        [*base, HumanMessage(prompts.CANDIDATE.format(number=i, total=total))]
        for i in range(2, total + 1)
    ]
    outs = deps.structured_model.batch(prompts_, config, return_exceptions=True)
    drafts, errors = [], []
    for index, out in enumerate(outs):
        if isinstance(out, Exception):
            errors.append(out)
            continue
        reply: SqlReply | None = out.get("parsed")
        if reply is None:
            continue
        if reply.kind == "clarify" or not reply.sql.strip():
            drafts.append(Draft(index, reply, (), ""))
        else:
            drafts.append(Draft(index, reply, *_problems(reply.sql, snapshot, deps)))
    if not drafts:
        if errors and len(errors) == len(outs):
            exc = errors[0]
            calls = deps.limits.model_attempts if is_retryable(exc) else 1
            message = user_message(exc, attempts=calls)
            return {"attempts": attempts, "final": {"kind": "failed", "message": message}}
        problem = "None of your drafts was valid JSON for the required schema."
        return {"attempts": attempts, "draft": None, "feedback": [problem]}
    best, agreeing = rank(drafts)
    step = f"{len(drafts)} drafts were written at once; {agreeing} agreed on the one kept."
    if not best.key:
        message = best.reply.explanation.strip() or "Could you rephrase?"
        return {
            "attempts": attempts,
            "final": {"kind": "clarify", "message": message},
            "trace": [{"kind": "candidates", "text": step}],
        }
    notes = []
    if agreeing < len(drafts) and not best.problems:
        failed = sum(bool(d.problems) for d in drafts)
        note = f"{agreeing} of {len(drafts)} drafts agreed on this query"
        notes.append(note + (f"; {failed} failed the checks." if failed else "."))
    draft = {
        "kind": "sql",
        "explanation": best.reply.explanation.strip(),
        "sql": best.reply.sql,
        "by_model": True,
    }
    return {
        "attempts": attempts,
        "draft": draft,
        "feedback": [],
        "notes": notes,
        "trace": [{"kind": "candidates", "text": step}],
    }
