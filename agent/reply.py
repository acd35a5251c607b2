"""The structured reply the model must give: what it proposes for one question."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class SqlReply(BaseModel):
    """The model's answer to one question (or one repair request)."""

    kind: Literal["sql", "clarify"] = Field(
        description=(
            "'sql' when you can answer with one read-only query; 'clarify' when the question is "
            "ambiguous or the data cannot answer it (then put your question or reason in "
            "'explanation' and leave 'sql' empty)."
        )
    )
    explanation: str = Field(
        description="One short sentence: what the query computes, or your clarifying question."
    )
    sql: str = Field(default="", description="Exactly one SELECT statement, no trailing semicolon.")
