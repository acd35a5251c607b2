"""What a person's verdict on an answer teaches the agent: a thumbs up makes the approved run a
verified example (who verified it kept with it); a thumbs down with a reason becomes a hint in the
failure memory, under that memory's own rules: a person's verdict is a hint for the rest of its
thread only (`PERSON_REJECTED`), and nothing is remembered of a question asked as a warehouse
identity (`AgentDeps.remembers_failures`)."""

from __future__ import annotations

from agent.context import AgentDeps
from agent.memory.failures import PERSON_REJECTED
from agent.outcome import Proposal


def governed(proposal: Proposal) -> bool:
    """Whether the answer came from the metric step, which answers such a question again: its
    long compiled SQL is never kept as an example."""
    return proposal.label.startswith("governed")


def verify(deps: AgentDeps, proposal: Proposal, *, approved_by: str, by: str) -> bool:
    """Keep the approved `proposal` as an example verified by `by`; False when it cannot be
    one (`governed`)."""
    if governed(proposal):
        return False
    deps.examples.verify(
        proposal.question,
        proposal.sql,
        tables=list(proposal.tables),
        columns=list(proposal.columns),
        approved_by=approved_by,
        verified_by=by,
        run_as=proposal.run_as,
    )
    return True


def remember_wrong(deps: AgentDeps, thread_id: str, proposal: Proposal, reason: str) -> bool:
    """Remember in `thread_id` that a person said the answer of `proposal` was wrong, and why;
    False when the failure memory keeps nothing for it."""
    if not deps.remembers_failures(proposal.run_as):
        return False
    sql = " ".join(proposal.sql.split())
    why = " ".join(reason.split()) or "no reason given"
    problem = f"A person said the answer of this SQL was wrong ({why}), so do not repeat it: {sql}"
    deps.failures.record(deps.connector.name, thread_id, PERSON_REJECTED, [problem], proposal.sql)
    return True
