"""The doctor's report: sections of findings, one line each, and the verdict under them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from connectors.units import counted

#: "unchecked": something that should have been checked could not be (Slack unreachable), so
#: it is neither a problem found nor fine.
Status = Literal["ok", "fail", "note", "unchecked"]
_MARK: dict[Status, str] = {"ok": "✓", "fail": "✗", "note": "·", "unchecked": "?"}


@dataclass(frozen=True)
class Line:
    """One finding: ok, fail (with what to do), a note (something not checked by design, or
    context), or unchecked (it could not be checked this time)."""

    status: Status
    text: str


@dataclass
class Section:
    title: str
    lines: list[Line] = field(default_factory=list)

    def ok(self, text: str) -> None:
        self.lines.append(Line("ok", text))

    def fail(self, text: str) -> None:
        self.lines.append(Line("fail", text))

    def note(self, text: str) -> None:
        self.lines.append(Line("note", text))

    def unchecked(self, text: str) -> None:
        self.lines.append(Line("unchecked", text))


def count(sections: list[Section], status: Status) -> int:
    return sum(line.status == status for s in sections for line in s.lines)


def render(sections: list[Section]) -> str:
    out: list[str] = []
    for section in sections:
        out.append(section.title)
        out += [f"  {_MARK[line.status]} {line.text}" for line in section.lines]
    failures = count(sections, "fail")
    unchecked = count(sections, "unchecked")
    could_not = f"{counted(unchecked, 'check')} could not be made (marked ?)"
    out.append("")
    if failures:
        also = f", and {could_not}" if unchecked else ""
        out.append(
            f"{counted(failures, 'problem')} found (marked ✗){also}; fix them and "
            "run `querybot doctor` again."
        )
    elif unchecked:
        out.append(f"No problem found, but {could_not}: see why, and run `querybot doctor` again.")
    else:
        out.append("Everything checked is fine.")
    return "\n".join(out)
