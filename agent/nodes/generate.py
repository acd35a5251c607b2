"""Ask the model for SQL (or a clarifying question); also the repair step when feedback exists."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig

from agent.catalog.date_range import DateRange
from agent.catalog.snapshot import CatalogSnapshot
from agent.context import AgentDeps, AgentLimits, thread_of
from agent.memory.failures import one_line, read_tables
from agent.model import prompts
from agent.model.errors import is_retryable, user_message
from agent.model.providers import ScriptExhausted
from agent.model.question_context import ModelContext
from agent.model.reply import SqlRepair, SqlReply
from agent.state import (
    Draft,
    Step,
    ThreadState,
    Turn,
    Update,
    failed,
    own_turns,
    unreadable_tables,
)
from agent.strategies.planning import plan_text
from connectors.base import Connector, ConnectorError
from connectors.units import counted

log = logging.getLogger(__name__)


def history_text(turns: list[Turn]) -> str:
    lines = []
    for turn in turns:
        lines.append(f"Q: {turn['question']}")
        if turn["sql"]:
            lines.append(f"SQL: {turn['sql']}")
        if turn["outcome"] == "answer":
            lines.append(
                f"Result columns: {', '.join(turn['columns'])} ({turn['total_rows']} rows)"
            )
        elif turn["outcome"] == "superseded":
            lines.append("Outcome: proposed, not run (the next question came first)")
        else:
            lines.append(f"Outcome: {turn['outcome']}")
    return "\n".join(lines)


def model_context(state: ThreadState, deps: AgentDeps, snapshot: CatalogSnapshot) -> ModelContext:
    """What the model is shown: a follow-up ("and by month?") searches with the question it
    follows, and paraphrases (the variations strategy) widen the table search."""
    previous = [t["question"] for t in own_turns(state)[-1:]]
    question = " ".join([*previous, state["question"]])
    return deps.context.build(
        question,
        snapshot,
        also=state.get("variations") or (),
        restricted=bool(state.get("identity")),
        identity=state.get("identity", ""),
    )


def system_prompt(
    connector: Connector,
    limits: AgentLimits,
    context: str,
    *,
    today: dt.date,
    dates: bool = True,
    coverage: Sequence[DateRange] = (),
) -> str:
    """The rules for `connector`'s engine and dialect on `today`, then `context`; the dialect's
    date idioms when `dates` (the tables shown have date columns: a model shown them beside a
    year kept as a number applied year() to it); the dates the data covers, when known."""
    dialect = connector.dialect
    idioms = prompts.DATE_IDIOMS.get(dialect) if dates else None
    return prompts.SYSTEM.format(
        engine=connector.name,
        dialect=prompts.DIALECT_NAMES.get(dialect, dialect),
        today=today.isoformat(),
        coverage=(
            prompts.COVERAGE.format(ranges="; ".join(r.text() for r in coverage))
            if coverage
            else ""
        ),
        dates=prompts.DATES.format(idioms=idioms) if idioms else "",
        row_limit=limits.row_limit,
        context=context,
    )


def build_messages(
    state: ThreadState, deps: AgentDeps, context: ModelContext, config: RunnableConfig
) -> list[BaseMessage]:
    """The SQL step's messages: rules and context, history, the question, then the plan and
    mistakes to avoid when those strategies are on, and the problems of a draft under repair."""
    system = system_prompt(
        deps.connector,
        deps.limits,
        context.text,
        today=deps.today(),
        dates=context.temporal,
        coverage=deps.date_ranges(context.tables, state.get("identity", "")),
    )
    messages: list[BaseMessage] = [SystemMessage(system)]
    turns = own_turns(state)[-deps.limits.history_turns :]
    if turns:
        messages.append(HumanMessage(prompts.HISTORY.format(turns=history_text(turns))))
    messages.append(HumanMessage(state["question"]))
    if plan := state.get("plan"):
        messages.append(HumanMessage(plan_text(plan)))
    # other threads' mistakes may quote what another identity read: none under an identity
    if deps.remembers_failures(state.get("identity", "")):
        # other threads' mistakes only for a draft under repair, over the tables it read
        draft = state.get("draft") if state.get("feedback") else None
        dialect = deps.connector.dialect
        tables = read_tables(draft["sql"], dialect) if draft else frozenset()
        # the draft under repair has its own problems listed below: not twice
        current = {one_line(p) for p in state.get("feedback") or []}
        avoid = [
            h
            for h in deps.failures.hints(
                deps.connector.name, thread_of(config), tables=tables, dialect=dialect
            )
            if h not in current
        ]
        if avoid:
            problems = "\n".join(f"- {p}" for p in avoid)
            messages.append(HumanMessage(prompts.AVOID.format(problems=problems)))
    feedback = state.get("feedback") or []
    if feedback:
        draft = state.get("draft")
        previous = draft["sql"] if draft else "(none: your reply could not be read)"
        problems = "\n".join(f"- {p}" for p in feedback)
        messages.append(HumanMessage(prompts.REPAIR.format(sql=previous, problems=problems)))
    return messages


def redraft_messages(
    state: ThreadState, deps: AgentDeps, context: ModelContext, config: RunnableConfig
) -> list[BaseMessage]:
    """The first draft's messages (so a server's prompt cache serves their opening), then the
    names the refused draft used that the warehouse lacks, without the draft itself: a small
    model shown its own draft keeps those names (BENCHMARKS.md, "Answer quality with a real
    model")."""
    messages = build_messages({**state, "feedback": []}, deps, context, config)
    problems = "\n".join(f"- {p}" for p in state.get("feedback") or [])
    return [*messages, HumanMessage(prompts.REDRAFT.format(problems=problems))]


def redrafts(state: ThreadState, deps: AgentDeps) -> bool:
    """Whether this step writes the draft under repair afresh (the redraft strategy): the checks
    refused it for naming tables or columns the warehouse lacks, once a question."""
    return (
        deps.strategies.redraft
        and bool(state.get("feedback"))
        and state.get("draft") is not None
        and state.get("missing_names", False)
        and not state.get("redrafted", False)
    )


def generate(state: ThreadState, config: RunnableConfig, deps: AgentDeps) -> Update:
    attempts = state.get("attempts", 0) + 1
    try:
        snapshot = deps.visible(state.get("identity", ""))
    except ConnectorError as exc:
        return {"attempts": attempts, **failed(unreadable_tables(exc))}
    context = model_context(state, deps, snapshot)
    # a draft under repair gets SQL back, never a question (agent.model.reply.SqlRepair), also when
    # it is written afresh
    redraft = redrafts(state, deps)
    repair = bool(state.get("feedback")) and state.get("draft") is not None
    if redraft:
        model, messages = deps.redraft_model, redraft_messages(state, deps, context, config)
    else:
        model = deps.repair_model if repair else deps.structured_model
        messages = build_messages(state, deps, context, config)
    written: Update = {"attempts": attempts, "missing_names": False}
    if redraft:
        written["redrafted"] = True
    try:
        out = model.invoke(messages, config)
    except Exception as exc:  # any provider failure: the user must hear of it in the thread
        # the model's runnable already retried what was worth retrying (`is_retryable`)
        calls = deps.limits.model_attempts if is_retryable(exc) else 1
        # a script that ran out is a set-up problem the user's message explains in full: no warning
        level = logging.INFO if isinstance(exc, ScriptExhausted) else logging.WARNING
        log.log(level, "The model failed after %s: %r", counted(calls, "call"), exc)
        problems = state.get("feedback") or [] if repair else []
        return {**written, **failed(user_message(exc, attempts=calls, problems=problems))}
    reply: SqlReply | SqlRepair | None = out.get("parsed")
    if redraft and reply is not None and not reply.sql.strip():
        # offered the choice, the model says the warehouse does not record what was asked
        said = "The model said the data cannot answer the question instead of writing SQL."
        return {
            **written,
            "final": {"kind": "clarify", "message": reply.explanation.strip()},
            "trace": [{"kind": "clarify", "text": said}],
        }
    if reply is None or (repair and not reply.sql.strip()):
        if reply is not None:
            problem = "Your reply held no SQL: write the corrected query."
        elif redraft:
            problem = "Your reply was empty: write the query in a ```sql code block."
        else:
            problem = (
                f"Your reply was not valid JSON for the required schema: {out.get('parsing_error')}"
            )
        if attempts >= deps.limits.max_attempts:
            message = (
                "The language model kept answering in a form I cannot read, so I have no SQL to "
                "propose. Try again, or rephrase the question more simply."
            )
            return {**written, **failed(message)}
        unreadable = "The model's reply could not be read, so it was asked again."
        return {
            **written,
            "draft": None,
            "feedback": [problem[:1000]],
            "trace": [{"kind": "unreadable", "text": unreadable}],
        }
    if isinstance(reply, SqlReply) and (reply.kind == "clarify" or not reply.sql.strip()):
        asked = "The model asked a clarifying question instead of writing SQL."
        return {
            **written,
            "final": {
                "kind": "clarify",
                "message": reply.explanation.strip() or "Could you rephrase?",
            },
            "trace": [{"kind": "clarify", "text": asked}],
        }
    draft: Draft = {
        "kind": "sql",
        "explanation": reply.explanation.strip(),
        "sql": reply.sql,
        "by_model": True,
    }
    step: Step
    if redraft:
        text = (
            f"The model wrote the SQL afresh (attempt {attempts}): its draft named tables or "
            "columns the warehouse lacks."
        )
        step = {"kind": "redraft", "text": text}
    elif repair:
        step = {"kind": "repair", "text": f"The model corrected the SQL (attempt {attempts})."}
    else:
        step = {"kind": "model", "text": f"The model wrote the SQL (attempt {attempts})."}
    return {**written, "draft": draft, "feedback": [], "trace": [step]}
