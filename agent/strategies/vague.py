"""Strategy `ask_vague`: a question that ranks or qualifies by a word with no stated measure
("the most valuable customers", "the best products", "active users") is asked which measure it
means, by code and before any model call. A small model picks one silently (often the first
numeric column it sees), and the person cannot tell the answer rests on a guess.

The words are few and generic, in two kinds:

- ranking words (`RANKING`: best, worst, top, bottom, biggest, performing): vague unless the
  question says by what. A measure is stated by a framing phrase ("in terms of", "based on"), by
  "by <words>" that are not a grouping ("by revenue", "by number of orders"; "by region" and "by
  month" group), by a count ("number of", "how many", "most orders"), or by any word naming a
  measure: a word of a numeric column's name, a metric's name, label or synonym, or a sales word
  (`SALES_WORDS`: "best-selling" names quantity or sales), or a noun right after the ranking
  word that names no table, text or date column ("the top salary"; not "the top customers",
  "the best month"). A compound whose second part is no vague word ("top-selling",
  "top-level", "best-rated") is not vague.
- qualities (`QUALITIES`: valuable, active, important, healthy, engaged, loyal): vague
  unless the warehouse defines the word, or the question says what it means (a framing phrase, a
  "by <measure>", or a condition: "with at least 3 orders", "in the last 90 days"). A measure
  elsewhere does not define it: "the revenue of active customers" still asks what active means.

Either kind is not vague where the warehouse defines the word (`Definitions.defines`): a column,
table, metric, semantic measure or dimension, or glossary term whose name holds the word (or its
noun: "value", "activity") with only words the question also uses (`is_active`, `active_customers`
for "active customers"; not `average_order_value` for "valuable customers"), a description that
uses the word itself, or a column value that is the word (a status 'active').

A follow-up is read with the question it follows (as the match step reads it): a measure stated
there holds here ("top customers by revenue", then "and the best products?"); and the reply to
this strategy's own question is never asked again, whatever it says.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.errors import SqlglotError

from agent.catalog.glossary import Glossary
from agent.catalog.retrieval import stem, words
from agent.catalog.snapshot import CatalogSnapshot, is_temporal, is_text
from agent.semantic.semantic_manifest import SemanticLayer
from connectors.base import ColumnInfo


def root(word: str) -> str:
    """A word stemmed twice, so a plural and its -ing form meet ("ratings", "rating": "rat")."""
    return stem(stem(word.lower()))


def roots(text: str) -> list[str]:
    """`words` of `text`, each stemmed once more (`root`)."""
    return [stem(w) for w in words(text)]


def _plural(word: str) -> bool:
    return word.endswith("s") and not word.endswith("ss")


#: Words that rank without saying by what.
RANKING = frozenset({"best", "worst", "top", "bottom", "biggest", "performing", "underperforming"})
#: Words a team defines its own way -> their other forms a definition may be named by.
QUALITIES: dict[str, tuple[str, ...]] = {
    "valuable": ("value",),
    "active": ("activity",),
    "inactive": ("active", "activity"),
    "important": ("importance",),
    "healthy": ("health",),
    "healthiest": ("healthy", "health"),
    "engaged": ("engagement",),
    "loyal": ("loyalty",),
}
VAGUE = RANKING | frozenset(QUALITIES)
#: Words that name what is measured in sales: "best-selling" ranks by quantity or sales.
SALES_WORDS = frozenset(
    roots("sell sold selling seller sale sales revenue spend spent spending earn earned earning")
    + roots("profit profitable grossing paid paying")
)
#: Words of numeric column names that measure nothing on their own (`net_revenue`, `unit_cost`).
_MODIFIERS = frozenset(roots("total net gross unit avg average sum num max min mean"))
#: Words after "by" that group instead of measuring ("top products by month").
_TIME_UNITS = frozenset(roots("day week month quarter year date time hour period"))
#: Words "by" skips before the word that says what it is by ("by the total number of orders").
_FILLERS = frozenset({"the", "their", "its", "our", "a", "an", "total", "overall", "highest"})
_COUNT = re.compile(r"\b(?:number|count|counts|how many)\b")
_FRAMING = re.compile(
    r"\b(?:in terms of|based on|measured by|defined as|according to|meaning|i\.e\.)\s"
)
#: A condition that says what a quality means: "with at least 3 orders", "in the last 90 days".
_CONDITION = re.compile(
    r"\b(?:with|having|who|that)\s+(?:at least|more than|over|under|fewer than|less than|no|"
    r"\d+)\b|\b(?:in the (?:last|past)|within|since)\b"
)
#: A superlative and the noun after it ("the highest ratings", "the lowest price").
_SUPERLATIVE = re.compile(r"\b(?:highest|lowest|largest|smallest|greatest)\s+([a-z][a-z-]*)")
_TOKEN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_KEY_WORDS = frozenset({"id", "key", "code", "sk", "pk", "fk", "uuid"})


@dataclass(frozen=True)
class Vague:
    """The vague word of a question (as written, lower-cased) and its kind."""

    word: str
    ranking: bool


def vague_words(question: str) -> list[Vague]:
    """The vague words `question` uses, in order; a compound whose second part is not vague
    ("best-selling", "top-level") has none."""
    found = []
    for token in _TOKEN.findall(question.lower()):
        parts = token.split("-")
        if len(parts) > 1:
            rest = [p for p in parts[1:] if p in VAGUE]
            if parts[0] in RANKING and not rest:
                continue  # the second part names the measure ("top-selling", "top-rated")
            parts = rest or [p for p in parts if p in VAGUE]
        found += [Vague(p, p in RANKING) for p in parts if p in VAGUE]
    return found


def is_numeric(column: ColumnInfo, dialect: str) -> bool:
    """A number column (sqlglot reads its type); a type sqlglot cannot read is not one."""
    return _numeric_type(column.type, dialect)


@functools.lru_cache(maxsize=1024)
def _numeric_type(name: str, dialect: str) -> bool:
    """Cached: a big warehouse's columns share a few types, and reading one takes sqlglot a
    parse."""
    try:
        built = exp.DataType.build(name, dialect=dialect)
    except (SqlglotError, ValueError):
        return False
    return built.is_type(*exp.DataType.NUMERIC_TYPES)


def is_measure(column: ColumnInfo, dialect: str) -> bool:
    """A numeric column that is neither a key (`customer_id`, `id`, `region_code`) nor a part
    of a date (`year`)."""
    named = roots(column.name)
    if not named or not is_numeric(column, dialect) or column.type.upper().startswith("BOOL"):
        return False
    return named[-1] not in _KEY_WORDS and not set(named) & _TIME_UNITS


@dataclass(frozen=True)
class Definitions:
    """What a warehouse (its visible tables, semantic layer and glossary) says words mean."""

    #: The words of each name (tables, columns, metrics, measures, dimensions, glossary terms).
    names: tuple[frozenset[str], ...]
    #: Words its descriptions use.
    described: frozenset[str]
    #: Words of its text columns' profiled (or documented) values.
    values: frozenset[str]
    #: Words naming a measure: of numeric columns' names (not their modifiers).
    measures: frozenset[str]
    #: The words of each metric's name, label and synonyms (all of them name it).
    metrics: tuple[frozenset[str], ...]
    #: Words of table names (what a count counts: "most orders").
    tables: frozenset[str]
    #: Words of text and date columns' names (what "by" groups by).
    groupings: frozenset[str]

    @classmethod
    def of(
        cls,
        snapshot: CatalogSnapshot,
        layer: SemanticLayer | None = None,
        glossary: Glossary | None = None,
    ) -> Definitions:
        names: list[frozenset[str]] = []
        described: set[str] = set()
        values: set[str] = set()
        measures: set[str] = set()
        metrics: list[frozenset[str]] = []
        tables: set[str] = set()
        groupings: set[str] = set()
        for table in snapshot.tables:
            tables.update(roots(table.short_name))
            names.append(frozenset(roots(table.short_name)))
            described.update(roots(table.description))
            for column in table.columns:
                named = roots(column.name)
                names.append(frozenset(named))
                described.update(roots(column.description))
                if is_measure(column, snapshot.dialect):
                    measures.update(named)
                elif is_text(column) or is_temporal(column):
                    groupings.update(named)
                profile = snapshot.column_profile(table.name, column.name)
                if profile is not None and is_text(column):
                    values.update(w for value in profile.values for w in roots(value))
        if layer is not None:
            for metric in layer:
                metrics += [frozenset(roots(name.replace("_", " "))) for name in metric.names]
                described.update(roots(metric.description))
            for model in layer.models:
                parts = [(m.name, m.description) for m in model.measures]
                parts += [(d.name, d.description) for d in model.dimensions]
                for name, description in parts:
                    names.append(frozenset(roots(name)))
                    described.update(roots(description))
        if glossary is not None:
            for term in glossary.terms:
                names += [frozenset(roots(w)) for w in (term.term, *term.aliases)]
        names += metrics
        return cls(
            names=tuple(n for n in names if n),
            described=frozenset(described),
            values=frozenset(values),
            measures=frozenset(measures - _MODIFIERS - tables),
            metrics=tuple(m for m in metrics if m),
            tables=frozenset(tables),
            groupings=frozenset(groupings - measures),
        )

    def defines(self, word: str, question: str) -> bool:
        """Whether `word` (a vague word) is defined here for `question`: a name holding it or
        its noun, its other words all in the question; for a quality, a description using it
        or a value that is it or its noun (a status 'active' for "active"; a description
        saying "top-level" defines no ranking)."""
        own = root(word)
        forms = {own, *(root(f) for f in QUALITIES.get(word, ()))}
        asked = set(roots(question))
        if word in QUALITIES and (own in self.described or forms & self.values):
            return True
        return any(name & forms and name - forms <= asked for name in self.names)


def _after_by(text: str, definitions: Definitions) -> bool:
    """Whether some "by <words>" of `text` says what is measured (not what is grouped by)."""
    tokens = _TOKEN.findall(text)
    for i, token in enumerate(tokens):
        if token != "by":
            continue
        rest = [t for t in tokens[i + 1 : i + 5] if t not in _FILLERS]
        if not rest or rest[0] in VAGUE:
            continue
        if rest[0] in ("number", "count", "amount", "sum", "share"):
            return True
        word = root(rest[0])
        if word in definitions.measures or word in SALES_WORDS:
            return True
        if any(word in metric for metric in definitions.metrics):
            return True
        if word in definitions.tables:
            if _plural(rest[0]):  # a count ("by orders"); the singular groups ("by region")
                return True
            continue
        if word in definitions.groupings or word in _TIME_UNITS or rest[0].isdigit():
            continue
        return True  # a measure the warehouse names otherwise ("by spend", "by margin")
    return False


def _ranked_by_noun(text: str, definitions: Definitions) -> bool:
    """Whether a ranking word of `text` stands before a noun that is no table, text or date
    column, nor a time: the noun is the measure ("the top salary", "the best margin"), where
    "the top 5 customers" and "the best month" rank customers and months."""
    tokens = _TOKEN.findall(text)
    for i, token in enumerate(tokens):
        if token not in RANKING:
            continue
        after = [t for t in tokens[i + 1 : i + 3] if not t.isdigit()]
        named = roots(after[0]) if after and after[0] not in VAGUE else []
        if not named:
            continue  # the end, a stop word ("the top of"), or another vague word
        noun = named[0]
        if noun not in definitions.tables | definitions.groupings | _TIME_UNITS:
            return True
    return False


def states_measure(text: str, vague: Vague, definitions: Definitions) -> bool:
    """Whether `text` says what the vague word measures."""
    lowered = text.lower()
    if _FRAMING.search(lowered + " ") or _after_by(lowered, definitions):
        return True
    if not vague.ranking:
        return bool(_CONDITION.search(lowered))
    if _COUNT.search(lowered):
        return True
    said = {root(t) for token in _TOKEN.findall(lowered) for t in token.split("-")}
    counted = re.findall(r"\b(?:most|fewest|least|more|fewer)\s+([a-z]+)", lowered)
    if any(root(w) in definitions.tables and _plural(w) for w in counted):
        return True  # "the most orders"
    if any(w not in VAGUE for w in _SUPERLATIVE.findall(lowered)):
        return True  # "with the highest ratings": the noun is the measure
    if _ranked_by_noun(lowered, definitions):
        return True
    if any(metric <= said for metric in definitions.metrics):
        return True
    return bool(said & (definitions.measures | SALES_WORDS))


def vague_measure(
    question: str, definitions: Definitions, *, earlier: Iterable[str] = ()
) -> Vague | None:
    """The first vague word of `question` whose measure neither it (nor the `earlier`
    questions it follows) states nor the warehouse defines; None when there is none."""
    text = " ".join([*earlier, question])
    for vague in vague_words(question):
        if definitions.defines(vague.word, text) or states_measure(text, vague, definitions):
            continue
        return vague
    return None


def may_be_vague(question: str) -> bool:
    """Whether `question` uses a vague word at all (cheap: no warehouse read)."""
    return bool(vague_words(question))
