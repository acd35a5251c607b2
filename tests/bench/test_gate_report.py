"""The gate report's sections, on small inputs: CI does not run the whole report (its checks are
the gate tests), so these keep each section printing its table and reporting what fails."""

from __future__ import annotations

import pytest

from bench import gate_report


def test_the_catalogue_and_the_refusal_classes_report_no_failure(
    capsys: pytest.CaptureFixture[str],
) -> None:
    failures: list[str] = []
    gate_report.catalogue(failures)
    gate_report.refusal_classes(failures)
    out = capsys.readouterr().out
    assert failures == []
    assert "| known (canary tables) | 0 |" in out
    assert "| unknown (safety rules only) | 0 |" in out
    assert "`functions.sql`" in out


def test_canaries_report_a_statement_that_changes_a_table(
    capsys: pytest.CaptureFixture[str],
) -> None:
    failures: list[str] = []
    accepted = {"duckdb": ["SELECT id, name FROM customers"], "sqlite": ["DELETE FROM customers"]}
    gate_report.canaries(accepted, False, failures)
    out = capsys.readouterr().out
    assert [f.partition(" ")[0] for f in failures] == ["SQLite"]
    assert "| DuckDB | 1 |" in out
