"""Reading the text of a Slack message as the question a person typed."""

from __future__ import annotations

import re


def question_text(text: str, bot_user_id: str | None) -> str:
    """`text` without the bot's own mention, with Slack's `&amp;`, `&lt;`, `&gt;` undone."""
    if bot_user_id:
        text = re.sub(rf"<@{re.escape(bot_user_id)}(\|[^>]*)?>", " ", text)
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return text.strip()


def mentions_user(text: str, user_id: str | None) -> bool:
    return bool(user_id) and f"<@{user_id}" in text
