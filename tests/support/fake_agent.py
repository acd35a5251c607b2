"""A stand-in Agent for listener-routing tests only (the end-to-end tests run the real one).

It records every call and answers from queues a test fills; by default `ask` proposes and
`decide` answers (or rejects), like the real agent's happy path.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace

from agent.memory.examples import ExampleStore
from agent.memory.failures import FailureStore
from agent.outcome import Answer, Outcome, Proposal
from bot.config import SINGLE, DeploymentConfig, Warehouse
from bot.routing import Route, Router
from connectors.base import TableInfo

Reply = Outcome | Exception


def proposal_outcome(sql: str = "SELECT 1 AS one", question: str = "q") -> Outcome:
    pid = uuid.uuid4().hex
    return Outcome(
        kind="proposal",
        proposal=Proposal(
            proposal_id=pid,
            question=question,
            sql=sql,
            explanation="Counts one.",
            tables=["demo.main.orders"],
            sql_sha256="0" * 64,
        ),
    )


def answer_outcome(user: str, rows: int = 3) -> Outcome:
    return Outcome(
        kind="answer",
        message=f"{rows} rows",
        answer=Answer(
            question="q",
            sql="SELECT 1 AS one",
            explanation="Counts one.",
            tables=["demo.main.orders"],
            columns=["region", "revenue"],
            rows=[[f"R{i}", 1000.25 * i] for i in range(rows)],
            total_rows=rows,
            capped=False,
            elapsed_s=0.01,
            connector="duckdb",
            approved_by=user,
        ),
    )


@dataclass
class FakeDeps:
    """The parts of `AgentDeps` a thumbs up or down teaches (`agent.feedback`), real and in
    memory: the examples and the failure memory of a connector named "duckdb"; and what the
    suggested prompts read (those examples, and no dbt project)."""

    examples: ExampleStore = field(default_factory=ExampleStore)
    failures: FailureStore = field(default_factory=FailureStore)
    connector: SimpleNamespace = field(default_factory=lambda: SimpleNamespace(name="duckdb"))
    project: None = None

    def remembers_failures(self, identity: str) -> bool:
        return not identity


class FakeAgent:
    """Implements the Agent methods the bot may call."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.deps = FakeDeps()
        self.asks: list[tuple[str, str, str]] = []
        self.decisions: list[tuple[str, str, bool, str]] = []
        self.labels: list[dict[str, str]] = []
        #: The SQL hash each decision named.
        self.hashes: list[str | None] = []
        self.has_thread_calls: list[str] = []
        self.ask_replies: list[Reply] = []
        #: The graph steps `ask` names to its `on_step` before it answers (none by default).
        self.ask_steps: list[str] = []
        #: Called in `ask` after those steps (a test waits there for what they showed).
        self.after_steps: Callable[[], object] | None = None
        self.decide_replies: list[Reply] = []
        self.edits: list[tuple[str, str, str, str]] = []
        self.edit_replies: list[Reply] = []
        self.cancels: list[tuple[str, str, str]] = []
        #: When set, `decide` waits for it (as if the approved query were running) and `deciding`
        #: is set while it waits.
        self.hold_decisions: threading.Event | None = None
        self.deciding = threading.Event()
        self._pending: dict[str, Proposal] = {}

    def _next(self, queue: list[Reply], default: Outcome) -> Outcome:
        with self._lock:
            reply = queue.pop(0) if queue else default
        if isinstance(reply, Exception):
            raise reply
        return reply

    def ask(
        self,
        thread_id: str,
        question: str,
        *,
        user: str,
        identity: str = "",
        on_step: Callable[[str], None] | None = None,
    ) -> Outcome:
        with self._lock:
            self.asks.append((thread_id, question, user))
        for step in self.ask_steps if on_step is not None else []:
            on_step(step)
        if self.after_steps is not None:
            self.after_steps()
        outcome = self._next(self.ask_replies, proposal_outcome(question=question))
        with self._lock:
            if outcome.proposal:
                self._pending[thread_id] = outcome.proposal
            else:
                self._pending.pop(thread_id, None)
        return outcome

    def decide(
        self,
        thread_id: str,
        proposal_id: str,
        *,
        approved: bool,
        user: str,
        labels: Mapping[str, str] | None = None,
        sql_sha256: str | None = None,
        on_step: Callable[[str], None] | None = None,
    ) -> Outcome:
        with self._lock:
            self.decisions.append((thread_id, proposal_id, approved, user))
            self.hashes.append(sql_sha256)
            self.labels.append(dict(labels or {}))
            self._pending.pop(thread_id, None)
        if self.hold_decisions is not None:
            self.deciding.set()
            self.hold_decisions.wait(30)
        default = answer_outcome(user) if approved else Outcome(kind="rejected", message="no")
        return self._next(self.decide_replies, default)

    def tables(self) -> list[TableInfo]:
        """The catalog the Home tab lists: one table."""
        return [TableInfo("demo.main.orders", (), "One row per order.")]

    def edit(self, thread_id: str, proposal_id: str, sql: str, *, user: str) -> Outcome:
        with self._lock:
            self.edits.append((thread_id, proposal_id, sql, user))
        outcome = self._next(self.edit_replies, proposal_outcome(sql=sql))
        if outcome.kind == "proposal" and outcome.proposal:
            with self._lock:
                self._pending[thread_id] = outcome.proposal
        return outcome

    def cancel(self, thread_id: str, proposal_id: str, *, user: str) -> bool:
        """Nothing runs in the fake, so there is never anything to stop."""
        with self._lock:
            self.cancels.append((thread_id, proposal_id, user))
        return False

    def interrupted_decision(self, thread_id: str, proposal_id: str) -> Outcome | None:
        """The fake keeps no checkpoint: a decision a restart cut short stopped part-way."""
        return None

    def pending_proposal(self, thread_id: str) -> Proposal | None:
        with self._lock:
            return self._pending.get(thread_id)

    def has_thread(self, thread_id: str) -> bool:
        with self._lock:
            self.has_thread_calls.append(thread_id)
            return any(t == thread_id for t, _, _ in self.asks)


def routed(agent: FakeAgent, override: Callable[[str], Route | None] | None = None) -> Router:
    """A Router that sends every thread to `agent`, the one warehouse, answering every channel
    (unless `override` routes the thread elsewhere)."""
    config = DeploymentConfig(
        {SINGLE: Warehouse(SINGLE, "demo", "demo", description="The demo shop")}, default=SINGLE
    )
    return Router({SINGLE: agent}, config, override=override)  # type: ignore[dict-item]
