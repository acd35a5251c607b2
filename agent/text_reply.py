"""The SQL step's reply as plain text: a query in a ```sql block, or a question for the person.

Code models are trained on SQL in markdown blocks, not on SQL escaped inside a JSON string.
Measured with Qwen2.5-Coder-1.5B on llama.cpp (BENCHMARKS.md, "Answer quality with a real
model"), a forced tool call whose arguments hold the query wrote worse SQL than the same
prompt answered in text. So a model can answer the SQL step in text; code reads the reply
into the same `SqlReply` / `SqlRepair` the structured methods give, with the same contract
as LangChain's `include_raw` (`{"raw", "parsed", "parsing_error"}`), so nothing downstream
knows the difference. Every other step (plan, self-check, paraphrases) stays structured.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableLambda

from agent.reply import SqlRepair, SqlReply

#: How the SQL step is asked to answer: first in the system prompt, and again after the last
#: message, since a small model that read a long schema in between otherwise answers the
#: question in prose from its own guess. The opening is the same for a first draft and a
#: repair, so a server's prompt cache serves both from one prefix (a repair that opened
#: differently had its whole prompt evaluated again: minutes on a local CPU).
ANSWER_FORMAT = """Answer with one SQL query in a ```sql code block, after one short sentence \
saying what it computes. Only when you must ask instead (an ambiguous question, or data this \
warehouse does not hold), write your question or reason alone, with no code block."""
REMINDER = "(Answer with the SQL in a ```sql code block, or only a short question.)"
#: A repair has no option to ask (agent.reply.SqlRepair).
REPAIR_REMINDER = "(Answer with the corrected SQL in a ```sql code block.)"

#: A fenced block: its info string (one word) dropped; an unclosed fence runs to the end.
_FENCE = re.compile(r"```[\w+-]*[^\S\n]*\n?(.*?)(?:```|\Z)", re.DOTALL)
#: An unfenced query: a line that starts with SELECT or WITH, to the end of the reply.
_BARE = re.compile(r"^[^\S\n]*(?:SELECT|WITH)\b.*", re.IGNORECASE | re.DOTALL | re.MULTILINE)
#: Labels small models put before a question ("Clarify: ...", "Question: ...").
_LABEL = re.compile(
    r"^[\s*_]*(?:clarify(?:ing question)?|clarification|question)[\s*_]*:[\s*_]*", re.IGNORECASE
)


def read_reply(text: str, schema: type[SqlReply] | type[SqlRepair]) -> SqlReply | SqlRepair:
    """`text` as `schema`: its SQL (the first fenced block, else from the first line starting
    with SELECT or WITH) and the prose that explains it; prose alone is a clarifying question,
    which a repair may not give. Raises ValueError for a reply with nothing to read."""
    text = text.strip()
    sql, prose = "", text
    if fenced := _FENCE.search(text):
        sql = fenced.group(1).strip()
        # the sentence before the block; else what follows it, up to any further block
        prose = text[: fenced.start()].strip() or text[fenced.end() :].split("```")[0].strip()
    elif bare := _BARE.search(text):
        sql = bare.group(0).strip()
        prose = text[: bare.start()].strip()
    prose = " ".join(prose.split())
    if schema is SqlRepair:
        if not sql:
            raise ValueError("the reply held no ```sql code block")
        return SqlRepair(explanation=prose, sql=sql)
    if sql:
        return SqlReply(kind="sql", explanation=prose, sql=sql)
    question = _LABEL.sub("", prose)
    if not question:
        raise ValueError("the reply was empty")
    return SqlReply(kind="clarify", explanation=question, sql="")


def _with_format(messages: list[BaseMessage], reminder: str) -> list[BaseMessage]:
    """`messages` with ANSWER_FORMAT opening the system prompt and `reminder` closing them."""
    if messages and isinstance(messages[0], SystemMessage):
        first: list[BaseMessage] = [SystemMessage(f"{ANSWER_FORMAT}\n\n{messages[0].content}")]
        messages = messages[1:]
    else:
        first = [SystemMessage(ANSWER_FORMAT)]
    return [*first, *messages, HumanMessage(reminder)]


def text_replies(
    model: BaseChatModel, schema: type[SqlReply] | type[SqlRepair]
) -> Runnable[list[BaseMessage], dict[str, Any]]:
    """`model` answering the SQL step in text, read into `schema` (include_raw's contract)."""
    reminder = REPAIR_REMINDER if schema is SqlRepair else REMINDER

    def ask(messages: list[BaseMessage]) -> list[BaseMessage]:
        return _with_format(list(messages), reminder)

    def parse(message: BaseMessage) -> dict[str, Any]:
        try:
            parsed = read_reply(str(message.content), schema)
        except ValueError as exc:
            return {"raw": message, "parsed": None, "parsing_error": exc}
        return {"raw": message, "parsed": parsed, "parsing_error": None}

    return RunnableLambda(ask) | model | RunnableLambda(parse)
