"""What the model is shown for one question: the right few tables with their meaning and real
values, the glossary terms the question uses, and verified examples of similar questions.

A small warehouse is shown whole. A large one is searched (agent.catalog.retrieval) and only the
best tables are rendered, within a token budget; the token count is approximate (about four
characters a token), which is what the budget needs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from langchain_core.messages.utils import count_tokens_approximately

from agent.catalog.documentation import same_table
from agent.catalog.glossary import Glossary, Term
from agent.catalog.retrieval import TableIndex, vocabulary, words
from agent.catalog.snapshot import CatalogSnapshot, ColumnProfile, is_temporal, is_text
from agent.memory.examples import Example, ExampleStore
from agent.model import prompts
from connectors.base import TableInfo

#: Snapshots whose index and text are kept (the catalog's, and views of it per identity).
WARM_SNAPSHOTS = 16


@dataclass(frozen=True)
class ContextLimits:
    #: Warehouses whose whole rendered schema fits in this many tokens are shown whole.
    full_schema_tokens: int = 3000
    #: Upper bound for the tables part of a retrieved context.
    table_tokens: int = 3400
    #: Tables found by their own words, and in all (with join neighbours).
    top_tables: int = 8
    max_tables: int = 16
    #: A column's values are listed in full up to this many, else the first few.
    listed_values: int = 20
    sample_values: int = 3
    examples: int = 3


@dataclass(frozen=True)
class ModelContext:
    text: str
    #: Qualified names of the tables shown.
    tables: tuple[str, ...]
    full_schema: bool
    tokens: int
    examples: tuple[Example, ...] = ()
    terms: tuple[Term, ...] = ()
    #: Some table shown has a date or timestamp column.
    temporal: bool = False
    #: No word of the question occurs in the warehouse (names, descriptions, values), nor
    #: does a glossary term or an example match it: the model is told so.
    unmatched: bool = False


def approx_tokens(text: str) -> int:
    return count_tokens_approximately([text])


def _quote(value: str) -> str:
    value = value if len(value) <= 40 else value[:37] + "..."
    return "'" + value.replace("'", "''") + "'"


def value_note(profile: ColumnProfile, limits: ContextLimits) -> str:
    if not profile.values:
        return ""
    if profile.complete and len(profile.values) <= limits.listed_values:
        return "(values: " + ", ".join(_quote(v) for v in profile.values) + ")"
    shown = ", ".join(_quote(v) for v in profile.values[: limits.sample_values])
    return f"(e.g. {shown}; {profile.distinct or 'many'} distinct)"


def create_table(
    table: TableInfo, notes: dict[str, str] | None = None, rows: int | None = None
) -> str:
    """`table` as CREATE TABLE text (the form code models are trained on), each column's
    description and `notes` as a trailing comment; the table's description (and `rows`) above."""
    notes = notes or {}
    lines = []
    for i, column in enumerate(table.columns):
        comma = "," if i < len(table.columns) - 1 else ""
        comment = " ".join(p for p in (column.description, notes.get(column.name)) if p)
        line = f"  {column.name} {column.type}{comma}"
        lines.append(line + (f" -- {comment}" if comment else ""))
    about = " ".join(p for p in (table.description, f"({rows} rows)" if rows else "") if p)
    head = f"-- {about}\n" if about else ""
    return head + f"CREATE TABLE {table.name} (\n" + "\n".join(lines) + "\n);"


def table_text(table: TableInfo, snapshot: CatalogSnapshot, limits: ContextLimits) -> str:
    """One table as the model reads it: CREATE TABLE text with its meaning, row count, the
    real (or documented) values of its text columns and its documented join keys as comments."""
    profile = snapshot.profile(table.name)
    rows = profile.row_count if profile else table.row_count
    notes: dict[str, str] = {}
    for column in table.columns:
        column_profile = snapshot.column_profile(table.name, column.name)
        if column_profile is not None and is_text(column):
            note = value_note(column_profile, limits)
            if note:
                notes[column.name] = note
    for join in snapshot.documentation.joins_of(table.name):
        name = next((c.name for c in table.columns if c.name.lower() == join.column.lower()), None)
        if name is not None:
            notes[name] = " ".join(p for p in (notes.get(name), f"({join.note()})") if p)
    return create_table(table, notes, rows)


def _terms_text(terms: list[Term]) -> str:
    lines = []
    for term in terms:
        line = f"- {term.term}: {term.definition}"
        if term.expression:
            line += f" Compute as: {term.expression}"
        if term.tables:
            line += f" (tables: {', '.join(term.tables)})"
        lines.append(line)
    return "\n".join(lines)


def defer_to_metrics(terms: list[Term], metrics: Mapping[str, tuple[str, str]]) -> list[Term]:
    """`terms`, each one that names a defined metric (its term or an alias is the metric's name,
    label or synonym) carrying the metric's definition instead of its own."""
    out = []
    for term in terms:
        said = (w.replace("_", " ").lower() for w in (term.term, *term.aliases))
        found = next((metrics[w] for w in said if w in metrics), None)
        if found is None:
            out.append(term)
            continue
        name, computed = found
        definition = f"the defined metric {name}, computed as {computed}"
        out.append(replace(term, definition=definition, expression=""))
    return out


def _has(snapshot: CatalogSnapshot, name: str) -> bool:
    """Whether `name` (as a glossary writes it: qualified or not) is a table of `snapshot`."""
    return any(same_table(name, t.name) for t in snapshot.tables)


def _examples_text(examples: list[Example]) -> str:
    return "\n\n".join(f"Q: {e.question}\nSQL: {e.sql}" for e in examples)


class ContextBuilder:
    """Builds `ModelContext`s over the catalog's current snapshot.

    The table index and the whole-schema size are computed once per snapshot (`warm`, called
    when the catalog publishes one), so a question only pays for the search and the rendering.
    """

    def __init__(
        self,
        *,
        glossary: Glossary | None = None,
        examples: ExampleStore | None = None,
        limits: ContextLimits | None = None,
        metric_terms: Callable[[Sequence[TableInfo] | None], Mapping[str, tuple[str, str]]]
        | None = None,
        shared_examples: bool = False,
    ) -> None:
        self.glossary = glossary
        #: A question asked as an identity may also be shown the examples learnt with no
        #: identity: only where the identities read every row the bot's login reads of the tables
        #: they may read (querybot's table allowlists).
        self.shared_examples = shared_examples
        #: A dbt project's metrics by name and label (`SemanticLayer.terms`): a glossary term
        #: that names one defers to the metric's definition. Given an identity's tables, only
        #: the metrics computed from those (`readable_layer`); None: every one.
        self.metric_terms = metric_terms
        self.examples = examples
        self.limits = limits or ContextLimits()
        self._compact = replace(self.limits, listed_values=self.limits.sample_values)
        self._lock = threading.Lock()
        #: By id(): the snapshot (kept, so its id stays its own), its index, its text and
        #: its vocabulary.
        self._warm: dict[int, tuple[CatalogSnapshot, TableIndex | None, str, frozenset[str]]] = {}

    def warm(self, snapshot: CatalogSnapshot) -> tuple[TableIndex | None, str]:
        """The snapshot's index (None when the whole schema is shown) and whole-schema text.

        Kept for the last few snapshots: the catalog's own, and the views of it the identities
        asking questions may see."""
        index, full, _ = self._warmed(snapshot)
        return index, full

    def _warmed(self, snapshot: CatalogSnapshot) -> tuple[TableIndex | None, str, frozenset[str]]:
        with self._lock:
            found = self._warm.get(id(snapshot))
            if found is not None and found[0] is snapshot:
                return found[1], found[2], found[3]
        full = "\n\n".join(table_text(t, snapshot, self.limits) for t in snapshot.tables)
        small = approx_tokens(full) <= self.limits.full_schema_tokens
        index = None if small else TableIndex(snapshot)
        vocab = vocabulary(snapshot) if small else frozenset()
        with self._lock:
            self._warm[id(snapshot)] = (snapshot, index, full, vocab)
            while len(self._warm) > WARM_SNAPSHOTS:
                del self._warm[next(iter(self._warm))]
        return index, full, vocab

    def build(
        self,
        question: str,
        snapshot: CatalogSnapshot,
        *,
        also: Sequence[str] = (),
        restricted: bool = False,
        identity: str = "",
    ) -> ModelContext:
        """The context for `question`; `also` (paraphrases) only widens the table search.
        `restricted`: `snapshot` is the view of an identity, so a glossary term naming a table it
        lacks is left out (it may name one the identity may not read), and a term defers only to a
        metric of the tables the view has. `identity`: the one the question is asked as ("": the
        bot's login), whose own examples only it is shown."""
        index, full, vocab = self._warmed(snapshot)
        terms = self.glossary.matching(question) if self.glossary else []
        if restricted:
            terms = [t for t in terms if all(_has(snapshot, name) for name in t.tables)]
        if terms and self.metric_terms is not None:
            metrics = self.metric_terms(snapshot.tables if restricted else None)
            terms = defer_to_metrics(terms, metrics)
        # only examples learnt as the same identity, over tables this snapshot has: a view per
        # identity lacks those it may not read
        examples = (
            self.examples.similar(
                question,
                self.limits.examples,
                within=snapshot.by_key,
                identity=identity,
                shared=self.shared_examples,
            )
            if self.examples
            else []
        )
        parts = []
        unmatched = False
        if index is None:
            shown = tuple(t.name for t in snapshot.tables)
            parts.append(prompts.TABLES.format(note="", tables=full))
            asked = {w for text in (question, *also) for w in words(text)}
            unmatched = bool(snapshot.tables) and not (terms or examples or asked & vocab)
        else:
            boost = [t for term in terms for t in term.tables]
            boost += [t for e in examples for t in e.tables]
            ranked = index.rank(
                " ".join([question, *also]),
                top=self.limits.top_tables,
                limit=self.limits.max_tables,
                boost=boost,
            )
            blocks: list[tuple[str, str]] = []
            budget = self.limits.table_tokens
            for r in ranked:
                block = table_text(r.table, snapshot, self.limits)
                cost = approx_tokens(block)
                if blocks and cost > budget:
                    # a table with long value lists still fits with a few samples of each
                    block = table_text(r.table, snapshot, self._compact)
                    cost = approx_tokens(block)
                if blocks and cost > budget:
                    continue
                blocks.append((r.table.name, block))
                budget -= cost
            shown = tuple(name for name, _ in blocks)
            if blocks:
                note = prompts.SOME_TABLES.format(shown=len(blocks), total=len(snapshot.tables))
                tables_text = "\n\n".join(b for _, b in blocks)
                parts.append(prompts.TABLES.format(note=note, tables=tables_text))
            else:
                parts.append(prompts.NO_TABLES.format(total=len(snapshot.tables)))
        if terms:
            parts.append(prompts.GLOSSARY.format(terms=_terms_text(terms)))
        if examples:
            parts.append(prompts.EXAMPLES.format(examples=_examples_text(examples)))
        if unmatched:  # last, so the tables' text stays a prefix a server's cache serves
            parts.append(prompts.UNMATCHED)
        text = "\n\n".join(parts)
        temporal = any(
            is_temporal(c) for t in snapshot.tables if t.name in shown for c in t.columns
        )
        return ModelContext(
            text=text,
            tables=shown,
            full_schema=index is None,
            tokens=approx_tokens(text),
            examples=tuple(examples),
            terms=tuple(terms),
            temporal=temporal,
            unmatched=unmatched,
        )

    def full_schema_tokens(self, snapshot: CatalogSnapshot) -> int:
        """The size of the whole-schema prompt part, for comparison in the benchmark."""
        _, full = self.warm(snapshot)
        return approx_tokens(prompts.TABLES.format(note="", tables=full))
