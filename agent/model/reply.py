"""The structured reply the model must give: what it proposes for one question."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from agent.semantic.metric_query import MetricQuery


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


class SqlRepair(BaseModel):
    """The model's corrected query for a draft the checks or the engine refused.

    No clarifying option: the question was already read as answerable (its first draft was SQL),
    and a small model asked to fix a problem tends to turn the problem list into a question for
    the person instead. A draft whose names the warehouse lacks ends in a clarifying question
    written by code once the attempts are spent (agent.screen.judge).
    """

    explanation: str = Field(description="One short sentence: what the corrected query computes.")
    sql: str = Field(description="Exactly one SELECT statement, no trailing semicolon.")


class MetricReply(BaseModel):
    """The model's choice for a question the team's metrics may answer (the metric step)."""

    kind: Literal["metric", "none"] = Field(
        description=(
            "'metric' when the listed metrics answer the question (fill in 'query'); 'none' "
            "when no listed metric measures what it asks (leave 'query' empty)."
        )
    )
    explanation: str = Field(
        default="", description="One short sentence: what the metric query computes."
    )
    query: MetricQuery | None = Field(default=None, description="The metric query, for 'metric'.")
