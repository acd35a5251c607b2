"""What a Web API call the stand-in refuses answers, for the stand-in's tests."""

from __future__ import annotations

from typing import Any

import pytest
from slack_sdk.errors import SlackApiError


def error(call: Any, **kwargs: Any) -> str:
    """The `error` Slack's answer to `call(**kwargs)` names; fails when the call succeeds."""
    with pytest.raises(SlackApiError) as info:
        call(**kwargs)
    return str(info.value.response["error"])
