"""Golden files: both formats, threads of follow-ups, and mistakes named with their question."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.evaluation.golden import GoldenError, GoldenSet, dump_golden, load_golden


def write_jsonl(path: Path, *rows: dict[str, object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_jsonl_and_yaml_round_trip_with_threads(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "set.jsonl",
        {"id": "a", "category": "c", "question": "Sort the regions", "gold": "SELECT 1"},
        {"id": "b", "category": "c", "question": "Why?", "expect": "clarify"},
        {
            "id": "c",
            "category": "c",
            "question": "And more?",
            "gold": ["SELECT 2", "SELECT 3"],
            "follow_up_of": "a",
        },
        {"id": "d", "category": "c", "question": "Then?", "gold": "SELECT 4", "follow_up_of": "c"},
    )
    golden = load_golden(path)
    assert [[q.id for q in chain] for chain in golden.chains()] == [["a", "c", "d"], ["b"]]
    assert golden.questions[0].ordered and not golden.questions[2].ordered
    assert golden.questions[2].gold == ("SELECT 2", "SELECT 3")
    dump_golden(GoldenSet(golden.questions, warehouse="demo"), tmp_path / "set.yaml")
    again = load_golden(tmp_path / "set.yaml")
    assert again.questions == golden.questions and again.warehouse == "demo"


@pytest.mark.parametrize(
    ("rows", "problem"),
    [
        ([{"id": "a", "category": "c", "question": "q"}], "(a): a question expecting an answer"),
        ([{"id": "a", "category": "c", "question": "q", "expect": "maybe"}], "expect must be"),
        ([{"id": "a", "question": "q", "gold": "SELECT 1"}], "missing category"),
        (
            [
                {"id": "a", "category": "c", "question": "q", "gold": "SELECT 1"},
                {"id": "a", "category": "c", "question": "r", "gold": "SELECT 1"},
            ],
            "'a' is used twice",
        ),
        (
            [{"id": "a", "category": "c", "question": "q", "gold": "S", "follow_up_of": "z"}],
            "follow_up_of 'z' must come earlier",
        ),
    ],
)
def test_mistakes_name_the_question(
    tmp_path: Path, rows: list[dict[str, object]], problem: str
) -> None:
    with pytest.raises(GoldenError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        load_golden(write_jsonl(tmp_path / "bad.jsonl", *rows))
