"""The "How did you get this?" account: the steps taken for one question, read back from the
thread's state.

Every node appends a sentence to the question's trace as it works (`agent.state.Step`): the model
wrote or corrected the SQL, the checks refused a draft and why, the gate changed it (row cap,
re-quoted identifiers, a dialect transpiled), someone edited, approved or rejected it, the run
failed and went back for correction, an empty result was loosened; and, from the strategies, the
plan and the filter values it corrected (or why there was none), the candidates' vote and the
self-check's verdict (with why a draft was rewritten). Steps worth naming in the one-line summary
carry a `brief`. The trace is kept with the turn when the question ends, so an explanation is a
lookup, never another model call.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.state import Step, Turn


@dataclass(frozen=True)
class Explanation:
    """The steps of one question, oldest first."""

    question: str
    steps: tuple[Step, ...]

    def summary(self) -> str:
        """One line: who wrote the SQL, the strategies' steps, and what changed it on its way."""
        text = "The model wrote the SQL"
        if self._count("metric"):
            text = "MetricFlow compiled the SQL from the team's metric definitions"
        if self._count("pasted"):
            text = "The SQL was pasted, not written by the model"
        for step in self.steps:
            if step.get("brief"):
                text += f"; {step['brief']}"
        changed = []
        repairs = self._count("repair") + self._count("redraft")
        if repairs:
            changed.append("corrected once" if repairs == 1 else f"corrected {repairs} times")
        if self._count("gate_fix"):
            changed.append("adjusted by the gate")
        if self._count("edited"):
            changed.append("edited by a person")
        if changed:
            text += "; it was " + ", ".join(changed)
        if self._count("relaxed"):
            text += "; an empty result was loosened"
        return text + "."

    def _count(self, kind: str) -> int:
        return sum(1 for s in self.steps if s["kind"] == kind)


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
