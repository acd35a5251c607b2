"""What the load benchmark asks and what its scripted model answers: the demo golden set's
answerable first questions and their gold SQL, and, with --faults, replies that fail and a query
that never ends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.evaluation.golden import load_golden

GOLDEN = Path(__file__).resolve().parents[1] / "evals" / "demo.yaml"
#: --faults: a rate limit the agent's retry absorbs, and a bad key it tells at once.
PASSING_FAULT = {"__error__": "Resource has been exhausted (e.g. check quota).", "status": 429}
PERMANENT_FAULT = {"__error__": "API key not valid. Please pass a valid API key.", "status": 401}
#: --faults: a query that never ends on the demo warehouse, stopped at FAULT_TIMEOUT_S.
NEVER_ENDS = (
    "SELECT COUNT(*) AS n FROM demo.main.order_items AS a"
    " CROSS JOIN demo.main.order_items AS b CROSS JOIN demo.main.order_items AS c"
)
FAULT_TIMEOUT_S = 2


def questions() -> list[tuple[str, str]]:
    """(question, gold SQL) of the demo golden set's answerable first questions: realistic
    questions whose scripted reply the gate accepts as it is (one model call each)."""
    golden = load_golden(GOLDEN)
    return [
        (q.question, q.gold[0])
        for q in golden.questions
        if q.expect == "answer" and not q.follow_up_of
    ]


def sql_line(sql: str, delay: float = 0) -> dict[str, Any]:
    line: dict[str, Any] = {"kind": "sql", "explanation": "Answers the question.", "sql": sql}
    if delay:
        line["__delay__"] = delay
    return line


def asked(
    count: int, delay: float = 0, faults: float = 0
) -> tuple[list[str], list[dict[str, Any]]]:
    """`count` questions of the golden set (again from the top when more are wanted) and the
    scripted model's replies to them, each taking `delay` seconds; with `faults`, that share of
    the replies fails (alternately PASSING_FAULT, which takes one more reply, and
    PERMANENT_FAULT) and that share of the SQL is NEVER_ENDS."""
    picked = [questions()[i % len(questions())] for i in range(count)]
    every = round(1 / faults) if faults else 0
    script: list[dict[str, Any]] = []
    for i, (_, sql) in enumerate(picked):
        if every and i % every == every // 2:
            sql = NEVER_ENDS
        if every and i % every == 0:
            if i // every % 2:
                script.append(PERMANENT_FAULT)
                continue
            script.append(PASSING_FAULT)  # the retry takes the next line
        script.append(sql_line(sql, delay))
    return [q for q, _ in picked], script
