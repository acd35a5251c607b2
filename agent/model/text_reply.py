"""A SQL reply written as plain text: a query in a ```sql block, read by code.

Code models are trained on SQL in markdown blocks, not on SQL escaped inside a JSON string, and
a small model that is refused for naming columns the warehouse lacks tends to write the same
names again when asked to correct its own draft. The redraft asks afresh, without the refused draft,
for a reply in text; code reads it into the same `SqlRepair` the structured methods give, with
LangChain's `include_raw` contract (`{"raw", "parsed", "parsing_error"}`), so nothing downstream
knows the difference.
"""

from __future__ import annotations

import contextlib
import re
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable, RunnableLambda
from pydantic import ValidationError

from agent.model.reply import SqlRepair

#: A fenced block: its info string (one word) dropped; an unclosed fence runs to the end.
_FENCE = re.compile(r"```[\w+-]*[^\S\n]*\n?(.*?)(?:```|\Z)", re.DOTALL)
#: An unfenced query: a line that starts with SELECT or WITH, to the end of the reply.
_BARE = re.compile(r"^[^\S\n]*(?:SELECT|WITH)\b.*", re.IGNORECASE | re.DOTALL | re.MULTILINE)
#: Labels small models put before a question ("Clarify: ...", "Question: ...").
_LABEL = re.compile(
    r"^[\s*_]*(?:clarify(?:ing question)?|clarification|question|reason)[\s*_]*:[\s*_]*",
    re.IGNORECASE,
)


def read_reply(text: str) -> SqlRepair:
    """`text` as a `SqlRepair`: its SQL (the first fenced block, else from the first line that
    starts with SELECT or WITH) and the prose that explains it; a reply in the structured form
    (the JSON of `SqlRepair` or `SqlReply`) is read as it is. Prose alone holds no SQL (an
    empty `sql` and the prose without a label such as "Clarify:"; a redraft reads it as the
    model saying the data cannot answer). Raises ValueError for an empty reply."""
    text = text.strip()
    with contextlib.suppress(ValidationError):  # a model that answers in the structured form
        return SqlRepair.model_validate_json(text)
    sql, prose = "", text
    if fenced := _FENCE.search(text):
        sql = fenced.group(1).strip().rstrip(";").strip()
        # the sentence before the block; else what follows it, up to any further block
        prose = text[: fenced.start()].strip() or text[fenced.end() :].split("```")[0].strip()
    elif bare := _BARE.search(text):
        sql = bare.group(0).strip().rstrip(";").strip()
        prose = text[: bare.start()].strip()
    prose = " ".join(prose.split())
    if not sql:
        prose = _LABEL.sub("", prose)
        if not prose:
            raise ValueError("the reply was empty")
    return SqlRepair(explanation=prose, sql=sql)


def text_replies(model: BaseChatModel) -> Runnable[LanguageModelInput, dict[str, Any]]:
    """`model` answering in text, read into a `SqlRepair` (include_raw's contract)."""

    def parse(message: BaseMessage) -> dict[str, Any]:
        try:
            parsed = read_reply(str(message.content))
        except ValueError as exc:
            return {"raw": message, "parsed": None, "parsing_error": exc}
        return {"raw": message, "parsed": parsed, "parsing_error": None}

    return model | RunnableLambda(parse)
