"""The gate's one result type: a verdict with structured reasons, never an exception."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Reason:
    """Why a statement was rejected.

    `code` is stable and machine-readable (`parse_error`, `multiple_statements`, `not_a_query`,
    `write`, `denied_function`, `unknown_table`, `unknown_column`, ...); `message` is for people
    and for the repair prompt; `suggestion` holds a "did you mean" when there is one. `span` is
    where the problem was written: character offsets `[start, end)` into the rejected verdict's
    `sql` (the text as checked), None when unknown; it takes no part in comparing reasons, so
    one problem written twice is still reported once.
    """

    code: str
    message: str
    suggestion: str = ""
    span: tuple[int, int] | None = field(default=None, compare=False)

    def __str__(self) -> str:
        if self.suggestion:
            return f"{self.message} (did you mean {self.suggestion}?)"
        return self.message


@dataclass(frozen=True)
class Verdict:
    """The gate's decision on one SQL text.

    `sql` is the normalised statement to run (fixes applied, row cap added) when `ok`, written by
    sqlglot's pretty printer in the dialect (one clause a line; `render.py`): the same text is
    shown, hashed for approval and run. Otherwise it is the input as best understood.
    `tables` are fully qualified names as the connector spells them; `columns` are `table.column`
    pairs read. `fixes` lists deterministic fixes applied ("stripped markdown fence",
    "transpiled from postgres").
    """

    ok: bool
    sql: str
    reasons: tuple[Reason, ...] = ()
    tables: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()
    fixes: tuple[str, ...] = ()
    row_cap_applied: bool = False
    warnings: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "reasons": [str(r) for r in self.reasons],
            "codes": [r.code for r in self.reasons],
            "sql": self.sql,
            "tables": list(self.tables),
            "columns": list(self.columns),
            "fixes": list(self.fixes),
        }
