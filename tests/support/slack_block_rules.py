"""Blocks and views checked the way Slack checks them: each block must parse with slack_sdk's
models and survive `to_dict()` (which enforces slack_sdk's field limits) unchanged, and the limits
slack_sdk does not model are checked here (50 blocks a message, one table of at most 100 rows by
20 cells; 100 blocks a view, `private_metadata` 3,000 characters, a plain_text_input's
`max_length` and initial value at most 3,000; a `context_actions` block, in messages only, holds
only feedback and icon buttons, and a feedback_buttons element needs its action_id and both buttons,
each labelled in plain text). Charts are left to `check_chart`."""

from __future__ import annotations

import json
from typing import Any

from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

from tests.support.slack_chart_rules import CHARTS, check_chart
from tests.support.standin_records import Refused

MAX_BLOCKS = 50
TABLE_ROWS = 100
TABLE_CELLS = 20
VIEW_BLOCKS = 100
PRIVATE_METADATA = 3000
INPUT_TEXT = 3000
#: The elements Slack takes in a context_actions block.
CONTEXT_ACTIONS = frozenset({"feedback_buttons", "icon_button"})


def check_view(raw: Any, kind: str) -> dict[str, Any]:
    """Raise `Refused` as Slack would for a view of type `kind`; return the view as a dict."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise Refused("invalid_arguments", "view is not JSON") from exc
    if not isinstance(raw, dict) or raw.get("type") != kind:
        raise Refused("invalid_arguments", f"not a {kind} view")
    blocks = raw.get("blocks") or []
    if not blocks or len(blocks) > VIEW_BLOCKS:
        raise Refused("invalid_arguments", f"{len(blocks)} blocks (1 to {VIEW_BLOCKS})")
    if len(raw.get("private_metadata") or "") > PRIVATE_METADATA:
        raise Refused("invalid_arguments", "private_metadata over 3,000 characters")
    try:
        if View(**raw).to_dict() != raw:
            raise Refused("invalid_arguments", "fields slack_sdk does not know")
    except SlackObjectFormationError as exc:
        raise Refused("invalid_arguments", str(exc)) from exc
    for i, block in enumerate(blocks):
        if block.get("type") == "context_actions":
            raise Refused("invalid_arguments", f"block {i}: context_actions is for messages only")
        element = block.get("element") or {}
        if element.get("type") == "plain_text_input":
            max_length = element.get("max_length", INPUT_TEXT)
            if not 1 <= max_length <= INPUT_TEXT:
                raise Refused("invalid_arguments", f"block {i}: max_length {max_length}")
            if len(element.get("initial_value") or "") > max_length:
                raise Refused("invalid_arguments", f"block {i}: initial_value over max_length")
    check_blocks(blocks, max_blocks=VIEW_BLOCKS)
    return raw


def check_blocks(
    blocks: Any,
    refused_types: set[str] | frozenset[str] = frozenset(),
    *,
    max_blocks: int = MAX_BLOCKS,
) -> None:
    """Raise `Refused` as Slack would for `blocks` (a message's `blocks` argument)."""
    if not isinstance(blocks, list):
        raise Refused("invalid_blocks_format", "blocks is not a JSON array")
    if len(blocks) > max_blocks:
        raise Refused("invalid_blocks", f"{len(blocks)} blocks (at most {max_blocks})")
    tables = 0
    charts = 0
    for i, raw in enumerate(blocks):
        kind = raw.get("type") if isinstance(raw, dict) else None
        if kind in refused_types:
            raise Refused("invalid_blocks", f"block {i}: unsupported {kind}", injected=True)
        if kind == "data_visualization":  # newer than slack_sdk's models: checked by hand
            charts += 1
            try:
                check_chart(raw)
            except ValueError as exc:
                raise Refused("invalid_blocks", f"block {i}: {exc}") from exc
            continue
        try:
            parsed = Block.parse(raw)
            if parsed is None:
                raise Refused("invalid_blocks", f"block {i}: unknown type {kind!r}")
            if parsed.to_dict() != raw:
                raise Refused("invalid_blocks", f"block {i}: fields slack_sdk does not know")
        except (SlackObjectFormationError, TypeError) as exc:  # TypeError: a field missing
            raise Refused("invalid_blocks", f"block {i}: {exc}") from exc
        if kind == "context_actions":
            _check_context_actions(i, raw)
        if kind == "table":
            tables += 1
            rows = raw["rows"]
            if len(rows) > TABLE_ROWS:
                raise Refused("invalid_blocks", f"table of {len(rows)} rows")
            if any(len(row) > TABLE_CELLS for row in rows):
                raise Refused("invalid_blocks", f"a table row over {TABLE_CELLS} cells")
            if len(raw.get("column_settings") or []) > TABLE_CELLS:
                raise Refused("invalid_blocks", "over 20 column settings")
    if tables > 1:
        raise Refused("invalid_blocks", "only one table block per message")
    if charts > CHARTS:
        raise Refused("invalid_blocks", f"{charts} data_visualization blocks (at most {CHARTS})")


def _check_context_actions(i: int, block: dict[str, Any]) -> None:
    """What Slack refuses in a context_actions block that slack_sdk's models let through."""
    for element in block["elements"]:
        kind = element.get("type")
        if kind not in CONTEXT_ACTIONS:
            raise Refused("invalid_blocks", f"block {i}: {kind} in context_actions")
        if kind != "feedback_buttons":
            continue
        if not element.get("action_id"):
            raise Refused("invalid_blocks", f"block {i}: feedback_buttons without an action_id")
        for side in ("positive_button", "negative_button"):
            button = element.get(side)
            if not button or (button.get("text") or {}).get("type") != "plain_text":
                raise Refused("invalid_blocks", f"block {i}: {side} needs plain_text text")
