"""The thread's state: plain, JSON-serialisable values only, so checkpoints survive restarts and
upgrades without pickled objects.

One LangGraph thread is one conversation (a Slack thread, a terminal session). Fields named
"current" below are reset by the `start` node at every new question; `turns` accumulates.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, NotRequired, TypedDict

from agent.catalog.access import AccessUnknown
from agent.model.accounting import QuestionUsage, empty_usage
from agent.outcome import Plain
from connectors.base import ConnectorError


class Step(TypedDict):
    """One thing that happened while answering a question, told in a sentence (`explain`
    reads these back without a model call; a renderer may swap `by` in `text` for a mention).
    `kind` is stable: question, pasted, model, repair, redraft, unreadable, clarify, unmatched,
    checks_failed, gate_fix, proposed, approved, rejected, edited, executed, execution_failed,
    cancelled, empty, relaxed, not_relaxed, failed; and from the strategies: variations, plan,
    candidates, self_check."""

    kind: str
    text: str
    proposal_id: NotRequired[str]
    #: The person the step names (as given to the agent: a Slack user id, a login), if any.
    by: NotRequired[str]
    #: A few words for the account's one-line summary, on steps worth naming there (the
    #: strategies' plan, vote and self-check verdict).
    brief: NotRequired[str]
    #: On `gate_fix` steps: each deterministic change the gate made to the statement, the row
    #: cap excepted (evaluations count which fixes fired).
    changes: NotRequired[list[str]]


def add_steps(old: list[Step] | None, new: list[Step] | None) -> list[Step]:
    """The trace's reducer: nodes append their steps; a list that begins with a `question` step
    (the start node's) begins the trace afresh for the new question."""
    if new and new[0]["kind"] == "question":
        return list(new)
    return [*(old or []), *(new or [])]


class Turn(TypedDict):
    """One finished question, as later follow-ups see it."""

    question: str
    #: "superseded": proposed, then left unanswered for the thread's next question.
    outcome: Literal["answer", "rejected", "failed", "clarify", "cancelled", "superseded"]
    sql: str
    explanation: str
    columns: list[str]
    total_rows: int
    #: How the question was answered (the trace when it finished).
    steps: NotRequired[list[Step]]
    #: The metric query that answered it, when it was governed (`Governed`), for follow-ups.
    metric: NotRequired[dict[str, Any]]
    #: The warehouse identity it was asked as ("" for the bot's login).
    identity: NotRequired[str]


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
    #: The metric query MetricFlow compiled this SQL from (the metric step): `label`
    #: ("governed: metric revenue, by month"), `definitions` (one line per metric) and `query`
    #: (the MetricQuery as a dict). A draft that replaces it (a repair, an edit) has none: it is
    #: ad hoc SQL.
    metric: NotRequired[dict[str, Any]]


class Decision(TypedDict):
    """A person's decision on one proposal: the resume `Agent.decide` sends, and, once approve
    has checked it, the state's `decision`.

    `labels` are the caller's key/values for the warehouse's job record (the bot names the Slack
    team and channel there; the agent passes them through without reading them)."""

    #: Absent in decisions checkpointed, or resumes sent by other drivers of the graph, before
    #: resumes were typed: a resume without a kind is a decision.
    kind: NotRequired[Literal["decision"]]
    proposal_id: str
    approved: bool
    by: str
    labels: NotRequired[dict[str, str]]
    #: The hash of the SQL the person was shown: only SQL with this hash may run.
    sql_sha256: NotRequired[str]


class Edit(TypedDict):
    """A person's edit of the waiting proposal's SQL: the resume `Agent.edit` sends. The edit
    node checks it; `refused` says why the checks refused it (then nothing changed)."""

    kind: Literal["edit"]
    proposal_id: str
    sql: str
    by: str
    refused: NotRequired[str]


class Final(TypedDict):
    """How the current question ended; `answer` holds the `Answer` (agent.outcome, `to_state`)
    when kind == "answer"."""

    kind: Literal["answer", "rejected", "failed", "clarify", "cancelled"]
    message: str
    answer: NotRequired[Plain]


class Relaxed(TypedDict):
    """An empty answer and the loosened proposal that followed it (the relax step)."""

    #: The empty `Answer` (`to_state`), shown above the loosened proposal.
    answer: Plain
    proposal_id: str
    message: str


class ThreadState(TypedDict, total=False):
    """The thread's state, and (every key being optional) a node's partial update of it: the
    graph's input holds only `question` and `user`, and a node returns the keys it changes."""

    # input
    question: str
    user: str
    #: The warehouse identity the asker's questions run as (connectors.base.RunContext); "" for
    #: the connector's own login.
    identity: str
    # history
    turns: Annotated[list[Turn], operator.add]
    # current question
    draft: Draft | None
    feedback: list[str]
    attempts: int
    exec_failures: int
    #: The gated SQL awaiting approval: a `Proposal` (agent.outcome, `to_state`).
    proposal: Plain | None
    decision: Decision | None
    #: The latest resume's edit, while the edit node checks it or after it refused it.
    edit: Edit | None
    final: Final | None
    #: What happened so far for the current question (see `Step`).
    trace: Annotated[list[Step], add_steps]
    #: The current question's empty result was looked at for loosening (once a question).
    relaxed: bool
    relax: Relaxed | None
    #: Model calls and tokens of the current question, per node (agent.model.accounting).
    usage: QuestionUsage
    # answer-quality strategies (`Strategies`)
    #: Paraphrases of the question that widen table retrieval; None: not asked yet.
    variations: list[str] | None
    #: The plan (fields, filters with grounded values, grouping, ordering); None: none made.
    plan: dict[str, Any] | None
    #: The accepted SQL waits for the self-check before approval.
    needs_check: bool
    #: The question was SQL a person pasted: the gate judges it as written, and neither it nor a
    #: warehouse error it meets goes to the model for repair.
    pasted: bool
    #: The metric step's outcome for the current question: None before it ran; then
    #: `{"used": bool, "why": str}`.
    metric: dict[str, Any] | None
    #: The draft under repair names tables or columns the warehouse lacks (the redraft
    #: strategy writes it afresh), and whether the question's redraft has been asked.
    missing_names: bool
    redrafted: bool
    #: Some word of the question occurs in the warehouse (the match step); None: not
    #: looked at yet.
    matched: bool | None


#: What a node returns: the state's keys it changes.
Update = ThreadState


def failed(message: str, *, step: Step | None = None) -> Update:
    """The one way a node ends a question that failed: `message` (what happened and what to do
    next) ends it, and the trace records it (`step` when the node has its own, else a `failed`
    step of the same text), so the account and the restart recovery read the same history."""
    return {
        "final": {"kind": "failed", "message": message},
        "trace": [step or {"kind": "failed", "text": message}],
    }


def own_turns(state: ThreadState) -> list[Turn]:
    """The thread's earlier turns a question may show its model: under an identity, only those
    asked as the same identity (another's SQL, columns and row counts are theirs)."""
    turns = state.get("turns") or []
    identity = state.get("identity", "")
    return [t for t in turns if t.get("identity", "") == identity] if identity else list(turns)


def unreadable_tables(exc: ConnectorError) -> str:
    """What happened when the warehouse's tables could not be read (or what the asker's
    identity may read of them)."""
    if isinstance(exc, AccessUnknown):
        return exc.message
    return f"I could not read the warehouse's tables: {exc.message} {exc.hint}"


def reset_for_question() -> Update:
    """The per-question fields as they are before the first step."""
    return {
        "draft": None,
        "feedback": [],
        "attempts": 0,
        "exec_failures": 0,
        "proposal": None,
        "decision": None,
        "edit": None,
        "final": None,
        "relaxed": False,
        "relax": None,
        "usage": empty_usage(),
        "variations": None,
        "plan": None,
        "needs_check": False,
        "pasted": False,
        "metric": None,
        "missing_names": False,
        "redrafted": False,
        "matched": None,
    }
