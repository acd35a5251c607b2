"""The reply of the `ask_vague` strategy (agent.strategies.vague): which measure the vague word
means, offering the warehouse's own candidates as short phrases a person can answer with.

The candidates, at most `MAX_OPTIONS`: the semantic layer's metrics first (the team's own
definitions, in the project's order), then measures of the tables the question's search ranks
first (agent.catalog.retrieval). What is ranked is a table the question names (the first after
the vague word: "customers" in "the top customers by region"); the tables holding its key
(`orders.customer_id`, or a documented join) are what it is measured by: the number of their
rows ("by number of orders", where the table has a key of its own) and the total of their
numeric columns that are not keys ("by total net revenue"; a price, rate or share is averaged
instead). Where the question names no table but a column ("the best channels"), the tables
holding that column measure it. Tables take turns, at most two candidates each, so one wide
table does not fill the list; the ranked table's own numbers come after, then those of the
other tables found.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agent.catalog.documentation import same_table
from agent.catalog.retrieval import TableIndex, stem, words
from agent.catalog.snapshot import CatalogSnapshot
from agent.semantic.semantic_manifest import SemanticLayer
from agent.strategies.vague import VAGUE, Vague, is_measure
from connectors.base import TableInfo

MAX_OPTIONS = 4
#: Candidates one table gives at most, so the list holds more than one table's columns.
PER_TABLE = 2
#: Words of a column name that make its average, not its total, the measure.
_AVERAGED = frozenset(words("price rate ratio percent pct share discount score rating age"))
_AVERAGED |= frozenset(words("avg average mean"))
#: Words left out of the table search: the vague ones, and "most" ("at most" in a description
#: is no reason to rank a table first).
_UNSEARCHED = VAGUE | {"most", "least", "more", "fewer", "fewest"}


def _spoken(name: str) -> str:
    """An identifier as words: `net_revenue` -> "net revenue", `unitPrice` -> "unit price"."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ").lower().strip()


def _key_of(table: TableInfo) -> str:
    """The column holding `table`'s own key (`order_id` in orders, or `id`), else ""."""
    own = [*words(table.short_name), "id"]
    for column in table.columns:
        if column.name.lower() == "id" or words(column.name) == own:
            return column.name
    return ""


def _holds_key_of(table: TableInfo, entity: TableInfo, snapshot: CatalogSnapshot) -> bool:
    """Whether `table` refers to `entity`'s rows: a column named after it (`customer_id` for
    customers), or a documented join key."""
    key = [*words(entity.short_name), "id"]
    if any(words(c.name) == key for c in table.columns):
        return True
    joins = snapshot.documentation.joins_of(table.name) if snapshot.documentation else []
    return any(same_table(j.other, entity.name) for j in joins)


def _table_options(table: TableInfo, snapshot: CatalogSnapshot, *, counted: bool) -> list[str]:
    """What `table` can measure by: its row count (`counted`, where it has a key of its own),
    then its measure columns, totalled or averaged."""
    out = []
    if counted and _key_of(table):
        out.append(f"by number of {_spoken(table.short_name)}")
    for column in table.columns:
        if is_measure(column, snapshot.dialect):
            how = "average" if set(words(column.name)) & _AVERAGED else "total"
            out.append(f"by {how} {_spoken(column.name)}")
    return out[:PER_TABLE]


def _turns(lists: Sequence[list[str]]) -> list[str]:
    """The lists' first items, then their second ones..., each phrase once."""
    out: list[str] = []
    for turn in range(PER_TABLE):
        for options in lists:
            if turn < len(options) and options[turn] not in out:
                out.append(options[turn])
    return out


def _names(name: str, asked: set[str]) -> bool:
    named = set(words(name))
    return bool(named) and named <= asked


def column_options(
    question: str, snapshot: CatalogSnapshot, index: TableIndex, word: str = ""
) -> list[str]:
    """Candidates from the tables `index` ranks first for `question` (its vague words left
    out, so the search is by what is ranked), in turns (see the module docstring); `word`: the
    vague word, whose noun is what is ranked."""
    searched = " ".join(w for w in re.findall(r"[\w-]+", question) if w.lower() not in _UNSEARCHED)
    asked = set(words(searched))
    ranked = [r.table for r in index.rank(searched, top=5, limit=10)]
    if not ranked:
        return []
    # what is ranked: a table the question names ("customers"; the first named after the vague
    # word in "top customers by region"), else a column ("channels")
    spoken, vague = words(question), stem(word)
    after = spoken[spoken.index(vague) :] if vague in spoken else spoken
    named = [t for t in ranked if _names(t.short_name, asked)]
    named.sort(key=lambda t: next((i for i, w in enumerate(after) if w in words(t.short_name)), 99))
    entity = named[0] if named else None
    if entity is not None:
        related = [t for t in ranked if t is not entity and _holds_key_of(t, entity, snapshot)]
    else:
        related = [
            t
            for t in ranked
            if any(_names(c.name, asked) and not is_measure(c, snapshot.dialect) for c in t.columns)
        ]
    rest = [t for t in ranked if t not in related and t is not entity]
    first = _turns([_table_options(t, snapshot, counted=True) for t in related])
    own = [entity] if entity is not None else []
    then = _turns([_table_options(t, snapshot, counted=False) for t in [*own, *rest]])
    return [*first, *(o for o in then if o not in first)]


def metric_options(layer: SemanticLayer | None) -> list[str]:
    """The layer's metrics as candidates ("by revenue", "by average order value")."""
    if layer is None:
        return []
    return [f"by {(m.label or _spoken(m.name)).lower()}" for m in layer]


def options(
    question: str,
    snapshot: CatalogSnapshot,
    *,
    word: str = "",
    layer: SemanticLayer | None = None,
    index: TableIndex | None = None,
) -> list[str]:
    """At most `MAX_OPTIONS` candidate measures for the vague `word` of `question`: metrics
    first, then columns (`index`: the snapshot's search index, built here when the caller has
    none)."""
    found = metric_options(layer)
    if len(found) < MAX_OPTIONS and snapshot.tables:
        index = index or TableIndex(snapshot)
        found += [o for o in column_options(question, snapshot, index, word) if o not in found]
    return found[:MAX_OPTIONS]


def _listed(phrases: Sequence[str]) -> str:
    quoted = [f"“{p}”" for p in phrases]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def vague_reply(vague: Vague, candidates: Sequence[str]) -> str:
    """The clarifying question: what is vague, the candidates, and how to answer."""
    if vague.ranking:
        head = f"Which measure should decide “{vague.word}”? Your question does not say."
    else:
        head = f"What counts as “{vague.word}”? Nothing in the warehouse defines it."
    if not candidates:
        return (
            f"{head} Reply in this thread with the column or metric to measure it by, "
            "for example “by <column>”."
        )
    return (
        f"{head} The data can measure it {_listed(candidates)}. Reply in this thread with one "
        "of these, or say how you measure it."
    )


def vague_note(vague: Vague) -> str:
    """The trace's sentence (`explain` reads it back)."""
    return (
        f"The question uses “{vague.word}” without saying by what measure, and the warehouse "
        "does not define it, so it was asked which measure it means (no model call)."
    )
