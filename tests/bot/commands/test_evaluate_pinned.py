"""`querybot eval` on a set that pins its day: the demo is built for that day, the report says
the day, and a question whose gold answer is empty there is flagged when the set is run."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest

from agent.evaluation.golden import GoldenSet, dump_golden
from bot.cli import main
from connectors.demo.build import last_day_of
from tests.agent.evaluation.conftest import reply_for

RELATIVE = ("date-04", "date-11")  # "last month", "this year"


def run_pinned(
    tmp_path: Path,
    demo_golden: GoldenSet,
    monkeypatch: pytest.MonkeyPatch,
    warehouse: str,
    today: dt.date,
) -> dict:
    chosen = tuple(q for q in demo_golden.questions if q.id in RELATIVE)
    dump_golden(GoldenSet(chosen, warehouse=warehouse, today=today), tmp_path / "pinned.yaml")
    script = tmp_path / "gold.jsonl"
    script.write_text("\n".join(reply_for(q) for q in chosen) + "\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("QUERYBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("QUERYBOT_PROFILE_VALUES", "off")
    monkeypatch.setenv("QUERYBOT_MODEL", f"scripted:{script}")
    out = tmp_path / "report.json"
    assert main(["eval", str(tmp_path / "pinned.yaml"), "--out", str(out)]) == 0
    report: dict = json.loads(out.read_text())
    return report


@pytest.mark.slow
def test_the_demo_is_built_for_the_sets_day(
    tmp_path: Path, demo_golden: GoldenSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = run_pinned(tmp_path, demo_golden, monkeypatch, "demo", dt.date(2027, 6, 1))
    assert last_day_of(tmp_path / "data" / "demo.duckdb") == dt.date(2027, 5, 31)
    assert report["meta"]["today"] == "2027-06-01"
    assert "empty_gold" not in report["meta"]
    assert report["summary"]["accuracy"] == 1.0
    assert not any(q["gold_empty"] for q in report["questions"])


@pytest.mark.slow
def test_a_gold_answer_empty_on_the_sets_day_is_flagged(
    tmp_path: Path,
    demo_golden: GoldenSet,
    demo_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A fixed warehouse ending 2026-10-31, asked in mid-2027: both periods are empty."""
    fixed = Path(shutil.copy(demo_file, tmp_path / "demo.duckdb"))
    report = run_pinned(tmp_path, demo_golden, monkeypatch, f"duckdb:{fixed}", dt.date(2027, 6, 1))
    err = capsys.readouterr().err
    assert "warning: the gold answer is empty for date-04, date-11" in err
    assert report["meta"]["empty_gold"] == "date-04, date-11"
    assert [q["gold_empty"] for q in report["questions"]] == [True, True]
