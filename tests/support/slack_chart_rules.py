"""Slack's rules for `data_visualization` blocks, which slack_sdk does not model."""

from __future__ import annotations

import math
from typing import Any

#: data_visualization: blocks a message (as slack-morphism reads Slack's page), title and axis
#: labels, segment/series/category labels, series or segments a chart, points a series.
CHARTS = 2
CHART_TITLE = 50
CHART_LABEL = 20
CHART_SERIES = 6
CHART_POINTS = 20


def check_chart(block: dict[str, Any]) -> None:
    """Raise ValueError where a `data_visualization` block breaks Slack's rules: its reference
    page (https://docs.slack.dev/reference/block-kit/blocks/data-visualization-block) for the
    block, the pie and the series counts; the slack-messaging crate's reading of that page for
    a series' points and the axis (our copy of the page stops there)."""
    _fields(block, {"type", "title", "chart"}, {"block_id"}, "block")
    _text(block["title"], CHART_TITLE, "title")
    if "block_id" in block:
        _text(block["block_id"], 255, "block_id")
    chart = block["chart"]
    kind = chart.get("type") if isinstance(chart, dict) else None
    if kind == "pie":
        _fields(chart, {"type", "segments"}, set(), "pie")
        segments = _items(chart["segments"], CHART_SERIES, "segments")
        for segment in segments:
            _fields(segment, {"label", "value"}, set(), "segment")
            _text(segment["label"], CHART_LABEL, "segment label")
            if _number(segment["value"]) <= 0:
                raise ValueError(f"segment value {segment['value']!r} is not above 0")
        return
    if kind not in {"bar", "area", "line"}:
        raise ValueError(f"chart type {kind!r} (pie, bar, area or line)")
    _fields(chart, {"type", "series", "axis_config"}, set(), kind)
    axis = chart["axis_config"]
    _fields(axis, {"categories"}, {"x_label", "y_label"}, "axis_config")
    categories = _items(axis["categories"], CHART_POINTS, "categories")
    for category in categories:
        _text(category, CHART_LABEL, "category")
    if len(set(categories)) < len(categories):
        raise ValueError("repeated categories")
    for key in ("x_label", "y_label"):
        if key in axis:
            _text(axis[key], CHART_TITLE, key)
    series = _items(chart["series"], CHART_SERIES, "series")
    names = []
    for one in series:
        _fields(one, {"name", "data"}, set(), "series")
        names.append(_text(one["name"], CHART_LABEL, "series name"))
        points = _items(one["data"], CHART_POINTS, "data")
        for point in points:
            _fields(point, {"label", "value"}, set(), "data point")
            _number(point["value"])
        if [p["label"] for p in points] != categories:
            raise ValueError(f"series {one['name']!r}: labels are not the axis categories")
    if len(set(names)) < len(names):
        raise ValueError("repeated series names")


def _fields(value: Any, required: set[str], optional: set[str], what: str) -> None:
    if not isinstance(value, dict):
        raise ValueError(f"{what} is not an object")
    if missing := required - value.keys():
        raise ValueError(f"{what} lacks {sorted(missing)}")
    if unknown := value.keys() - required - optional:
        raise ValueError(f"{what} has unknown fields {sorted(unknown)}")


def _text(value: Any, limit: int, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} is not a non-empty string")
    if len(value) > limit:
        raise ValueError(f"{what} of {len(value)} characters (at most {limit})")
    return value


def _items(value: Any, limit: int, what: str) -> list[Any]:
    if not isinstance(value, list) or not 1 <= len(value) <= limit:
        raise ValueError(f"{what} must be a list of 1 to {limit}")
    return value


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"value {value!r} is not a finite number")
    return value
