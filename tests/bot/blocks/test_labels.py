"""Which kind each answer is, where a warehouse has metric definitions: the Slack card, the
answer's sources line and the terminal say "governed: metric ..." (with the definitions) or
"ad hoc SQL"; a warehouse without metrics shows neither."""

from __future__ import annotations

import json
from dataclasses import replace

from agent.outcome import Answer, Proposal
from bot.blocks import proposal, result
from bot.commands.terminal import answer_text, proposal_text

GOVERNED = Proposal(
    proposal_id="p1",
    question="revenue by month",
    sql="SELECT 1",
    explanation="Revenue by month.",
    tables=["shop.main.fct_orders"],
    sql_sha256="0" * 64,
    label="governed: metric revenue, by month",
    definitions=["revenue (simple: order_total): What customers paid."],
)
ANSWER = Answer(
    question="revenue by month",
    sql="SELECT 1",
    explanation="Revenue by month.",
    tables=["shop.main.fct_orders"],
    columns=["metric_time__month", "revenue"],
    rows=[["2024-01-01", 250], ["2024-02-01", 380]],
    total_rows=2,
    capped=False,
    elapsed_s=0.01,
    connector="duckdb",
    approved_by="U2",
    label="governed: metric revenue, by month",
)


def test_the_card_names_the_kind_and_the_definitions() -> None:
    blocks = json.dumps(proposal(GOVERNED, requested_by="U1").blocks)
    assert "*governed: metric revenue, by month*" in blocks
    assert "revenue (simple: order_total): What customers paid." in blocks
    ad_hoc = json.dumps(proposal(replace(GOVERNED, label="ad hoc SQL", definitions=[]),
                                 requested_by="U1").blocks)  # fmt: skip
    assert "*ad hoc SQL*" in ad_hoc
    plain = json.dumps(
        proposal(replace(GOVERNED, label="", definitions=[]), requested_by="U1").blocks
    )
    assert "governed" not in plain and "ad hoc" not in plain


def test_the_answer_says_which_kind_it_is() -> None:
    footer = result(ANSWER, display_rows=10).blocks[-1]
    assert "governed: metric revenue, by month" in json.dumps(footer)
    assert "governed" not in json.dumps(result(replace(ANSWER, label=""), display_rows=10).blocks)


def test_the_terminal_says_it_too() -> None:
    text = proposal_text(GOVERNED)
    assert "Kind: governed: metric revenue, by month" in text
    assert "Definition: revenue (simple: order_total)" in text
    assert "· governed: metric revenue, by month" in answer_text(ANSWER, 10)


def test_old_proposals_without_a_label_still_load() -> None:
    stored = GOVERNED.to_dict()
    del stored["label"], stored["definitions"]
    assert Proposal.from_dict(stored).label == ""
