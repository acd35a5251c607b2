"""Questions to suggest to a person starting a conversation, drawn from what the warehouse
already knows to be answerable: its approved examples, its golden questions, its dbt metrics.

Nothing is made up: an example or a golden question is offered as written, and a metric as the
plainest question about it ("What is Revenue?"). Approved examples come first (people asked
them here and someone approved the SQL), then golden questions, then metrics; a question is
offered once however many sources hold it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agent.context import AgentDeps
from agent.evaluation.golden import GoldenSet

#: Slack shows at most four suggested prompts (assistant.threads.setSuggestedPrompts).
MAX_SUGGESTIONS = 4
#: A prompt's title is what the person reads on its button: the question, cut at a word.
MAX_TITLE = 60
#: Longer questions are not offered: a prompt is something to click, not to read.
MAX_QUESTION = 300


@dataclass(frozen=True)
class Suggestion:
    """A suggested prompt: the `title` shown, the `message` sent when it is clicked."""

    title: str
    message: str


def title_of(question: str) -> str:
    """`question` as a button reads it: whole when short, else cut at a word with "…"."""
    if len(question) <= MAX_TITLE:
        return question
    cut = question[: MAX_TITLE - 1].rsplit(" ", 1)[0].rstrip(" ,;:")
    return cut + "…"


def suggestions(*sources: Iterable[str], limit: int = MAX_SUGGESTIONS) -> list[Suggestion]:
    """The first `limit` distinct questions of `sources`, in order (a blank or overlong one
    skipped; the same question differently capitalised offered once)."""
    seen: set[str] = set()
    out: list[Suggestion] = []
    for source in sources:
        for question in source:
            text = " ".join(question.split())
            key = text.lower().rstrip("?")
            if not text or len(text) > MAX_QUESTION or key in seen:
                continue
            seen.add(key)
            out.append(Suggestion(title_of(text), text))
            if len(out) == limit:
                return out
    return out


def example_questions(deps: AgentDeps, run_as: str | None = None) -> list[str]:
    """The warehouse's approved examples, newest first; with `run_as`, only those asked as that
    identity (another identity's example may read tables this one cannot)."""
    examples = deps.examples.active()
    return [e.question for e in reversed(examples) if run_as is None or e.run_as == run_as]


def golden_questions(sets: Sequence[GoldenSet]) -> list[str]:
    """The questions of `sets` that open a conversation and expect an answer (a follow-up
    makes no sense on its own, a question the bot should decline is no suggestion)."""
    return [
        q.question
        for s in sets
        for q in s.questions
        if q.expect == "answer" and q.follow_up_of is None
    ]


def metric_questions(deps: AgentDeps) -> list[str]:
    """A question for each metric of the warehouse's dbt project, by its label."""
    layer = deps.project.current().semantic if deps.project is not None else None
    if layer is None:
        return []
    return [f"What is {metric.label or metric.name.replace('_', ' ')}?" for metric in layer]
