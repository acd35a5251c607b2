"""Which tables a question needs: BM25 over each table's words, then join neighbours.

A table's document holds its name (weighted), its column names, the descriptions and the values
that occur in its text columns. Identifiers are split (`order_items` and `orderItems` give
`order`, `item`) and words are lightly stemmed, so "authors" finds `author`. Tables of the same
schema that share a key column (`writes.aid` and `author.aid`), or whose key column is named
after the other (`sales.customer_id` and `customers`), are join neighbours: the top tables bring
theirs along, so the model can write the join. Join keys the team documented (a dbt project's
relationships tests and entities) are join neighbours too.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import bm25s
import numpy as np

from agent.catalog.snapshot import CatalogSnapshot, is_text, table_key
from connectors.base import TableInfo

# bm25s sets its own logger to DEBUG, so every index it builds would log "Building index from
# tokens" through the application's handlers whatever their level: keep only its warnings (this
# module is imported wherever the agent builds an index, agent.memory.examples included)
logging.getLogger("bm25s").setLevel(logging.WARNING)

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "each",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "list",
        "me",
        "many",
        "much",
        "of",
        "on",
        "or",
        "per",
        "show",
        "than",
        "that",
        "the",
        "their",
        "them",
        "there",
        "these",
        "this",
        "to",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whose",
        "why",
        "will",
        "with",
        "would",
        "all",
        "any",
        "give",
        "find",
        "get",
        "tell",
        "our",
        "us",
        "we",
    ]
)


def stem(word: str) -> str:
    """A crude English stem: enough for plurals and -ing/-ed forms of identifiers and questions."""
    for suffix, repl in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: len(word) - len(suffix)] + repl
    return word


def words(text: str) -> list[str]:
    """Lower-case stemmed words of free text or identifiers, stop words dropped."""
    out = []
    for token in _WORD.findall(text):
        token = token.lower()
        if token not in _STOP and (len(token) > 1 or token.isdigit()):
            out.append(stem(token))
    return out


def table_document(table: TableInfo, snapshot: CatalogSnapshot) -> list[str]:
    """The words a table is found by."""
    short = words(table.short_name)
    schema = words(table.name.rsplit(".", 2)[-2]) if table.name.count(".") else []
    tokens = short * 3 + schema + words(table.description)
    for column in table.columns:
        tokens += words(column.name) * 2 + words(column.description)
        if is_text(column):
            column_profile = snapshot.column_profile(table.name, column.name)
            if column_profile is not None:
                tokens += [w for value in column_profile.values[:20] for w in words(value)]
    return tokens


def vocabulary(snapshot: CatalogSnapshot) -> frozenset[str]:
    """Every word the snapshot's tables are found by (`table_document`)."""
    return frozenset(w for table in snapshot.tables for w in table_document(table, snapshot))


def _schema_of(name: str) -> str:
    return table_key(name).rsplit(".", 1)[0] if "." in name else ""


#: Column names too common to say two tables join on them.
_GENERIC = frozenset(
    [
        "id",
        "name",
        "title",
        "description",
        "type",
        "status",
        "created_at",
        "updated_at",
        "date",
        "year",
        "month",
        "day",
        "notes",
        "comment",
        "comments",
        "amount",
        "price",
        "quantity",
        "value",
        "count",
        "total",
        "email",
        "phone",
        "url",
        "homepage",
    ]
)


def _join_signatures(table: TableInfo) -> set[str]:
    """What a table may join on: its specific column names (`aid`, `city_name`), and for key
    columns their last two words (`sbTxCustId` and `sbCustId` both give `cust id`).

    A key column named after an entity also joins the table named after it, whose own key is
    often a bare `id`: `sales.customer_id` and `customers` both give `-> customer`."""
    name_words = words(table.short_name)
    signatures = {f"-> {name_words[-1]}"} if name_words else set()
    for column in table.columns:
        name = column.name.lower()
        if name in _GENERIC:
            continue
        signatures.add(name)
        parts = [w.lower() for w in _WORD.findall(column.name.replace("_", " "))]
        if len(parts) >= 2 and parts[-1] in ("id", "code", "key"):
            signatures.add(" ".join(parts[-2:]))
            signatures.add(f"-> {stem(parts[-2])}")
    return signatures


@dataclass(frozen=True)
class Ranked:
    table: TableInfo
    score: float
    #: Why it is in the set: "match" (its own words) or "join" (a neighbour of a match).
    reason: str


class TableIndex:
    """BM25 over the snapshot's tables, plus each table's join neighbours. Build once per
    snapshot (about a second for 2,000 tables); `rank` then takes milliseconds."""

    def __init__(self, snapshot: CatalogSnapshot) -> None:
        self.snapshot = snapshot
        self.tables = list(snapshot.tables)
        self._bm25 = bm25s.BM25()
        self._bm25.index(
            [table_document(t, snapshot) or ["_"] for t in self.tables], show_progress=False
        )
        self._neighbours = self._join_graph()

    def _join_graph(self) -> dict[int, list[int]]:
        by_schema_key: dict[tuple[str, str], list[int]] = defaultdict(list)
        for i, table in enumerate(self.tables):
            for signature in _join_signatures(table):
                by_schema_key[_schema_of(table.name), signature].append(i)
        graph: dict[int, list[int]] = defaultdict(list)
        for members in by_schema_key.values():
            if len(members) > 12:  # a key shared by a whole schema says nothing about joins
                continue
            for i in members:
                graph[i].extend(j for j in members if j != i and j not in graph[i])
        # documented join keys (a dbt relationships test, a semantic model's entity) join
        # whatever their names, across schemas too
        documentation = self.snapshot.documentation
        if documentation:
            documented = {documentation.key_for(t.name): i for i, t in enumerate(self.tables)}
            documented.pop(None, None)
            for join in documentation.joins:
                a, b = (documented.get(documentation.key_for(n)) for n in (join.table, join.other))
                if a is not None and b is not None and a != b:
                    graph[a].extend([b] if b not in graph[a] else [])
                    graph[b].extend([a] if a not in graph[b] else [])
        return graph

    def scores(self, question: str, boost: Iterable[str] = ()) -> np.ndarray:
        # each word once: "Return the id ... Return the name" is phrasing, not twice the weight
        tokens = [t for t in dict.fromkeys(words(question)) if t in self._bm25.vocab_dict]
        scores = self._bm25.get_scores(tokens) if tokens else np.zeros(len(self.tables))
        boosted = {table_key(name) for name in boost}
        if boosted:
            top = float(scores.max()) if len(scores) else 0.0
            for i, table in enumerate(self.tables):
                if table_key(table.name) in boosted or table_key(table.short_name) in boosted:
                    scores[i] += top + 1.0
        return scores

    def rank(
        self, question: str, *, top: int = 5, limit: int = 10, boost: Iterable[str] = ()
    ) -> list[Ranked]:
        """The best `top` tables by their words, then their neighbours (each match's best one
        in turn), `limit` in all.

        Tables of the schema the best matches agree on rank first: a question about authors and
        papers means one database's `author` and `writes`, not every `author` table.
        """
        scores = self.scores(question, boost)
        if not len(scores) or float(scores.max()) <= 0.0:
            return []
        candidates = [int(i) for i in np.argsort(-scores)[: top * 4] if scores[i] > 0]
        by_schema: dict[str, list[float]] = defaultdict(list)
        for i in candidates:
            by_schema[_schema_of(self.tables[i].name)].append(float(scores[i]))
        # a schema is as good as its best table, helped by a second one (a join partner)
        best_schema = max(by_schema, key=lambda s: sum(by_schema[s][:2]) + by_schema[s][0])
        order = sorted(
            candidates,
            key=lambda i: (_schema_of(self.tables[i].name) != best_schema, -scores[i]),
        )
        picked = [(i, "match") for i in order[:top]]
        seen = {i for i, _ in picked}
        # round robin: every match gets its best join partner before any match gets a second,
        # so the partners of a few better-scoring lookalikes (`fct_transactions`,
        # `transactions_daily`) cannot crowd out the `customers` of the one real `transactions`
        queues = [sorted(self._neighbours.get(i, ()), key=lambda j: -scores[j]) for i, _ in picked]
        while len(picked) < limit and any(queues):
            for queue in queues:
                while queue and queue[0] in seen:
                    queue.pop(0)
                if queue and len(picked) < limit:
                    j = queue.pop(0)
                    seen.add(j)
                    picked.append((j, "join"))
        return [Ranked(self.tables[i], float(scores[i]), reason) for i, reason in picked]
