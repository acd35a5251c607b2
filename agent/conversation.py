"""The agent's public face: ask a question in a thread, decide on a proposal.

Both the Slack bot and the terminal drive the graph only through `Agent`, so neither knows how
the graph is wired. Calls block (model and warehouse work): callers run them off their event loop.
"""

from __future__ import annotations

from agent.outcome import Outcome, Proposal


class Agent:
    """Drives the compiled graph for one conversation thread at a time."""

    def ask(self, thread_id: str, question: str, *, user: str) -> Outcome:
        """A new question (or follow-up) in `thread_id`; returns a proposal, clarify or failed."""
        raise NotImplementedError

    def decide(self, thread_id: str, proposal_id: str, *, approved: bool, user: str) -> Outcome:
        """Approve or reject the pending proposal; returns answer, rejected, proposal or failed."""
        raise NotImplementedError

    def pending_proposal(self, thread_id: str) -> Proposal | None:
        """The proposal `thread_id` waits on, or None."""
        raise NotImplementedError

    def has_thread(self, thread_id: str) -> bool:
        """Whether `thread_id` has a conversation (so replies there need no mention)."""
        raise NotImplementedError
