"""The thread's state: plain, JSON-serialisable values only, so checkpoints survive restarts and
upgrades without pickled objects.

One LangGraph thread is one conversation (a Slack thread, a terminal session). Fields named
"current" below are reset by the `start` node at every new question; `turns` accumulates.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, NotRequired, TypedDict

from agent.accounting import QuestionUsage, empty_usage


class Step(TypedDict):
    """One thing that happened while answering a question, told in a sentence (agent/explain.py
    reads these back without a model call; a renderer may swap `by` in `text` for a mention).
    `kind` is stable: question, pasted, model, repair,
    unreadable, clarify, checks_failed, gate_fix, proposed, approved, rejected, edited, executed,
    execution_failed, cancelled, empty, relaxed, not_relaxed, failed; and from the strategies:
    variations, plan, candidates, self_check."""

    kind: str
    text: str
    proposal_id: NotRequired[str]
    #: The person the step names (as given to the agent: a Slack user id, a login), if any.
    by: NotRequired[str]
    #: A few words for the account's one-line summary, on steps worth naming there (the
    #: strategies' plan, vote and self-check verdict).
    brief: NotRequired[str]


def add_steps(old: list[Step] | None, new: list[Step] | None) -> list[Step]:
    """The trace's reducer: nodes append their steps; a list that begins with a `question` step
    (the start node's) begins the trace afresh for the new question."""
    if new and new[0]["kind"] == "question":
        return list(new)
    return [*(old or []), *(new or [])]


class Turn(TypedDict):
    """One finished question, as later follow-ups see it."""

    question: str
    outcome: Literal["answer", "rejected", "failed", "clarify", "cancelled"]
    sql: str
    explanation: str
    columns: list[str]
    total_rows: int
    #: How the question was answered (the trace when it finished).
    steps: NotRequired[list[Step]]


class Draft(TypedDict):
    """What the model (or a pasted statement) proposed, before the gate."""

    kind: Literal["sql", "clarify"]
    explanation: str
    sql: str
    #: Written by the model (the self-check strategy judges only the model's SQL, and only
    #: the model's gate failures are remembered as mistakes to avoid).
    by_model: NotRequired[bool]
    #: Notes on this draft for the person approving (e.g. "2 of 3 drafts agreed"), shown among
    #: its proposal's warnings; a draft that replaces it (a repair, an edit) has its own.
    notes: NotRequired[list[str]]


class ProposalState(TypedDict):
    """Gated SQL awaiting approval (mirrors agent.outcome.Proposal)."""

    proposal_id: str
    question: str
    sql: str
    explanation: str
    tables: list[str]
    #: `table.column` pairs the gate found read (stored with a verified example); absent in
    #: proposals checkpointed before it was recorded.
    columns: NotRequired[list[str]]
    sql_sha256: str
    warnings: list[str]
    estimated_bytes: int | None
    estimated_cost_usd: float | None


class Decision(TypedDict):
    """A person's decision on one proposal, as passed to `Command(resume=...)`.

    `labels` are the caller's key/values for the warehouse's job record (the bot names the Slack
    team and channel there; the agent passes them through without reading them)."""

    proposal_id: str
    approved: bool
    by: str
    labels: NotRequired[dict[str, str]]
    #: The hash of the SQL the person was shown: only SQL with this hash may run.
    sql_sha256: NotRequired[str]


class Final(TypedDict):
    """How the current question ended; `answer` holds the Answer fields when kind == "answer"."""

    kind: Literal["answer", "rejected", "failed", "clarify", "cancelled"]
    message: str
    answer: NotRequired[dict[str, Any]]


class ThreadState(TypedDict):
    # input
    question: str
    user: NotRequired[str]
    # history
    turns: Annotated[list[Turn], operator.add]
    # current question
    draft: NotRequired[Draft | None]
    feedback: NotRequired[list[str]]
    attempts: NotRequired[int]
    exec_failures: NotRequired[int]
    proposal: NotRequired[ProposalState | None]
    decision: NotRequired[Decision | None]
    final: NotRequired[Final | None]
    #: What happened so far for the current question (see `Step`).
    trace: Annotated[list[Step], add_steps]
    #: The current question's empty result was looked at for loosening (once a question).
    relaxed: NotRequired[bool]
    #: The empty answer and the loosened proposal that followed it (agent/nodes/relax.py).
    relax: NotRequired[dict[str, Any] | None]
    #: Model calls and tokens of the current question, per node (agent.accounting).
    usage: NotRequired[QuestionUsage]
    # answer-quality strategies (agent/context.py Strategies)
    #: Paraphrases of the question that widen table retrieval; None: not asked yet.
    variations: NotRequired[list[str] | None]
    #: The plan (fields, filters with grounded values, grouping, ordering); None: none made.
    plan: NotRequired[dict[str, Any] | None]
    #: The accepted SQL waits for the self-check before approval.
    needs_check: NotRequired[bool]
    #: The question was SQL a person pasted (agent/pasted.py): the gate judges it as written,
    #: and neither it nor a warehouse error it meets goes to the model for repair.
    pasted: NotRequired[bool]


def reset_for_question() -> dict[str, Any]:
    """The per-question fields as they are before the first step."""
    return {
        "draft": None,
        "feedback": [],
        "attempts": 0,
        "exec_failures": 0,
        "proposal": None,
        "decision": None,
        "final": None,
        "relaxed": False,
        "relax": None,
        "usage": empty_usage(),
        "variations": None,
        "plan": None,
        "needs_check": False,
        "pasted": False,
    }
