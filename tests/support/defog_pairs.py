"""sql-eval's questions per dialect: the dialect's gold SQL matched to the PostgreSQL gold of
the same question."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent.evaluation.defog import CORPORA, Gold, gold_questions

DIALECTS = ("postgres", "mysql", "sqlite")


@dataclass(frozen=True)
class Pair:
    """One sql-eval question: its gold SQL in the dialect, and its PostgreSQL gold."""

    dialect: Gold
    postgres: Gold

    @property
    def ordered(self) -> bool:
        return self.dialect.category == "order_by"


def pairs(dialect: str, corpora: Path = CORPORA) -> list[Pair]:
    """The dialect's questions matched to the PostgreSQL file's on database and question."""
    postgres = {(g.database, g.question): g for g in gold_questions(corpora, "postgres")}
    found = []
    for gold in gold_questions(corpora, dialect):
        other = postgres.get((gold.database, gold.question))
        if other is not None and gold.queries:
            found.append(Pair(gold, other))
    return found
