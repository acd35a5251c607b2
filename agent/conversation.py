"""The agent's public face: ask a question in a thread, decide on a proposal.

Both the Slack bot and the terminal drive the graph only through `Agent`, so neither knows how
the graph is wired. Calls block (model and warehouse work): callers run them off their event loop,
and must not run two calls for the same thread at once, except `cancel`, which is meant to be
called from another thread while `decide` runs the query. A caller that shows what the agent is
doing passes `on_step`, called with each graph node's name (agent/graph.py) as it starts.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command, StateSnapshot

from agent.context import AgentDeps
from agent.explain import Explanation, explain
from agent.graph import Graph, build_graph
from agent.memory.postgres import CHECKPOINT_POOL_SIZE, open_pool, setup_lock
from agent.outcome import Answer, Outcome, Proposal
from agent.scheduled import RunResult, ScheduledSql, run_scheduled
from agent.state import Decision, Edit
from connectors.base import ActsAs, PermissionDenied, TableInfo, acts_as

NOT_WAITING = (
    "That proposal is no longer waiting for approval (it was decided or replaced by a newer "
    "question). Ask again to get a fresh one."
)
#: Called with a graph node's name ("generate", "validate", "execute"...) as the node starts.
OnStep = Callable[[str], None]

OTHER_SQL = (
    "That decision names other SQL than the proposal waiting here, so nothing was run. Look at "
    "the proposal again and decide on it."
)


def sqlite_checkpointer(path: Path) -> SqliteSaver:
    """A checkpointer in a SQLite file, safe to share between threads of one process."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    saver = SqliteSaver(conn)
    saver.setup()
    return saver


def postgres_checkpointer(url: str) -> PostgresSaver:
    """A checkpointer in PostgreSQL, shared by every replica (and thread) that opens `url`.

    Two replicas may resume one thread at once and both run its next node: the bot's approval
    claim, not the checkpointer, decides which one goes ahead. The saver serialises its own
    queries, so its pool stays small however many workers share it.
    """
    pool = open_pool(url, max_size=CHECKPOINT_POOL_SIZE)
    saver = PostgresSaver(pool)  # type: ignore[arg-type]
    with setup_lock(pool, "querybot.checkpoints"):
        saver.setup()
    return saver


class Agent:
    """Drives the compiled graph, one conversation per `thread_id`."""

    def __init__(self, deps: AgentDeps, checkpointer: BaseCheckpointSaver[str]) -> None:
        self.deps = deps
        self.graph: Graph = build_graph(deps, checkpointer)

    @staticmethod
    def _config(thread_id: str) -> RunnableConfig:
        return {"configurable": {"thread_id": thread_id}}

    def _run(self, value: Any, config: RunnableConfig, on_step: OnStep | None) -> None:
        """Run the graph from `value` (an input, or a resume) until it ends or waits; with
        `on_step`, streaming its tasks to name each step as it starts (a task's start has its
        input, its end its result)."""
        if on_step is None:
            self.graph.invoke(value, config)
            return
        for task in self.graph.stream(value, config, stream_mode="tasks"):
            if isinstance(task, dict) and "input" in task:
                on_step(str(task["name"]))

    def ask(
        self,
        thread_id: str,
        question: str,
        *,
        user: str,
        identity: str = "",
        on_step: OnStep | None = None,
    ) -> Outcome:
        """A new question (or follow-up) in `thread_id`; returns a proposal, clarify or failed.

        A proposal still waiting in the thread is superseded: the new question starts afresh.
        `identity` is the warehouse identity `user`'s question runs as ("" for the connector's
        login); the proposal names it, and its approval runs it as that identity.
        """
        config = self._config(thread_id)
        self._run({"question": question, "user": user, "identity": identity}, config, on_step)
        return self._outcome(config)

    def decide(
        self,
        thread_id: str,
        proposal_id: str,
        *,
        approved: bool,
        user: str,
        labels: Mapping[str, str] | None = None,
        sql_sha256: str | None = None,
        on_step: OnStep | None = None,
    ) -> Outcome:
        """Approve or reject the pending proposal; returns answer, rejected, proposal or failed.

        The decision names the hash of the SQL the person was shown (`sql_sha256`; default: the
        pending proposal's, for a caller that showed that proposal), and only SQL with that hash
        runs. `labels` go to the warehouse's job record (e.g. BigQuery job labels) as they are.
        """
        config = self._config(thread_id)
        pending = self.pending_proposal(thread_id)
        # Resuming a thread that waits on nothing would run the graph from START: check first.
        if pending is None or pending.proposal_id != proposal_id:
            return Outcome(kind="failed", message=NOT_WAITING)
        if sql_sha256 is not None and sql_sha256 != pending.sql_sha256:
            return Outcome(kind="failed", message=OTHER_SQL)
        decision: Decision = {
            "kind": "decision",
            "proposal_id": proposal_id,
            "approved": approved,
            "by": user,
            "labels": dict(labels or {}),
            "sql_sha256": pending.sql_sha256 if sql_sha256 is None else sql_sha256,
        }
        self._run(Command(resume=decision), config, on_step)
        return self._outcome(config)

    def edit(self, thread_id: str, proposal_id: str, sql: str, *, user: str) -> Outcome:
        """Replace the pending proposal's SQL with a person's edit.

        The graph checks the edit as any draft (the edit step): it comes back as a new
        proposal to approve, and never runs directly. An edit the gate refuses changes nothing:
        the outcome is `failed` with the reasons, and `proposal` is the original, still waiting.
        """
        pending = self.pending_proposal(thread_id)
        # Resuming a thread that waits on nothing would run the graph from START: check first.
        if pending is None or pending.proposal_id != proposal_id:
            return Outcome(kind="failed", message=NOT_WAITING)
        edit: Edit = {"kind": "edit", "proposal_id": proposal_id, "sql": sql, "by": user}
        self.graph.invoke(Command(resume=edit), self._config(thread_id))
        return self._outcome(self._config(thread_id))

    def cancel(self, thread_id: str, proposal_id: str, *, user: str) -> bool:
        """Stop the approved query of `proposal_id` while `decide` runs it; True when it was
        running here. Safe from any thread: it touches only the audit log and the connector.

        The request is recorded first, so the `decide` call it stops can say who stopped it
        (that call then returns a `cancelled` outcome).
        """
        self.deps.audit.record(thread_id, "cancel_requested", proposal_id=proposal_id, actor=user)
        return self.deps.connector.cancel(proposal_id)

    def pending_proposal(self, thread_id: str) -> Proposal | None:
        """The proposal `thread_id` waits on, or None."""
        snapshot = self.graph.get_state(self._config(thread_id))
        if not snapshot.interrupts:
            return None
        return _proposal(snapshot)

    def interrupted_decision(self, thread_id: str, proposal_id: str) -> Outcome | None:
        """What became of an approval of `proposal_id` that a restart cut short, read from the
        thread's checkpoint (no query is run):

        - the proposal itself (kind `proposal`, the same id) when the thread still waits on it:
          the approval never reached the graph, so nothing ran;
        - the decision's outcome, as `decide` returns it, when the graph took the approval and
          finished with it (an answer, a corrected proposal, a failure);
        - None when the graph took it and stopped part-way (the query may have run), or the
          thread has moved on to another question.
        """
        config = self._config(thread_id)
        snapshot = self.graph.get_state(config)
        if snapshot.interrupts and _proposal(snapshot).proposal_id == proposal_id:
            return Outcome(kind="proposal", proposal=_proposal(snapshot))
        steps = snapshot.values.get("trace") or []
        taken = any(s["kind"] == "approved" and s.get("proposal_id") == proposal_id for s in steps)
        if not taken or (snapshot.next and not snapshot.interrupts):  # not this question's, or
            return None  # stopped between two steps
        return self._outcome(config)

    def explain(self, thread_id: str, proposal_id: str | None = None) -> Explanation | None:
        """How the question behind `proposal_id` (default: the thread's latest) was answered,
        from the thread's recorded steps: no model call. None when the thread has no such
        question."""
        values = self.graph.get_state(self._config(thread_id)).values
        return explain(values.get("turns") or [], values.get("trace") or [], proposal_id)

    def draft_sql(self, thread_id: str) -> str:
        """The SQL of the thread's latest draft ("" for none, or a clarifying one): what the
        gate or the engine saw last, for a question that ended with no SQL proposed."""
        draft = self.graph.get_state(self._config(thread_id)).values.get("draft")
        return draft["sql"] if draft and draft["kind"] == "sql" else ""

    def has_thread(self, thread_id: str) -> bool:
        """Whether `thread_id` has a conversation (so replies there need no mention)."""
        return bool(self.graph.get_state(self._config(thread_id)).values)

    def _outcome(self, config: RunnableConfig) -> Outcome:
        snapshot = self.graph.get_state(config)
        usage = snapshot.values.get("usage")
        if snapshot.interrupts:
            proposal = _proposal(snapshot)
            edit = snapshot.values.get("edit")
            if edit and "refused" in edit and edit["proposal_id"] == proposal.proposal_id:
                # the edit changed nothing: the proposal waits on
                return Outcome(
                    kind="failed", message=edit["refused"], proposal=proposal, usage=usage
                )
            relax = snapshot.values.get("relax")
            if relax and relax["proposal_id"] == proposal.proposal_id:
                # an empty result, shown above the loosened proposal that follows it
                empty = Answer.from_dict({**relax["answer"], "usage": usage})
                return Outcome(
                    kind="proposal",
                    message=relax["message"],
                    proposal=proposal,
                    answer=empty,
                    usage=usage,
                )
            return Outcome(kind="proposal", proposal=proposal, usage=usage)
        final = snapshot.values.get("final")
        if not final:
            return Outcome(
                kind="failed",
                message="The question stopped before an answer; ask again.",
                usage=usage,
            )
        answer = None
        if final["kind"] == "answer":
            answer = Answer.from_dict({**final["answer"], "usage": usage})
        return Outcome(kind=final["kind"], message=final["message"], answer=answer, usage=usage)

    def run_scheduled(self, thread_id: str, job: ScheduledSql, *, job_key: str) -> RunResult:
        """One scheduled run of SQL approved before in `thread_id` (agent.scheduled): the gate,
        the access check and the cost cap again, then the query; no model call."""
        return run_scheduled(self.deps, thread_id, job, job_key=job_key)

    def unreadable(self, identity: str, tables: Sequence[str]) -> list[str]:
        """Those of `tables` the warehouse identity `identity` may not read, as the warehouse
        itself says (a role's privileges), or querybot's table list. Raises ConnectorError when
        it cannot tell (the connector acts as no identity, the login may not assume it)."""
        connector = self.deps.connector
        if not acts_as(connector):
            raise PermissionDenied(
                f"The {connector.name} warehouse cannot check what {identity!r} may read."
            )
        assert isinstance(connector, ActsAs)
        return connector.unreadable(identity, tables)

    def tables(self) -> list[TableInfo]:
        """The tables people can ask about, as the catalog lists them. Raises ConnectorError
        when the warehouse cannot list them."""
        return self.deps.catalog.tables

    def close(self) -> None:
        """Close the warehouse connection once a background catalog refresh has ended (one
        still running in DuckDB when the interpreter shuts down aborts the process)."""
        self.deps.catalog.wait_idle(timeout_s=30)
        self.deps.connector.close()


def _proposal(snapshot: StateSnapshot) -> Proposal:
    """The proposal a thread waits on, with the question's usage and plan as they are now."""
    values = snapshot.values
    shown = snapshot.interrupts[0].value  # the proposal as the state keeps it
    return Proposal.from_dict({**shown, "usage": values.get("usage"), "plan": values.get("plan")})
