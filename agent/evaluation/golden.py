"""The golden set: questions with the SQL that answers them, or the reply they call for.

A file is YAML (`questions:` list, optional `warehouse`, `dialect` and `today`) or JSONL (one
question per line). Each question has an `id`, a `category`, the `question`, `gold` (one SQL text or
a list of acceptable ones), `expect` (answer, clarify or decline), and optionally `follow_up_of`
(the id it continues in the same thread) and `ordered` (whether row order is part of the answer).

`today: YYYY-MM-DD` pins the day the set is asked on, so that its scores repeat: the model is told
that day, the demo warehouse is built for it, and SQL that reads the clock (gold and generated
alike) reads that day (`agent.reference_day`).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

Expect = Literal["answer", "clarify", "decline"]
EXPECTS = ("answer", "clarify", "decline")

#: As sql-eval decides it: a question that asks for an order is scored order-sensitively.
_ORDER_WORDS = re.compile(r"\b(order|sort|sorted|arrange|rank)\b", re.IGNORECASE)


class GoldenError(ValueError):
    """The golden file cannot be used; the message names the question and the problem."""


@dataclass(frozen=True)
class GoldenQuestion:
    id: str
    category: str
    question: str
    gold: tuple[str, ...] = ()
    expect: Expect = "answer"
    follow_up_of: str | None = None
    ordered: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "category": self.category, "question": self.question}
        if self.gold:
            out["gold"] = list(self.gold)
        if self.expect != "answer":
            out["expect"] = self.expect
        if self.follow_up_of:
            out["follow_up_of"] = self.follow_up_of
        if self.ordered:
            out["ordered"] = True
        return out


@dataclass(frozen=True)
class GoldenSet:
    questions: tuple[GoldenQuestion, ...]
    #: The warehouse the set was written for (a QUERYBOT_WAREHOUSE value), if it says.
    warehouse: str | None = None
    #: The sqlglot dialect of the gold SQL; None means the warehouse's own.
    dialect: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    #: The day the set is asked on (`today:`), or None: the real date, so scores may drift.
    today: dt.date | None = None

    def chains(self) -> list[list[GoldenQuestion]]:
        """Questions grouped by thread: a question and its follow-ups, in file order."""
        root: dict[str, str] = {}
        chains: dict[str, list[GoldenQuestion]] = {}
        for q in self.questions:
            root[q.id] = root[q.follow_up_of] if q.follow_up_of else q.id
            chains.setdefault(root[q.id], []).append(q)
        return list(chains.values())


def parse_question(raw: Any, where: str) -> GoldenQuestion:
    if not isinstance(raw, dict):
        raise GoldenError(f"{where}: a question must be a mapping, not {type(raw).__name__}")
    missing = [k for k in ("id", "category", "question") if not raw.get(k)]
    if missing:
        raise GoldenError(f"{where}: missing {', '.join(missing)}")
    gold = raw.get("gold") or ()
    gold = (gold,) if isinstance(gold, str) else tuple(str(g) for g in gold)
    expect = raw.get("expect", "answer")
    if expect not in EXPECTS:
        raise GoldenError(f"{where} ({raw['id']}): expect must be one of {', '.join(EXPECTS)}")
    if expect == "answer" and not gold:
        raise GoldenError(f"{where} ({raw['id']}): a question expecting an answer needs gold SQL")
    question = str(raw["question"])
    ordered = raw.get("ordered")
    return GoldenQuestion(
        id=str(raw["id"]),
        category=str(raw["category"]),
        question=question,
        gold=tuple(g.strip() for g in gold),
        expect=expect,
        follow_up_of=str(raw["follow_up_of"]) if raw.get("follow_up_of") else None,
        ordered=bool(_ORDER_WORDS.search(question)) if ordered is None else bool(ordered),
    )


def parse_today(value: Any, where: Path) -> dt.date | None:
    """A set's `today:` (YAML reads an unquoted date as one; a string is read as ISO)."""
    if value is None or (isinstance(value, dt.date) and not isinstance(value, dt.datetime)):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        raise GoldenError(
            f"{where}: today must be a date written YYYY-MM-DD, not {value!r}"
        ) from None


def load_golden(path: Path) -> GoldenSet:
    """Read and check a golden file (ids unique, follow-ups after the question they follow)."""
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".jsonl":
            lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
            header: Any = {"questions": [json.loads(line) for _, line in lines]}
            where = [f"{path}:{n}" for n, _ in lines]
        else:
            header = yaml.safe_load(text) or {}
            where = []
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise GoldenError(f"Cannot read the golden set {path}: {exc}") from exc
    if not isinstance(header, dict) or not isinstance(header.get("questions"), list):
        raise GoldenError(f"{path}: expected a mapping with a 'questions' list")
    raws = header.pop("questions")
    where = where or [f"{path} question {n}" for n in range(1, len(raws) + 1)]
    questions = [parse_question(raw, at) for raw, at in zip(raws, where, strict=True)]
    seen: set[str] = set()
    for q in questions:
        if q.id in seen:
            raise GoldenError(f"{path}: the id {q.id!r} is used twice")
        if q.follow_up_of and q.follow_up_of not in seen:
            raise GoldenError(f"{path} ({q.id}): follow_up_of {q.follow_up_of!r} must come earlier")
        seen.add(q.id)
    return GoldenSet(
        tuple(questions),
        warehouse=header.pop("warehouse", None),
        dialect=header.pop("dialect", None),
        today=parse_today(header.pop("today", None), path),
        meta=header,
    )


def dump_golden(golden: GoldenSet, path: Path) -> None:
    """Write `golden` as YAML (or JSONL when `path` ends in .jsonl)."""
    rows = [q.to_dict() for q in golden.questions]
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return
    pairs = (("warehouse", golden.warehouse), ("dialect", golden.dialect), ("today", golden.today))
    head = {k: v for k, v in pairs if v}
    text = yaml.safe_dump({**head, **golden.meta, "questions": rows}, sort_keys=False, width=100)
    path.write_text(text, encoding="utf-8")
