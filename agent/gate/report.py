"""The gate's verdict on one SQL text told against that text, for `querybot gate`.

`check_sql` judges the statement as it understood it: the text cleaned of markdown fences,
surrounding blank space and trailing semicolons. A refusal here points at the author's own text
instead: each reason's span (`Reason.span`) becomes a line and column of what was read (a file
or standard input) and the characters written there, and the statement shown is always a part
of that text, never sqlglot's rewriting of it.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.gate.check import check_sql
from agent.gate.schema import GateSchema
from agent.gate.source import position
from agent.gate.verdict import Reason, Verdict
from connectors.units import counted

#: The dialects `querybot gate` judges in, as people name them, and the dialect the gate reads
#: each in: one connector serves MySQL and MariaDB under `mysql` (the gate writes what both read:
#: `MariaDB`), and Looker has a dialect and rules of its own (`Looker`).
DIALECTS: dict[str, str] = {
    "bigquery": "bigquery",
    "duckdb": "duckdb",
    "looker": "looker",
    "mariadb": "mysql",
    "mysql": "mysql",
    "postgres": "postgres",
    "snowflake": "snowflake",
    "sqlite": "sqlite",
}


@dataclass(frozen=True)
class Location:
    """Where one reason points in the author's text: 1-based line and column, and the
    characters written there."""

    line: int
    column: int
    text: str


@dataclass(frozen=True)
class Report:
    """A verdict with the text it judged. `locations` has one entry per reason of the verdict
    (None where the gate could not place it)."""

    verdict: Verdict
    source: str
    locations: tuple[Location | None, ...]

    @property
    def statement(self) -> str:
        """The statement as judged: the normalised SQL when accepted; when refused, the part of
        the author's text that was checked (all of it when the gate rewrote it, say after
        transpiling from a neighbouring dialect)."""
        if self.verdict.ok:
            return self.verdict.sql
        checked = self.verdict.sql.strip()
        return checked if checked in self.source else self.source.strip()

    def to_json(self) -> dict[str, object]:
        """The verdict's JSON (verdict.py) with `sql` as `statement` and the reasons placed."""
        return {
            **self.verdict.to_json(),
            "sql": self.statement,
            "locations": [
                None if at is None else {"line": at.line, "column": at.column, "text": at.text}
                for at in self.locations
            ],
        }

    def refusal(self, name: str) -> str:
        """The refusal for people: each reason after the place it points at, with that line of
        `name` (the file, or standard input) underlined."""
        count = len(self.verdict.reasons)
        lines = [f"The gate refused the statement in {name} ({counted(count, 'problem')}):"]
        for reason, at in zip(self.verdict.reasons, self.locations, strict=True):
            if at is None:
                lines.append(f"  {reason}")
                continue
            lines.append(f"  line {at.line}, column {at.column}: {reason}")
            lines.extend(f"    {row}" for row in self._underline(at))
        if not self.source.strip():
            lines.append(f"  {name} holds no SQL: give the statement on standard input or as FILE.")
        return "\n".join(lines)

    def _underline(self, at: Location) -> list[str]:
        """The source line `at` is on, and carets under its first line's characters."""
        row = self.source.split("\n")[at.line - 1].rstrip("\r")
        shown = row.expandtabs(1)  # one column per character, as `column` counts them
        width = max(1, min(len(at.text.split("\n", 1)[0]), len(shown) - at.column + 1))
        prefix = f"{at.line} | "
        return [prefix + shown, " " * (len(prefix) + at.column - 1) + "^" * width]


def judge(source: str, schema: GateSchema, *, row_limit: int | None) -> Report:
    """Check `source` with the gate and place each reason in it."""
    verdict = check_sql(source, schema, row_limit=row_limit)
    locations = tuple(_locate(reason, source, verdict.sql) for reason in verdict.reasons)
    return Report(verdict, source, locations)


def _locate(reason: Reason, source: str, checked: str) -> Location | None:
    """Where `reason`'s span of the `checked` text is in `source`: at the same offset from
    where `checked` starts in it, or, when the gate rewrote the text (transpiled it), where the
    characters it points at occur once."""
    if reason.span is None or not checked:
        return None
    base = source.find(checked)
    if base >= 0:
        start, end = base + reason.span[0], base + reason.span[1]
    else:
        piece = checked[reason.span[0] : reason.span[1]]
        if not piece.strip() or source.count(piece) != 1:
            return None
        start = source.find(piece)
        end = start + len(piece)
    line, column = position(source, start)
    return Location(line, column, source[start:end])
