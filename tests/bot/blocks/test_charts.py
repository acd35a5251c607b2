"""Native charts (bot/blocks/charts.py): which chart an answer gets, Slack's limits kept for any
data, and the stand-in's check of the `data_visualization` block that the tests rely on; the
PNG fallback's drawing thread and the memory of workspaces that refused the block."""

from __future__ import annotations

import copy
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.outcome import Answer
from bot.blocks import chart
from bot.blocks.attachments import Refusals, render_chart
from tests.support.standin import Refused, check_blocks

REVENUE_BY_REGION = "SELECT region, SUM(amount) AS revenue FROM sales GROUP BY region"


def answer(
    columns: list[str],
    rows: list[list[Any]],
    *,
    sql: str = REVENUE_BY_REGION,
    explanation: str = "Revenue by region.",
    total: int | None = None,
    capped: bool = False,
) -> Answer:
    return Answer(
        question="q", sql=sql, explanation=explanation, tables=[], columns=columns, rows=rows,
        total_rows=len(rows) if total is None else total, capped=capped, elapsed_s=0.1,
        connector="duckdb", approved_by="U1",
    )  # fmt: skip


def block_of(a: Answer) -> dict[str, Any]:
    message = chart(a)
    assert message is not None
    check_blocks(message.blocks)
    [block] = message.blocks
    return block


def breakdown(values: list[Any], **kwargs: Any) -> Answer:
    return answer(["region", "revenue"], [[f"R{i}", v] for i, v in enumerate(values)], **kwargs)


def test_a_time_series_is_a_line_in_time_order() -> None:
    rows = [["2026-03", 3], ["2026-01", 1.5], ["2026-02", 2]]
    block = block_of(answer(["month", "orders"], rows, explanation="Orders by month."))
    assert block["title"] == "Orders by month."
    line = block["chart"]
    assert line["type"] == "line"
    assert line["axis_config"] == {
        "categories": ["2026-01", "2026-02", "2026-03"],
        "x_label": "Month",
        "y_label": "Orders",
    }
    [series] = line["series"]
    assert series["name"] == "Orders"
    assert series["data"] == [
        {"label": "2026-01", "value": 1.5},
        {"label": "2026-02", "value": 2},
        {"label": "2026-03", "value": 3},
    ]


@pytest.mark.parametrize(
    ("moments", "labels"),
    [
        (["2025-01-01T00:00:00", "2026-01-01T00:00:00"], ["2025", "2026"]),
        (["2025-01-01T00:00:00", "2025-02-01T00:00:00"], ["2025-01", "2025-02"]),
        (["2025-01-01", "2025-01-02"], ["2025-01-01", "2025-01-02"]),
        (["2025-01-01 09:30:00", "2025-01-01 10:00:00"], ["2025-01-01 09:30", "2025-01-01 10:00"]),
        (["2025-01-01T09:30:05+00:00", "2025-01-01T09:30:06+00:00"],
         ["2025-01-01 09:30:05", "2025-01-01 09:30:06"]),
    ],
)  # fmt: skip
def test_time_labels_are_as_precise_as_the_data(moments: list[str], labels: list[str]) -> None:
    block = block_of(answer(["at", "n"], [[m, i] for i, m in enumerate(moments)]))
    assert block["chart"]["axis_config"]["categories"] == labels


def test_several_value_columns_are_the_first_six_series_without_a_y_label() -> None:
    columns = ["day", *(f"metric_{i}" for i in range(8))]
    rows = [[f"2026-01-0{d}", *range(8)] for d in (1, 2)]
    line = block_of(answer(columns, rows))["chart"]
    assert [s["name"] for s in line["series"]] == [f"Metric {i}" for i in range(6)]
    assert "y_label" not in line["axis_config"]


def test_a_sum_or_count_of_the_whole_is_a_pie() -> None:
    block = block_of(breakdown([3, 1.5, 2]))
    assert block["chart"] == {
        "type": "pie",
        "segments": [
            {"label": "R0", "value": 3},
            {"label": "R1", "value": 1.5},
            {"label": "R2", "value": 2},
        ],
    }
    counted = "SELECT status, count(*) AS orders FROM orders GROUP BY status ORDER BY orders"
    assert block_of(breakdown([5, 6], sql=counted))["chart"]["type"] == "pie"
    # the gate's row cap (or any LIMIT) that left no row out
    capped = "SELECT r, SUM(a) AS s FROM t GROUP BY r LIMIT 1000"
    assert block_of(breakdown([5, 6], sql=capped))["chart"]["type"] == "pie"
    fetched = "SELECT r, SUM(a) AS s FROM t GROUP BY r FETCH FIRST 3 ROWS ONLY"
    assert block_of(breakdown([5, 6], sql=fetched))["chart"]["type"] == "pie"


@pytest.mark.parametrize(
    ("values", "changes"),
    [
        # not a sum or a count of the whole
        ([1, 2], {"sql": "SELECT region, AVG(amount) AS a FROM sales GROUP BY region"}),
        ([1, 2], {"sql": "SELECT region, SUM(a) / SUM(b) AS m FROM sales GROUP BY region"}),
        ([1, 2], {"sql": "SELECT name, price FROM products"}),
        ([1, 2], {"sql": "SELECT c, COUNT(DISTINCT customer_id) AS n FROM s GROUP BY c"}),
        ([1, 2], {"sql": "SELECT region, SUM(amount) OVER () AS s FROM sales"}),
        ([1, 2], {"sql": "SELECT r, SUM(a) AS s FROM t GROUP BY r ORDER BY s DESC LIMIT 2"}),
        ([1, 2], {"sql": "SELECT r, SUM(a) AS s FROM t GROUP BY r LIMIT 10 OFFSET 5"}),
        ([1, 2], {"sql": "SELECT r, SUM(a) AS s FROM t GROUP BY r LIMIT 50 PERCENT"}),
        ([1, 2], {"sql": "SELECT region, SUM(amount) FROM a UNION ALL SELECT 'x', 1"}),
        ([1, 2], {"sql": "this is not SQL ((("}),
        # not the whole result
        ([1, 2], {"capped": True}),
        ([1, 2], {"total": 3}),
        # not parts: nothing, less than nothing, or more slices than a pie takes
        ([1, 0], {}),
        ([1, -2], {}),
        ([1, 2, 3, 4, 5, 6, 7], {}),
    ],
)
def test_anything_else_is_bars(values: list[Any], changes: dict[str, Any]) -> None:
    bar = block_of(breakdown(values, **changes))["chart"]
    assert bar["type"] == "bar"
    [series] = bar["series"]
    assert [p["value"] for p in series["data"]] == values
    assert bar["axis_config"]["categories"] == [f"R{i}" for i in range(len(values))]


def test_long_texts_are_cut_to_slacks_limits_and_labels_stay_distinct() -> None:
    long = "A very long region name that goes on"
    a = answer(
        ["region_" + "x" * 60, "revenue_" + "y" * 60],
        [[long, 1], [long + " and on", 2], [long, 3], ["", 4]],
        sql="SELECT 1",
        explanation="  Revenue\nby region, " + "and much more " * 10,
    )
    block = block_of(a)
    assert len(block["title"]) == 50 and block["title"].startswith("Revenue by region, and")
    bar = block["chart"]
    assert bar["axis_config"]["categories"] == [
        "A very long region …",
        "A very long reg… (2)",
        "A very long reg… (3)",
        "(empty)",
    ]
    assert len(bar["series"][0]["name"]) == 20
    assert len(bar["axis_config"]["x_label"]) == 50 and len(bar["axis_config"]["y_label"]) == 50


def test_an_empty_explanation_still_has_a_title() -> None:
    assert block_of(breakdown([1, 2], explanation=" \n"))["title"] == "Result"


@pytest.mark.parametrize(
    "a",
    [
        # more points than a series holds: the PNG instead
        answer(["day", "n"], [[f"2026-01-{d:02}", d] for d in range(1, 22)]),
        # a missing value: the PNG instead (a native chart cannot leave a point out)
        answer(["day", "a", "b"], [["2026-01-01", 1, None], ["2026-01-02", 2, 3]]),
        breakdown([1, None]),
        # no chart at all
        answer(["n"], [[1], [2]]),
        answer(["region", "revenue"], [["EU", 1]]),
    ],
)
def test_no_block_when_the_data_does_not_fit_or_has_no_chart(a: Answer) -> None:
    assert chart(a) is None


def test_twenty_points_fit() -> None:
    a = answer(["day", "n"], [[f"2026-01-{d:02}", d] for d in range(1, 21)])
    assert len(block_of(a)["chart"]["series"][0]["data"]) == 20


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    names=st.lists(st.text(min_size=0, max_size=80), min_size=2, max_size=9),
    labels=st.lists(st.text(max_size=40), min_size=2, max_size=22),
    numbers=st.lists(
        st.one_of(st.integers(-(10**12), 10**12), st.floats(allow_nan=False), st.none()),
        min_size=22 * 8,
        max_size=22 * 8,
    ),
    dates=st.booleans(),
    explanation=st.text(max_size=200),
)
def test_any_answer_gets_a_valid_block_or_none(
    names: list[str],
    labels: list[str],
    numbers: list[Any],
    dates: bool,
    explanation: str,
) -> None:
    width = len(names) if dates else 2
    rows = [
        [
            f"2026-{i % 12 + 1:02}-{i // 12 + 1:02}" if dates else label,
            *numbers[i * 8 : i * 8 + width - 1],
        ]
        for i, label in enumerate(labels)
    ]
    message = chart(answer(names[:width], rows, explanation=explanation))
    if message is not None:
        check_blocks(message.blocks)


def valid_line() -> dict[str, Any]:
    return block_of(answer(["month", "orders"], [["2026-01", 1], ["2026-02", 2]]))


def valid_pie() -> dict[str, Any]:
    return block_of(breakdown([1, 2]))


def broken(block: dict[str, Any], change: Any) -> dict[str, Any]:
    block = copy.deepcopy(block)
    change(block)
    return block


@pytest.mark.parametrize(
    ("block", "why"),
    [
        (broken(valid_line(), lambda b: b.update(subtitle="x")), "unknown fields"),
        (broken(valid_line(), lambda b: b["chart"].update(colors=["red"])), "unknown fields"),
        (broken(valid_line(), lambda b: b.update(title="x" * 51)), "title of 51"),
        (broken(valid_line(), lambda b: b.pop("title")), "lacks"),
        (broken(valid_line(), lambda b: b["chart"].update(type="scatter")), "chart type"),
        (
            broken(valid_line(), lambda b: b["chart"]["series"].extend(
                [dict(b["chart"]["series"][0], name=f"s{i}") for i in range(6)])),
            "series must be a list of 1 to 6",
        ),
        (
            broken(valid_line(), lambda b: b["chart"]["series"].append(b["chart"]["series"][0])),
            "repeated series names",
        ),
        (
            broken(valid_line(), lambda b: b["chart"]["series"][0]["data"].pop()),
            "not the axis categories",
        ),
        (
            broken(valid_line(), lambda b: b["chart"]["series"][0]["data"][0].update(value="1")),
            "not a finite number",
        ),
        (
            broken(valid_line(), lambda b: b["chart"]["series"][0]["data"][0].update(value=True)),
            "not a finite number",
        ),
        (
            broken(valid_line(), lambda b: b["chart"]["axis_config"].update(y_label="y" * 51)),
            "y_label of 51",
        ),
        (
            broken(valid_line(), lambda b: b["chart"]["axis_config"]["categories"].__setitem__(
                0, "c" * 21)),
            "category of 21",
        ),
        (
            broken(valid_pie(), lambda b: b["chart"]["segments"].extend(
                [{"label": f"x{i}", "value": 1} for i in range(5)])),
            "segments must be a list of 1 to 6",
        ),
        (
            broken(valid_pie(), lambda b: b["chart"]["segments"][0].update(value=0)),
            "not above 0",
        ),
        (
            broken(valid_pie(), lambda b: b["chart"]["segments"][0].update(label="")),
            "segment label is not a non-empty string",
        ),
    ],
)  # fmt: skip
def test_the_standin_refuses_what_slack_documents_as_invalid(
    block: dict[str, Any], why: str
) -> None:
    with pytest.raises(Refused, match=why) as refused:
        check_blocks([block])
    assert refused.value.error == "invalid_blocks"


def test_the_standin_takes_two_charts_a_message_and_refuses_a_third() -> None:
    check_blocks([valid_line(), valid_pie()])
    with pytest.raises(Refused, match="3 data_visualization blocks"):
        check_blocks([valid_line(), valid_pie(), valid_line()])


def test_the_standin_can_play_a_workspace_without_the_block() -> None:
    with pytest.raises(Refused, match="unsupported data_visualization") as refused:
        check_blocks([valid_pie()], {"data_visualization"})
    assert refused.value.injected


def test_a_refusal_is_remembered_for_a_while_per_workspace() -> None:
    now = [1000.0]
    refusals = Refusals(refused_for_s=3600, clock=lambda: now[0])
    assert not refusals.refused("T1")
    assert refusals.note("T1") is True  # news: the caller logs it
    assert refusals.note("T1") is False  # a second answer refused at the same time: no log
    assert refusals.refused("T1") and not refusals.refused("T2")
    now[0] += 3599
    assert refusals.refused("T1")
    now[0] += 1
    assert not refusals.refused("T1")  # asked again: the workspace may have the block now
    assert refusals.note("T1") is True


@pytest.mark.slow
def test_the_png_fallback_is_drawn_on_one_thread() -> None:
    pngs: list[Any] = []
    workers = [
        threading.Thread(target=lambda: pngs.append(render_chart(breakdown([1, None]))))
        for _ in range(3)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(pngs) == 3
    assert all(png is not None and png.content.startswith(b"\x89PNG") for png in pngs)
    drawers = [t.name for t in threading.enumerate() if t.name.startswith("querybot-chart")]
    assert len(drawers) == 1
    assert render_chart(answer(["n"], [[1], [2]])) is None
