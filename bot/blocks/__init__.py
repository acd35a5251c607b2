"""Block Kit for each thing the bot says, built with slack_sdk's models.

Every builder is pure and returns a `Message` (or a view) whose blocks are already validated:
slack_sdk's `to_dict()` checks its field limits, and `finish` checks the ones it does not model
(50 blocks a message, one table of at most 100 rows and 20 columns). Text from the model, the
warehouse or a user is escaped for mrkdwn and cut to fit, so nothing such a text holds can break
a message. The builders live in modules by subject; this package names them in one place.
"""

from bot.blocks.base import (
    FALLBACK_TEXT,
    PROPOSED_SQL_FILE,
    RAN_SQL_FILE,
    Message,
    code_pieces,
    cut,
    escape,
    escaped,
    mention,
    sql_cut,
)
from bot.blocks.charts import chart
from bot.blocks.explain import EXPLAIN_ACTION, explanation, unknown_explanation
from bot.blocks.followups import FOLLOW_UP_PREFIX, asked, follow_up_of
from bot.blocks.messages import (
    APPROVE_ACTION,
    CANCEL_ACTION,
    EDIT_ACTION,
    EXAMPLE,
    REJECT_ACTION,
    SUPERSEDED,
    Audience,
    approved_by,
    cancelled,
    cancelled_by,
    clarify,
    decided,
    edited_by,
    failure,
    help_message,
    notice,
    proposal,
    refused,
    rejected_by,
    running,
    running_card,
    sent_privately,
    working,
    writing,
)
from bot.blocks.results import CELL_TEXT, result
from bot.blocks.views import edit_modal
from bot.cells import cell_text

__all__ = [
    "APPROVE_ACTION",
    "CANCEL_ACTION",
    "CELL_TEXT",
    "EDIT_ACTION",
    "EXAMPLE",
    "EXPLAIN_ACTION",
    "FALLBACK_TEXT",
    "FOLLOW_UP_PREFIX",
    "PROPOSED_SQL_FILE",
    "RAN_SQL_FILE",
    "REJECT_ACTION",
    "SUPERSEDED",
    "Audience",
    "Message",
    "approved_by",
    "asked",
    "cancelled",
    "cancelled_by",
    "cell_text",
    "chart",
    "clarify",
    "code_pieces",
    "cut",
    "decided",
    "edit_modal",
    "edited_by",
    "escape",
    "escaped",
    "explanation",
    "failure",
    "follow_up_of",
    "help_message",
    "mention",
    "notice",
    "proposal",
    "refused",
    "rejected_by",
    "result",
    "running",
    "running_card",
    "sent_privately",
    "sql_cut",
    "unknown_explanation",
    "working",
    "writing",
]
