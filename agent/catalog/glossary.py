"""The business glossary: what the company means by its words, from an optional YAML file.

    terms:
      - term: revenue
        aliases: [sales, turnover]
        definition: Money earned from delivered orders, before refunds.
        expression: sum(order_items.quantity * order_items.unit_price)
        tables: [orders, order_items]

A term (or alias) that occurs in a question, as whole words and ignoring case, is shown to the
model with its definition and expression; its tables are ranked first by retrieval.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml


class GlossaryError(ValueError):
    """The glossary file cannot be used; the message names the file and the entry."""


@dataclass(frozen=True)
class Term:
    term: str
    definition: str
    aliases: tuple[str, ...] = ()
    expression: str = ""
    tables: tuple[str, ...] = ()

    @property
    def pattern(self) -> re.Pattern[str]:
        words = sorted({self.term, *self.aliases}, key=len, reverse=True)
        return re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + r")\b", re.I)


class Glossary:
    def __init__(self, terms: list[Term]) -> None:
        self.terms = terms
        self._patterns = [(t, t.pattern) for t in terms]

    @classmethod
    def load(cls, path: Path | str) -> Glossary:
        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise GlossaryError(f"Cannot read the glossary {path}: {exc}") from exc
        entries = data.get("terms", []) if isinstance(data, dict) else None
        if not isinstance(entries, list):
            raise GlossaryError(f"{path}: expected a mapping with a list under 'terms'")
        terms = []
        for number, entry in enumerate(entries, 1):
            if not isinstance(entry, dict) or not entry.get("term") or not entry.get("definition"):
                raise GlossaryError(f"{path}: term {number} needs 'term' and 'definition'")
            terms.append(
                Term(
                    term=str(entry["term"]),
                    definition=str(entry["definition"]),
                    aliases=tuple(str(a) for a in entry.get("aliases") or ()),
                    expression=str(entry.get("expression") or ""),
                    tables=tuple(str(t) for t in entry.get("tables") or ()),
                )
            )
        return cls(terms)

    def matching(self, question: str) -> list[Term]:
        """The terms the question uses, in file order."""
        return [term for term, pattern in self._patterns if pattern.search(question)]
