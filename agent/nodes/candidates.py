"""Candidates (strategy `candidates:N`): N drafts asked at once (all N calls in flight
together), each screened like any draft (agent.screen.judge.screen: the gate, the
connector's cost estimate, a dry run where the engine has one, and the value check); drafts
that are the same query once normalised by sqlglot count as agreeing, and are screened once.

The best draft passes the checks with the most agreement (then the earliest); it is judged here
(a proposal, or feedback for `generate`'s repair), so it is not screened twice. A clarifying
question wins only when most drafts ask one, or when no SQL draft passes the checks. The person
approving is told when the drafts disagreed ("2 of 3 drafts agreed"): a note on that draft only.

Only the first attempt of a question is drafted N times; repairs go to `generate` (one call).
Nothing here runs a query: a dry run is the most the warehouse is asked.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from typing import Any

import sqlglot
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import get_executor_for_config
from sqlglot.errors import SqlglotError

from agent.catalog.snapshot import CatalogSnapshot
from agent.context import AgentDeps
from agent.model import prompts
from agent.model.errors import is_retryable, user_message
from agent.model.reply import SqlReply
from agent.nodes.generate import build_messages, model_context
from agent.screen.judge import Screened, judge, screen
from agent.state import Draft, Step, ThreadState, Update, failed, unreadable_tables
from connectors.base import ConnectorError
from connectors.units import counted

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Candidate:
    index: int
    reply: SqlReply
    #: The checks' outcome; None for a clarifying reply.
    screened: Screened | None
    #: The statement normalised for comparison ("" for a clarifying reply).
    key: str

    @property
    def passed(self) -> bool:
        return self.screened is not None and self.screened.ok


def normalised(sql: str, dialect: str) -> str:
    """`sql` in one canonical spelling (sqlglot: case, quoting, spacing, comments), so drafts
    written differently but meaning the same statement compare equal."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except SqlglotError:
        return " ".join(sql.lower().split())
    return tree.sql(dialect=dialect, normalize=True, comments=False)


def rank(drafts: list[Candidate]) -> tuple[Candidate, int]:
    """The draft to go on with and how many drafts agree with it.

    A clarifying question when most drafts ask one, or when some draft asks one and no SQL
    draft passes the checks; otherwise the SQL draft that passes the checks, then the one with
    the most agreement, then the earliest."""
    votes = Counter(d.key for d in drafts)
    sql = [d for d in drafts if d.key]
    asking = votes[""]
    if not sql or asking * 2 > len(drafts) or (asking and not any(d.passed for d in sql)):
        return next(d for d in drafts if not d.key), asking
    best = min(sql, key=lambda d: (not d.passed, -votes[d.key], d.index))
    return best, votes[best.key]


def _ask_all(
    deps: AgentDeps, prompts_: list[list[BaseMessage]], config: RunnableConfig
) -> list[dict[str, Any] | Exception]:
    """Each prompt's structured reply, or the exception its call ended with, all calls in
    flight at once. Each call keeps its own retries: `Runnable.batch` over the retrying model
    loses every draft when one call fails for good (langchain-core 1.7's `RunnableRetry`
    re-raises the first failure, and `return_exceptions` then returns it for every input)."""

    def ask(messages: list[BaseMessage]) -> dict[str, Any] | Exception:
        try:
            return deps.structured_model.invoke(messages, config)
        except Exception as exc:  # one draft lost; the others may still answer
            return exc

    with get_executor_for_config({**config, "max_concurrency": len(prompts_)}) as pool:
        return list(pool.map(ask, prompts_))


def _screen_all(
    outs: list[dict[str, Any] | Exception],
    snapshot: CatalogSnapshot,
    deps: AgentDeps,
    identity: str,
) -> tuple[list[Candidate], list[Exception]]:
    """The drafts the model's replies hold, each screened (a clarifying question is a draft with
    no SQL) for a question asked as `identity`, and the model calls that failed; a reply that
    could not be read is neither."""
    drafts: list[Candidate] = []
    errors: list[Exception] = []
    screened: dict[str, Screened] = {}  # by normalised SQL: the same statement is checked once
    for index, out in enumerate(outs):
        if isinstance(out, Exception):
            log.warning("a candidate draft failed: %r", out)
            errors.append(out)
            continue
        reply: SqlReply | None = out.get("parsed")
        if reply is None:
            continue
        if reply.kind == "clarify" or not reply.sql.strip():
            drafts.append(Candidate(index, reply, None, ""))
            continue
        written = normalised(reply.sql, snapshot.dialect)
        if written not in screened:
            screened[written] = screen(reply.sql, snapshot, deps, identity=identity)
        checks = screened[written]
        key = normalised(checks.verdict.sql, snapshot.dialect) if checks.verdict.ok else written
        drafts.append(Candidate(index, reply, checks, key))
    return drafts, errors


def candidates(state: ThreadState, config: RunnableConfig, deps: AgentDeps) -> Update:
    attempts = state.get("attempts", 0) + 1
    total = deps.strategies.candidates
    try:
        snapshot = deps.visible(state.get("identity", ""))
    except ConnectorError as exc:
        return {"attempts": attempts, **failed(unreadable_tables(exc))}
    base = build_messages(state, deps, model_context(state, deps, snapshot), config)
    prompts_ = [base] + [
        [*base, HumanMessage(prompts.CANDIDATE.format(number=i, total=total))]
        for i in range(2, total + 1)
    ]
    outs = _ask_all(deps, prompts_, config)
    drafts, errors = _screen_all(outs, snapshot, deps, state.get("identity", ""))
    lost = []
    if errors:
        lost.append(f"{counted(len(errors), 'model call')} failed")
    if unread := len(outs) - len(errors) - len(drafts):
        lost.append(f"{counted(unread, 'reply', 'replies')} could not be read")
    lost_text = f" ({'; '.join(lost)})" if lost else ""
    if not drafts:
        if len(errors) == len(outs):
            first = errors[0]
            calls = deps.limits.model_attempts if is_retryable(first) else 1
            return {"attempts": attempts, **failed(user_message(first, attempts=calls))}
        text = f"None of the {total} drafts could be used{lost_text}, so the model was asked again."
        return {
            "attempts": attempts,
            "draft": None,
            "feedback": ["None of your drafts was valid JSON for the required schema."],
            "trace": [{"kind": "unreadable", "text": text}],
        }
    best, agreeing = rank(drafts)
    read = len(drafts)
    if not best.key:
        asked = "asked a clarifying question instead of writing SQL"
        text = f"{agreeing} of {counted(read, 'draft')} {asked}"
        step: Step = {"kind": "candidates", "text": text + lost_text + ".", "brief": text.lower()}
        message = best.reply.explanation.strip() or "Could you rephrase?"
        return {
            "attempts": attempts,
            "final": {"kind": "clarify", "message": message},
            "trace": [step],
        }
    failing = sum(1 for d in drafts if d.key and not d.passed)
    asking = sum(1 for d in drafts if not d.key)
    others = [f"{failing} failed the checks"] if failing else []
    others += [f"{asking} asked a clarifying question instead"] if asking else []
    vote = f"{agreeing} of {counted(read, 'draft')} agreed on the one kept"
    written = f"{counted(total, 'draft')} were written at once{lost_text}"
    text = f"{written}; " + "; ".join([vote, *others])
    step = {"kind": "candidates", "text": text + ".", "brief": vote}
    notes = []
    if agreeing < read and best.passed:
        notes.append(
            "; ".join([f"{agreeing} of {counted(read, 'draft')} agreed on this query", *others])
            + "."
        )
    draft: Draft = {
        "kind": "sql",
        "explanation": best.reply.explanation.strip(),
        "sql": best.reply.sql,
        "by_model": True,
        "notes": notes,
    }
    assert best.screened is not None
    update = judge({**state, "attempts": attempts}, draft, best.screened, config, deps)
    return {**update, "attempts": attempts, "draft": draft, "trace": [step, *update["trace"]]}
