"""`querybot eval --min-accuracy X` as a team's CI runs it: exit 1 below X with a line that says
so, 0 at X; and `--out` writes the report where it is told and nothing anywhere else."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.evaluation.golden import load_golden
from bot.cli import main
from tests.agent.evaluation.conftest import reply_for
from tests.support.cli_process import demo_env, run_querybot

#: Two questions: the script answers the first with its gold SQL, the second wrongly (50%).
HALF_RIGHT = """warehouse: demo
questions:
  - id: price
    category: lookup
    question: What is the list price of the Wireless Earbuds Pro?
    gold: SELECT list_price FROM products WHERE product_name = 'Wireless Earbuds Pro'
  - id: sku
    category: lookup
    question: Which product has the SKU EL-003?
    gold: SELECT product_name FROM products WHERE sku = 'EL-003'
"""


def half_right(folder: Path) -> tuple[Path, Path]:
    """The two-question set and a script that gets one of them right, in `folder`."""
    golden_file = folder / "half.yaml"
    golden_file.write_text(HALF_RIGHT)
    right, wrong = load_golden(golden_file).questions
    script = folder / "script.jsonl"
    script.write_text(reply_for(right) + "\n" + reply_for(wrong, "SELECT 'Desk Lamp'") + "\n")
    return golden_file, script


@pytest.mark.slow
def test_below_the_threshold_the_process_fails_and_writes_only_the_report(
    tmp_path: Path,
) -> None:
    given, cwd, out = tmp_path / "given", tmp_path / "cwd", tmp_path / "reports" / "ci.json"
    given.mkdir()
    cwd.mkdir()
    golden_file, script = half_right(given)
    env = demo_env(
        tmp_path / "data", QUERYBOT_MODEL=f"scripted:{script}", QUERYBOT_PROFILE_VALUES="off"
    )
    argv = ["eval", str(golden_file), "--out", str(out), "--min-accuracy", "60%"]
    done = run_querybot(argv, cwd=cwd, env=env)
    assert done.returncode == 1, done.stderr
    assert "Accuracy: 50.0% (1/2" in done.stdout
    said = done.stderr.strip().splitlines()[-1]
    assert said == "querybot eval: accuracy 50.0% (1/2) is below --min-accuracy 60.0%: FAILED"
    assert "Traceback" not in done.stderr
    assert list(cwd.iterdir()) == [], "nothing is written in the working directory"
    assert list(out.parent.iterdir()) == [out], "the report, and nothing beside it"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cwd", "data", "given", "reports"]


@pytest.mark.slow
def test_at_the_threshold_eval_passes_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    golden_file, script = half_right(tmp_path)
    monkeypatch.setenv("QUERYBOT_MODEL", f"scripted:{script}")
    monkeypatch.setenv("QUERYBOT_WAREHOUSE", "demo")
    monkeypatch.setenv("QUERYBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("QUERYBOT_PROFILE_VALUES", "off")
    monkeypatch.delenv("QUERYBOT_CONFIG", raising=False)
    assert main(["eval", str(golden_file), "--min-accuracy", "0.5"]) == 0
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert said == "querybot eval: accuracy 50.0% (1/2) meets --min-accuracy 50.0%: passed"


def test_a_folder_as_out_is_refused_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reports").mkdir()
    # no model is set: the refusal comes before the model (and the warehouse) would be needed
    monkeypatch.delenv("QUERYBOT_MODEL", raising=False)
    monkeypatch.setenv("QUERYBOT_DATA_DIR", str(tmp_path / "data"))
    assert main(["eval", "missing.yaml", "--out", "reports"]) == 2
    (said,) = capsys.readouterr().err.strip().splitlines()
    assert said == (
        "querybot eval: --out reports is a folder: name the report's file, "
        "for example --out reports/report.json"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["reports"]


@pytest.mark.slow
def test_with_several_configurations_each_is_held_to_it_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    golden_file, script = half_right(tmp_path)
    right, wrong = load_golden(golden_file).questions
    # the second configuration gets both right: the replies are shared, in order
    with script.open("a") as more:
        more.write(reply_for(right) + "\n" + reply_for(wrong) + "\n")
    monkeypatch.setenv("QUERYBOT_MODEL", f"scripted:{script}")
    monkeypatch.setenv("QUERYBOT_WAREHOUSE", "demo")
    monkeypatch.setenv("QUERYBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("QUERYBOT_PROFILE_VALUES", "off")
    monkeypatch.delenv("QUERYBOT_CONFIG", raising=False)
    configurations = ["--strategies", "none", "--strategies", "remember_failures"]
    assert main(["eval", str(golden_file), *configurations, "--min-accuracy", "75%"]) == 1
    said = capsys.readouterr().err.strip().splitlines()[-2:]
    assert said == [
        "querybot eval: accuracy of --strategies none 50.0% (1/2) is below --min-accuracy "
        "75.0%: FAILED",
        "querybot eval: accuracy of --strategies remember_failures 100.0% (2/2) meets "
        "--min-accuracy 75.0%: passed",
    ]
