"""Views: the Edit SQL modal.

Views are checked like messages: slack_sdk's `View` validates title, blocks and
`private_metadata`; what it does not model (a plain_text_input's `max_length` and initial value)
is checked here.
"""

from __future__ import annotations

import json
from typing import Any

from slack_sdk.models.blocks import InputBlock, PlainTextInputElement
from slack_sdk.models.views import View

from agent.outcome import Proposal
from bot.blocks.base import context, cut

EDIT_VIEW = "edit_sql"
EDIT_BLOCK = "edit_sql_block"
EDIT_INPUT = "edit_sql_input"
#: Slack's limit on a plain_text_input's text (and so on SQL editable in a modal).
INPUT_TEXT = 3000
METADATA = 3000


def edit_modal(prop: Proposal) -> dict[str, Any]:
    """The modal to edit `prop`'s SQL. Its metadata holds only the proposal id and the hash of
    the SQL it shows (the submission claims the proposal only while that is still its SQL).

    The caller checks `len(prop.sql) <= INPUT_TEXT` first: longer SQL cannot be shown in full.
    """
    if len(prop.sql) > INPUT_TEXT:
        raise ValueError(f"SQL of {len(prop.sql)} characters does not fit a text input")
    explanation = cut(prop.explanation.strip() or "Proposed query", 150)
    note = (
        "The edited SQL passes the same checks as the model's and comes back as a new proposal; "
        "nothing runs until someone approves it."
    )
    view = View(
        type="modal",
        callback_id=EDIT_VIEW,
        title="Edit SQL",
        submit="Check edit",
        close="Cancel",
        private_metadata=edit_metadata(prop.proposal_id, prop.sql_sha256),
        blocks=[
            context(note),
            InputBlock(
                block_id=EDIT_BLOCK,
                label=explanation,
                element=PlainTextInputElement(
                    action_id=EDIT_INPUT,
                    multiline=True,
                    initial_value=prop.sql,
                    max_length=INPUT_TEXT,
                ),
            ),
        ],
    )
    return view.to_dict()


def edit_metadata(proposal_id: str, sql_sha256: str) -> str:
    metadata = json.dumps({"proposal_id": proposal_id, "sql_sha256": sql_sha256})
    if len(metadata) > METADATA:
        raise ValueError("private_metadata over 3,000 characters")
    return metadata


def edited_proposal(private_metadata: str) -> tuple[str, str]:
    """(proposal id, SQL hash) an Edit SQL modal was opened for (("", "") when the metadata is
    not ours)."""
    try:
        parsed = json.loads(private_metadata or "{}")
        pid, sha = parsed.get("proposal_id", ""), parsed.get("sql_sha256", "")
    except (json.JSONDecodeError, AttributeError):
        return "", ""
    return (pid, sha) if isinstance(pid, str) and isinstance(sha, str) else ("", "")
