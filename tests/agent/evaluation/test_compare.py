"""Result comparison: exact and subset matches, order, alternatives, and the report diff."""

from __future__ import annotations

import datetime as dt
import decimal
from dataclasses import replace

from agent.evaluation.compare import Table, best_match, compare
from agent.evaluation.report import build_report, diff, render, render_diff
from agent.evaluation.runner import QuestionResult

GOLD = Table(("region", "revenue"), (("EU", 10.0), ("NA", 20.0)))


def test_names_column_order_row_order_and_number_types_do_not_matter() -> None:
    gen = Table(("total", "name"), ((decimal.Decimal("20.001"), "NA"), (10, "EU")))
    assert compare(GOLD, gen, ordered=False) == "exact"


def test_row_order_matters_when_the_question_asks_for_it() -> None:
    gen = Table(("region", "revenue"), (("NA", 20.0), ("EU", 10.0)))
    assert compare(GOLD, gen, ordered=True) is None
    assert compare(GOLD, gen, ordered=False) == "exact"


def test_extra_columns_are_a_subset_match_but_missing_or_extra_rows_are_not() -> None:
    wider = Table(("region", "revenue", "orders"), (("EU", 10.0, 1), ("NA", 20.0, 2)))
    assert compare(GOLD, wider, ordered=False) == "subset"
    assert compare(GOLD, Table(("region", "revenue"), (("EU", 10.0),)), ordered=False) is None
    assert compare(GOLD, Table(("revenue",), ((10.0,), (20.0,))), ordered=False) is None
    more = Table(("region", "revenue"), (("EU", 10.0), ("NA", 20.0), ("APAC", 1.0)))
    assert compare(GOLD, more, ordered=False) is None


def test_values_must_stay_together_in_their_rows() -> None:
    swapped = Table(("region", "revenue"), (("EU", 20.0), ("NA", 10.0)))
    assert compare(GOLD, swapped, ordered=False) is None


def test_dates_match_midnight_timestamps_and_any_alternative_counts() -> None:
    gold = Table(("month",), ((dt.date(2025, 1, 1),),))
    assert compare(gold, Table(("m",), (("2025-01-01T00:00:00",),)), ordered=False) == "exact"
    share, pct = Table(("s",), ((0.25,),)), Table(("p",), ((25.0,),))
    assert best_match([share, pct], Table(("x",), ((25,),)), ordered=False) == "exact"
    assert best_match([share, pct], Table(("x",), ((2.5,),)), ordered=False) is None


def result(id_: str, status: str, category: str = "lookup") -> QuestionResult:
    return QuestionResult(
        id=id_,
        category=category,
        question=f"question {id_}",
        expect="answer",
        status=status,  # type: ignore[arg-type]
        outcome="answer",
        match="exact" if status == "pass" else None,
        reason="" if status == "pass" else "the values differ from the gold answer",
        sql="SELECT 1",
        message="",
        model_calls=1 if status == "pass" else 2,
        input_tokens=100,
        output_tokens=10,
        latency_s=0.5,
        repairs=0 if status == "pass" else 1,
    )


def test_the_diff_shows_what_got_better_and_worse() -> None:
    old = build_report([result("a", "pass"), result("b", "fail"), result("c", "pass")], {})
    new = build_report([result("a", "fail"), result("b", "pass"), result("d", "pass", "join")], {})
    change = diff(old, new)
    assert change["fixed"] == ["b"] and change["broken"] == ["a"]
    assert change["added"] == ["d"] and change["removed"] == ["c"]
    assert change["accuracy"] == {"old": 0.6667, "new": 0.6667}
    assert change["by_category"]["join"] == {"old": None, "new": 1.0}
    text = render_diff(change)
    assert "Better (now right): b" in text and "Worse (now wrong): a" in text
    summary = render(new)
    assert "Accuracy: 66.7% (2/3" in summary and "[a] question a" in summary


def test_rows_tied_on_the_sort_key_may_come_in_any_order() -> None:
    gold = Table(("city", "n"), (("Oslo", 3), ("Bonn", 2), ("Rome", 2), ("Kyiv", 1)))
    tie_swapped = Table(("city", "n"), (("Oslo", 3), ("Rome", 2), ("Bonn", 2), ("Kyiv", 1)))
    unsorted = Table(("city", "n"), (("Kyiv", 1), ("Rome", 2), ("Bonn", 2), ("Oslo", 3)))
    assert compare(gold, tie_swapped, ordered=True) == "exact"
    assert compare(gold, unsorted, ordered=True) is None


def test_the_summary_counts_in_words_that_agree_with_the_numbers() -> None:
    one = render(build_report([result("a", "pass")], {}))
    assert "Accuracy: 100.0% (1/1 question; 1 exact, 0 subset matches)" in one
    assert "Repairs: none (no question needed a second draft)" in one
    assert "over 0" not in one and "0 questions" not in one
    assert "declined" not in one and "clarified" not in one  # no such questions were asked
    assert "per question: 1.0 model call," in one

    repaired = build_report([result("a", "pass"), result("b", "fail")], {})
    assert "Repairs: 1 repair in 1 question\n" in render(repaired)
    repaired["summary"]["repairs"] = 3
    repaired["summary"]["questions_repaired"] = 2
    assert "Repairs: 3 repairs in 2 questions\n" in render(repaired)


def test_declined_and_clarified_questions_are_counted_per_kind() -> None:
    declined = replace(result("d", "pass"), expect="decline")
    pairs = [("c1", "pass"), ("c2", "fail")]
    unclear = [replace(result(i, status), expect="clarify") for i, status in pairs]
    text = render(build_report([declined, *unclear], {}))
    assert (
        "Rightly declined: 1 of 1 unanswerable question; "
        "rightly clarified: 1 of 2 ambiguous questions\n"
    ) in text


def test_calls_by_node_are_singular_for_one() -> None:
    r = replace(result("a", "pass"), nodes={"generate": {"calls": 1}, "plan": {"calls": 2}})
    assert "(by node: generate 1 call, plan 2 calls)" in render(build_report([r], {}))


def test_a_report_of_no_questions_says_so() -> None:
    text = render(build_report([], {}))
    assert text == "No questions ran: there is nothing to report."
    gold_only = render(build_report([replace(result("g", "gold_error"), repairs=0)], {}))
    assert "Accuracy: no question was scored" in gold_only
    assert "Gold SQL errors: 1 (not scored)" in gold_only
    assert "Repairs" not in gold_only and "0/0" not in gold_only
    assert "  lookup              -  (no question scored)" in gold_only
