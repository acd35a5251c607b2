"""The "How did you get this?" account: the steps taken for one question, read back from the
thread's state.

Every node appends a sentence to the question's trace as it works (`agent.state.Step`): the model
wrote or corrected the SQL, the checks refused a draft and why, the gate changed it (row cap,
re-quoted identifiers, a dialect transpiled), someone edited, approved or rejected it, the run
failed and went back for correction, an empty result was loosened. The trace is kept with the turn
when the question ends, so an explanation is a lookup, never another model call.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.state import Step, Turn

#: Kinds whose steps say the query changed on its way (for the one-line summary).
_CHANGES = {"repair": "corrected", "gate_fix": "adjusted by the gate", "edited": "edited"}


@dataclass(frozen=True)
class Explanation:
    """The steps of one question, oldest first."""

    question: str
    steps: tuple[Step, ...]

    def summary(self) -> str:
        """One line: how many model calls wrote the SQL, and what changed it."""
        writes = sum(1 for s in self.steps if s["kind"] in {"model", "repair", "unreadable"})
        changed = [label for kind, label in _CHANGES.items() if self._has(kind)]
        text = f"{writes} model call{'s' if writes != 1 else ''} wrote the SQL"
        if self._has("pasted"):
            text = "The SQL was pasted, not written by the model"
        if changed:
            text += "; it was " + ", ".join(changed)
        if self._has("relaxed"):
            text += "; an empty result was loosened"
        return text + "."

    def _has(self, kind: str) -> bool:
        return any(s["kind"] == kind for s in self.steps)


def explain(turns: list[Turn], trace: list[Step], proposal_id: str | None) -> Explanation | None:
    """The explanation of the question that proposed `proposal_id` (the latest question when
    None): from the finished turns, newest first, then the question still in progress."""
    candidates: list[list[Step]] = [list(trace)]
    candidates += [list(t.get("steps") or []) for t in reversed(turns)]
    if proposal_id is None:
        # the question in progress, or else the last finished one
        candidates = [c for c in candidates if c][:1]
    for steps in candidates:
        if proposal_id is not None and not any(s.get("proposal_id") == proposal_id for s in steps):
            continue
        question = next((s["text"] for s in steps if s["kind"] == "question"), "")
        return Explanation(question=question, steps=tuple(steps))
    return None
