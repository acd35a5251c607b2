"""Run a golden set through the bot's own graph and score every answer.

Each question (with its follow-ups, in one thread) goes through `Agent.ask`; every proposal is
approved automatically and runs on the connector the evaluation was given (open it read-only: the
DuckDB connector always is). The gold SQL runs on the same connector, and the two results are
compared (`agent.evaluation.compare`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import sqlglot
from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.memory import InMemorySaver

from agent.context import AgentDeps, AgentLimits, Strategies
from agent.conversation import Agent
from agent.evaluation.baseline import NaiveBaseline
from agent.evaluation.compare import Table, best_match, difference
from agent.evaluation.golden import GoldenQuestion, GoldenSet
from agent.evaluation.usage import measure
from agent.memory.examples import ExampleStore
from agent.memory.failures import FailureStore
from agent.nodes.execute import plain
from agent.outcome import Outcome
from agent.reference_day import pin_sql
from agent.semantic.artifacts import ProjectArtifacts
from connectors.base import Connector, ConnectorError

Status = Literal["pass", "fail", "gold_error"]
#: What a golden set can be run through: the bot's own graph, or the naive baseline.
Answerer = Agent | NaiveBaseline
EVAL_USER = "querybot-eval"
#: Proposals approved for one question at most (each execution error is repaired and re-proposed).
MAX_APPROVALS = 5


@dataclass(frozen=True)
class QuestionResult:
    """How the bot did on one golden question (JSON-plain, for the report)."""

    id: str
    category: str
    question: str
    expect: str
    status: Status
    #: What the bot ended with: answer, clarify, failed, proposal...
    outcome: str
    #: exact or subset when the answer matched a gold result.
    match: str | None
    reason: str
    sql: str
    #: The bot's message (its clarifying question, refusal or failure).
    message: str
    model_calls: int
    input_tokens: int
    output_tokens: int
    latency_s: float
    #: SQL drafts after the first for this question (validator, engine or self-check feedback).
    repairs: int
    database: str = ""
    #: Model calls and tokens per graph node (generate, plan, check, candidates, vary).
    nodes: dict[str, Any] = field(default_factory=dict)
    #: Which kind of answer it was where the warehouse has metric definitions: "governed:
    #: metric ..." or "ad hoc SQL" (the proposal's label); "" where it has none.
    kind: str = ""
    #: The kinds of the question's steps, in order (agent.state.Step: model, checks_failed,
    #: redraft, repair, ...); empty for the naive baseline, which keeps none.
    steps: list[str] = field(default_factory=list)
    #: The gate's deterministic changes to the statements it let through (the row cap
    #: excepted), so a report can count which fixes fired.
    gate_fixes: list[str] = field(default_factory=list)
    #: The last SQL drafted when the question ended with none proposed (the gate refused it, or
    #: the repairs ran out): the statement behind a failure, which `sql` then lacks.
    refused_sql: str = ""
    #: Every gold query of the question returned nothing (`holds_nothing`): an empty answer then
    #: matches, so a pass says little (a period past the data's end, or a set left unpinned).
    gold_empty: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class _NoLearning(ExampleStore):
    """The examples the evaluation starts with, never growing: the bot must not learn from
    answers that nobody checked, nor let one question's SQL leak into the next one's prompt."""

    def add(self, *args: Any, **kwargs: Any) -> None:
        return None


def evaluation_agent(
    connector: Connector,
    model: BaseChatModel,
    *,
    limits: AgentLimits | None = None,
    strategies: Strategies | None = None,
    check_model: BaseChatModel | None = None,
    project: ProjectArtifacts | None = None,
    today: dt.date | None = None,
) -> Agent:
    """An agent like the bot's, with threads in memory and no learning from approvals, asked on
    `today` when pinned (a golden set's `today:`).
    Failures are remembered, in memory, when `strategies` say so (that is the strategy), but
    only within a question's own thread: one question's mistake never reaches another, so the
    score does not depend on the order of the questions."""
    base = limits or AgentLimits()
    # Keep every row the gate lets through, so results compare whole.
    limits = AgentLimits(**{**asdict(base), "answer_rows": base.row_limit})
    deps = AgentDeps(
        connector=connector,
        model=model,
        limits=limits,
        examples=_NoLearning(),
        failures=FailureStore(across_threads=False),
        strategies=strategies or Strategies(),
        check_model=check_model,
        project=project,
        pinned_today=today,
    )
    # every question sees the same catalog (with its value profiles), not a half-read one; if
    # the warehouse cannot be read, each question says so
    with contextlib.suppress(ConnectorError):
        deps.catalog.refresh()
    return Agent(deps, InMemorySaver())


def run_golden(
    golden: GoldenSet,
    agent: Answerer,
    *,
    database: str = "",
    progress: Callable[[QuestionResult], None] | None = None,
) -> list[QuestionResult]:
    """Every question of `golden`, scored, in file order within each thread."""
    results = []
    for chain in golden.chains():
        thread_id = f"eval:{chain[0].id}:{uuid.uuid4().hex[:8]}"
        for question in chain:
            result = _one(golden, agent, question, thread_id, database)
            results.append(result)
            if progress:
                progress(result)
    return results


def _converse(agent: Answerer, thread_id: str, question: str) -> Outcome:
    outcome = agent.ask(thread_id, question, user=EVAL_USER)
    for _ in range(MAX_APPROVALS):
        if outcome.kind != "proposal" or outcome.proposal is None:
            break
        if outcome.answer is not None:
            # an empty result with a loosened query offered (relax_empty): the empty result is
            # the bot's answer; running the offer is a person's choice, not the question's
            break
        proposal_id = outcome.proposal.proposal_id
        outcome = agent.decide(thread_id, proposal_id, approved=True, user=EVAL_USER)
    return outcome


def _one(
    golden: GoldenSet, agent: Answerer, q: GoldenQuestion, thread_id: str, database: str
) -> QuestionResult:
    started = time.perf_counter()
    with measure() as usage:
        try:
            outcome = _converse(agent, thread_id, q.question)
        except Exception as exc:  # one broken question must not end the run
            outcome = Outcome(kind="failed", message=f"{type(exc).__name__}: {exc}")
    latency = time.perf_counter() - started
    status, match, reason, gold_empty = _score(golden, agent, q, outcome)
    sql = (
        outcome.answer.sql if outcome.answer else (outcome.proposal.sql if outcome.proposal else "")
    )
    kind = (
        outcome.answer.label
        if outcome.answer
        else (outcome.proposal.label if outcome.proposal else "")
    )
    return QuestionResult(
        id=q.id,
        category=q.category,
        question=q.question,
        expect=q.expect,
        status=status,
        outcome=outcome.kind,
        match=match,
        reason=reason,
        sql=sql,
        message=outcome.message,
        model_calls=usage.calls,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        latency_s=round(latency, 3),
        repairs=_repairs(outcome, usage.calls),
        database=database,
        nodes=dict(outcome.usage.get("nodes", {})) if outcome.usage else {},
        kind=kind,
        gold_empty=gold_empty,
        **_trace(agent, thread_id, sql),
    )


def _trace(agent: Answerer, thread_id: str, sql: str) -> dict[str, Any]:
    """The kinds of the steps the latest question of `thread_id` took, the gate's fixes among
    them, and the last draft when no SQL was proposed (none for the naive baseline)."""
    if not isinstance(agent, Agent):
        return {}
    explanation = agent.explain(thread_id)
    steps = explanation.steps if explanation else ()
    return {
        "steps": [step["kind"] for step in steps],
        "gate_fixes": [change for step in steps for change in step.get("changes", [])],
        "refused_sql": "" if sql else agent.draft_sql(thread_id),
    }


def _repairs(outcome: Outcome, calls: int) -> int:
    """SQL drafts after the first (validator, engine or self-check feedback): generate's
    calls, less the first draft unless candidates wrote it. Strategy calls (plan, check,
    variations) are not repairs."""
    if outcome.usage is None:
        return max(0, calls - 1)
    nodes = outcome.usage["nodes"]
    generate = nodes.get("generate")
    drafts = generate.get("calls", 0) if generate else 0
    return drafts if "candidates" in nodes else max(0, drafts - 1)


def _score(
    golden: GoldenSet, agent: Answerer, q: GoldenQuestion, outcome: Outcome
) -> tuple[Status, str | None, str, bool]:
    """Status, match, reason, and whether the gold answer is empty."""
    if q.expect != "answer":
        wanted = (
            "a clarifying question" if q.expect == "clarify" else "saying the data cannot answer"
        )
        if outcome.kind == "clarify":
            return "pass", None, "", False
        if outcome.kind == "answer":
            return "fail", None, f"ran SQL where the right reply was {wanted}", False
        return "fail", None, f"ended {outcome.kind} where the right reply was {wanted}", False
    try:  # first: a question whose gold SQL cannot run cannot be scored
        golds = gold_tables(golden, q, agent.deps.connector, agent.deps.limits)
    except ConnectorError as exc:
        return "gold_error", None, f"the gold SQL failed: {exc.message}", False
    empty = all(holds_nothing(g) for g in golds)
    if outcome.kind == "clarify":
        reason = f"asked or declined instead of answering: {outcome.message[:300]}"
        return "fail", None, reason, empty
    if outcome.answer is None:
        return "fail", None, f"no answer ({outcome.kind}): {outcome.message[:300]}", empty
    gen = Table(tuple(outcome.answer.columns), tuple(tuple(r) for r in outcome.answer.rows))
    match = best_match(golds, gen, ordered=q.ordered)
    if match:
        return "pass", match, EMPTY_GOLD if empty else "", empty
    return "fail", None, difference(golds, gen), empty


#: The reason a pass on an empty gold answer carries.
EMPTY_GOLD = "the gold answer is empty: an empty answer matches it, so this pass shows little"


def empty_gold(golden: GoldenSet, connector: Connector, limits: AgentLimits) -> list[str]:
    """The ids of the questions whose every gold query returns nothing on `connector` (gold SQL
    that fails is reported when the question is scored). Checked when a set is loaded for a
    run: an empty gold answer is matched by an empty guess, so such a question proves little."""
    ids = []
    for q in golden.questions:
        if q.expect != "answer":
            continue
        try:
            tables = gold_tables(golden, q, connector, limits)
        except ConnectorError:
            continue
        if all(holds_nothing(t) for t in tables):
            ids.append(q.id)
    return ids


def holds_nothing(table: Table) -> bool:
    """No rows, or nothing but NULLs and zeros: what an aggregate over no rows gives
    (`count(*)` 0, `sum(...)` NULL), which an empty answer would match as well."""
    return all(
        v is None or (isinstance(v, int | float | decimal.Decimal) and v == 0)
        for row in table.rows
        for v in row
    )


def gold_sql(golden: GoldenSet, q: GoldenQuestion, dialect: str) -> list[str]:
    """The question's gold SQL in the engine's dialect (transpiled when the set says another),
    reading the set's pinned day where it reads the clock (`current_date`)."""
    if not golden.dialect or golden.dialect == dialect:
        sqls = list(q.gold)
    else:
        sqls = [sqlglot.transpile(sql, read=golden.dialect, write=dialect)[0] for sql in q.gold]
    if golden.today is None:
        return sqls
    return [pin_sql(sql, golden.today, dialect) for sql in sqls]


def gold_tables(
    golden: GoldenSet, q: GoldenQuestion, connector: Connector, limits: AgentLimits
) -> Sequence[Table]:
    """Run every acceptable gold query; raises ConnectorError when one fails."""
    tables = []
    for sql in gold_sql(golden, q, connector.dialect):
        result = connector.run(sql, max_rows=limits.row_limit, timeout_s=limits.query_timeout_s)
        rows = tuple(tuple(plain(v) for v in row) for row in result.rows)
        tables.append(Table(tuple(result.columns), rows))
    return tables
