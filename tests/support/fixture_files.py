"""Readers for the gate's fixture files in `tests/fixtures/gate/`.

`normalise.sql` and `reject.sql` follow sqlglot's optimizer fixtures: blocks separated by blank
lines, `# key: value` headers, then statements each ended by `;` at the end of a line (the input,
and for accepted cases the expected normalised SQL). `harmful.sql` is a catalogue: one statement
a line under `# dialect:` and `# expect:` headers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gate"
_END = re.compile(r";[ \t]*(?:\n|\Z)")


@dataclass(frozen=True)
class Case:
    """One golden case: the input and either the expected SQL or the expected reason code."""

    title: str
    dialect: str
    sql: str
    expected: str | None
    code: str | None
    meta: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.dialect}: {self.title}"


@dataclass(frozen=True)
class Harmful:
    dialect: str
    code: str
    sql: str
    line: int


def load_cases(name: str) -> list[Case]:
    cases = []
    for block in re.split(r"\n\s*\n", (FIXTURES / name).read_text(encoding="utf-8")):
        meta: dict[str, str] = {}
        lines = block.strip("\n").splitlines()
        while lines and lines[0].startswith("#"):
            key, _, value = lines.pop(0).lstrip("# ").partition(":")
            meta[key.strip()] = value.strip()
        if not lines:
            continue  # a comment-only block (the file's preamble)
        statements = [s.strip() for s in _END.split("\n".join(lines) + "\n") if s.strip()]
        verdict = meta.get("verdict", "ok")
        code = verdict.partition(":")[2] if verdict.startswith("reject") else None
        expected = None if code else statements[1]
        cases.append(Case(meta["title"], meta["dialect"], statements[0], expected, code, meta))
    return cases


def load_harmful(name: str = "harmful.sql") -> list[Harmful]:
    dialect = code = ""
    result = []
    text = (FIXTURES / name).read_text(encoding="utf-8")
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("# dialect:"):
            dialect = line.partition(":")[2].strip()
        elif line.startswith("# expect:"):
            code = line.partition(":")[2].strip()
        elif line.strip() and not line.startswith("#"):
            result.append(Harmful(dialect, code, line, number))
    return result
