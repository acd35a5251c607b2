"""The status and streamed-steps benchmark's short form, so the report keeps running: the real
bot process on the stand-in, three questions with the instant model, every step seen."""

from __future__ import annotations

import pytest

from bench import slack_surface_report


@pytest.mark.slow
def test_the_short_report_sees_every_step_of_each_question(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert slack_surface_report.main(["--short"]) == 0
    out = capsys.readouterr().out
    assert "PROBLEM" not in out
    lines = out.splitlines()
    for _, what in slack_surface_report.STEPS:
        line = next(line for line in lines if line.startswith(f"mention -> {what}: "))
        assert line.endswith("(n=3)") and "median" in line, line
