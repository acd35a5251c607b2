"""What the agent hands back to whoever drives it (the Slack bot, the terminal).

Plain frozen dataclasses of JSON-friendly values: the bot renders them, the CLI prints them, and
neither needs to know how the graph reached them. `Proposal` and `Answer` are the one definition
of each: the thread's checkpoints (`ThreadState`) and the bot's store keep them as plain dicts
(`to_dict`, `to_state`), read back with `from_dict`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal, Self

from agent.model.accounting import QuestionUsage

OutcomeKind = Literal["proposal", "answer", "clarify", "failed", "rejected", "cancelled"]

#: A `Proposal` or an `Answer` as a plain dict (`to_state`, `to_dict`).
Plain = dict[str, Any]


class _Plain:
    """To and from plain dicts, for the frozen dataclasses below.

    `to_state` leaves out `usage` and `plan`: they belong to the question, which the thread's
    state keeps once (ThreadState.usage, .plan), and are attached when a proposal or answer is
    handed out. A dict written by an older version still loads: fields it lacks take their
    defaults, and fields this version does not know are dropped.
    """

    def to_dict(self) -> Plain:
        return asdict(self)  # type: ignore[call-overload]

    def to_state(self) -> Plain:
        return {k: v for k, v in self.to_dict().items() if k not in ("usage", "plan")}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class Proposal(_Plain):
    """SQL waiting for a person's approval. `sql_sha256` is the hash an approval must name."""

    proposal_id: str
    question: str
    sql: str
    explanation: str
    tables: list[str]
    sql_sha256: str
    warnings: list[str] = field(default_factory=list)
    #: What the warehouse said running it will cost (a dry run), when it can tell.
    estimated_bytes: int | None = None
    estimated_cost_usd: float | None = None
    #: Model calls and tokens spent on the question so far (agent.model.accounting), a plain dict.
    usage: QuestionUsage | None = None
    #: How the model read the question before writing SQL (the plan-first strategy), or None.
    plan: dict[str, Any] | None = None
    #: `table.column` pairs the gate found the SQL reads.
    columns: list[str] = field(default_factory=list)
    #: Which kind of answer it is, where a warehouse has metric definitions: "governed: metric
    #: revenue, by month" (MetricFlow compiled it) or "ad hoc SQL"; "" where it has none.
    label: str = ""
    #: The definitions of the metrics a governed proposal uses, one line each.
    definitions: list[str] = field(default_factory=list)
    #: The warehouse identity (a role, a service account, a table list's name) it runs as: the
    #: asker's; "" for the bot's own login.
    run_as: str = ""
    #: What each ratio or average of the result divides by, in words (agent.screen.ratios).
    bases: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Answer(_Plain):
    """An executed, approved query and the evidence for it."""

    question: str
    sql: str
    explanation: str
    tables: list[str]
    columns: list[str]
    #: The first rows (JSON-plain values: str, int, float, bool or None).
    rows: list[list[Any]]
    total_rows: int
    #: True when the statement hit the row cap, so more rows may exist in the warehouse.
    capped: bool
    elapsed_s: float
    connector: str
    approved_by: str
    bytes_processed: int | None = None
    #: A link to the warehouse's record of the job (BigQuery's console), when there is one.
    job_url: str | None = None
    #: The approved proposal this ran (names the answer for `Agent.explain`).
    proposal_id: str = ""
    #: Up to three follow-up questions, when that strategy is on.
    follow_ups: list[str] = field(default_factory=list)
    #: Model calls and tokens the question took, repairs included (agent.model.accounting).
    usage: QuestionUsage | None = None
    #: The approved proposal's `label` and `definitions` (governed or ad hoc SQL).
    label: str = ""
    definitions: list[str] = field(default_factory=list)
    #: For an empty result filtered on a period: which dates the data covers there
    #: (agent.strategies.coverage); "" otherwise.
    coverage: str = ""


@dataclass(frozen=True)
class Outcome:
    """Where a question or a decision left the thread.

    - `proposal`: SQL awaits approval (`proposal` set).
    - `answer`: the approved query ran (`answer` set).
    - `clarify`: the agent asks the user something, or says the data cannot answer (`message`).
    - `failed`: nothing to approve or run; `message` says what happened and what to try
      (after a refused edit, `proposal` is the original one, still waiting).
    - `rejected`: a person rejected the proposal; nothing ran.
    - `cancelled`: a person stopped the approved query while it ran (`Agent.cancel`); `message`
      says who. It is never repaired or run again.
    """

    kind: OutcomeKind
    message: str = ""
    proposal: Proposal | None = None
    answer: Answer | None = None
    #: Model calls and tokens of the question (also on `proposal` and `answer`).
    usage: QuestionUsage | None = None
