"""A chat model that answers from recorded replies, matched to the question asked (demo mode).

Unlike the scripted model, which replays its file from line 1 in every process, this one finds
the question among the messages it is sent, so its questions can come in any order, in any
process. A recording names the question it answers and, for a follow-up, the question asked just
before it in the thread (the last `Q:` line of the history the model is shown), so the same
follow-up ("Show this by month") gets the reply recorded for the answer it follows.

A question with no recording gets a clarifying reply listing the questions there are, so the
person learns what to ask instead; nothing is run.

The file is JSON: `{"recordings": [{"question": ..., "after": ... or null, "reply": {"kind":
"sql", "explanation": ..., "sql": ...}}, ...]}`; questions match case and spacing aside, with or
without a final `?`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import BaseModel

from agent.model.prompts import HISTORY
from agent.model.providers import ModelConfigError, ScriptedChatModel

_HISTORY_OPENING = HISTORY.split("{", 1)[0]
_ASKED = re.compile(r"^Q: (.*)$", re.MULTILINE)


def normalized(question: str) -> str:
    """`question` as recordings are matched: lower case, single spaces, no final ? . or !"""
    return re.sub(r"\s+", " ", question).strip().rstrip("?.!").strip().casefold()


class Recording(BaseModel):
    """One recorded reply: to `question`, asked first (`after` None) or right after `after`."""

    question: str
    after: str | None = None
    reply: dict[str, Any]


class RecordedChatModel(ScriptedChatModel):
    """Replies recorded per question; structured output is parsed as the scripted model's."""

    recordings: list[Recording]

    @classmethod
    def from_json(cls, path: Path) -> RecordedChatModel:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            recordings = [Recording.model_validate(r) for r in data["recordings"]]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ModelConfigError(f"The recorded replies in {path} cannot be read: {exc}") from exc
        return cls(replies=[], recordings=recordings)

    @property
    def _llm_type(self) -> str:
        return "recorded"

    @property
    def questions(self) -> list[str]:
        """The questions recorded as a thread's first, in the file's order."""
        return [r.question for r in self.recordings if r.after is None]

    def follow_ups(self, after: str) -> list[str]:
        """The follow-ups recorded right after the question `after`."""
        key = normalized(after)
        return [r.question for r in self.recordings if r.after and normalized(r.after) == key]

    def reply_to(self, messages: list[BaseMessage]) -> dict[str, Any]:
        """The recorded reply for the question in `messages`, else a clarifying one listing
        what can be asked."""
        texts = [str(m.content) for m in messages if isinstance(m, HumanMessage)]
        histories = [t for t in texts if t.startswith(_HISTORY_OPENING)]
        asked_before = _ASKED.findall(histories[-1]) if histories else []
        before = normalized(asked_before[-1]) if asked_before else None
        asked = {normalized(t) for t in texts if t not in histories}
        follow_up = [
            r
            for r in self.recordings
            if r.after and normalized(r.after) == before and normalized(r.question) in asked
        ]
        first = [r for r in self.recordings if not r.after and normalized(r.question) in asked]
        if follow_up or first:
            return (follow_up or first)[0].reply
        offered = self.questions + (self.follow_ups(asked_before[-1]) if asked_before else [])
        listed = "\n".join(f"- {q}" for q in offered)
        return {
            "kind": "clarify",
            "explanation": (
                "Demo mode has no recorded reply for that question (no model is called), so "
                f"nothing was run. Ask one of these:\n{listed}"
            ),
            "sql": "",
        }

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        text = json.dumps(self.reply_to(messages))
        message = AIMessage(content=text)
        return ChatResult(generations=[ChatGeneration(message=message)])
