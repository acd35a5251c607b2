"""What a failed model call means for the person waiting, and whether calling again may help.

Providers report the same conditions with their own exception types; LangChain gives them common
bases (`langchain_core.exceptions.ModelError` and its subclasses, each with `is_retryable`), and
langchain-google-genai >= 4 raises them: an HTTP 429 from Gemini (quota or rate limit) is a
`GoogleRateLimitError` (a `ModelRateLimitError`), a 401 a `GoogleAuthenticationError`, a 403 a
`GooglePermissionDeniedError`, a 5xx a `GoogleAPIError` (a `ModelAPIError`). A request timeout
surfaces from the HTTP library (`httpx.TimeoutException`), not as a `ModelError`, so it is
classified here too. Anything else is a plain failure, not retried.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from langchain_core.exceptions import (
    ModelAPIError,
    ModelAuthenticationError,
    ModelConnectionError,
    ModelError,
    ModelPermissionDeniedError,
    ModelRateLimitError,
    ModelTimeoutError,
)

from agent.model.providers import ScriptExhausted
from connectors.units import counted


class ModelFault(StrEnum):
    """Why a model call failed, as far as the bot needs to know."""

    RATE_LIMITED = "rate_limited"  # 429: quota exhausted or too many requests
    BAD_KEY = "bad_key"  # 401 / 403: the key is wrong, revoked or lacks access
    TIMEOUT = "timeout"  # no answer within the request timeout
    UNAVAILABLE = "unavailable"  # 5xx or the provider cannot be reached
    OTHER = "other"


def _timeout_types() -> tuple[type[BaseException], ...]:
    try:
        import httpx
    except ImportError:  # no provider that uses httpx is installed
        return (TimeoutError, ModelTimeoutError)
    return (TimeoutError, ModelTimeoutError, httpx.TimeoutException)


def classify(exc: BaseException) -> ModelFault:
    """The fault behind `exc`, a model call's exception."""
    if isinstance(exc, ModelRateLimitError):
        return ModelFault.RATE_LIMITED
    if isinstance(exc, ModelAuthenticationError | ModelPermissionDeniedError):
        return ModelFault.BAD_KEY
    if isinstance(exc, _timeout_types()):
        return ModelFault.TIMEOUT
    if isinstance(exc, ModelAPIError | ModelConnectionError):
        return ModelFault.UNAVAILABLE
    return ModelFault.OTHER


def is_retryable(exc: BaseException) -> bool:
    """Whether the same request may succeed a little later (for `Runnable.with_retry`)."""
    if isinstance(exc, ModelError):
        return exc.is_retryable
    return classify(exc) is ModelFault.TIMEOUT


def user_message(exc: BaseException, *, attempts: int, problems: Sequence[str] = ()) -> str:
    """What to tell the thread when the model failed for good after `attempts` calls; when it
    failed while correcting a draft, `problems` are what the checks or the warehouse found in
    that draft (the reasons for the repair), kept so the person still learns them."""
    message = _fault_message(exc, attempts=attempts)
    if problems:
        listed = "\n".join(f"• {p}" for p in problems)
        message += f"\nIt was correcting SQL that had these problems:\n{listed}"
    return message


def _fault_message(exc: BaseException, *, attempts: int) -> str:
    if isinstance(exc, ScriptExhausted):
        return (
            f"The scripted model (QUERYBOT_MODEL=scripted:...) ran out of replies: its script "
            f"has {counted(exc.replies, 'reply', 'replies')} and this question "
            "needed another, so nothing was run. This is a test set-up problem, not a provider "
            "outage, and asking again will not help: add replies to the script."
        )
    fault = classify(exc)
    tried = f" (tried {attempts} times)" if attempts > 1 else ""
    if fault is ModelFault.RATE_LIMITED:
        return (
            f"The language model is over its rate limit or quota{tried}, so I have no SQL to "
            "propose and nothing was run. Ask again in a few minutes; if it keeps happening, "
            "ask whoever runs querybot to check the model's quota."
        )
    if fault is ModelFault.BAD_KEY:
        return (
            "The language model refused querybot's API key (it is wrong, revoked or lacks "
            "access), so nothing was run. Asking again will not help: tell whoever runs "
            "querybot to fix the model key (GOOGLE_API_KEY)."
        )
    if isinstance(exc, ModelConnectionError):
        return (
            f"querybot could not reach the language model's server{tried}, so nothing was run. "
            "Ask whoever runs querybot to check that the model server is up and that its "
            "address is right (OPENAI_BASE_URL for openai:... models)."
        )
    if fault is ModelFault.TIMEOUT:
        return (
            f"The language model did not answer in time{tried}, so nothing was run. Ask again "
            "in a minute, or ask a simpler question."
        )
    detail = f"{type(exc).__name__}: {str(exc)[:200]}"
    return (
        f"The language model did not answer ({detail}){tried}. Nothing was run. Try again in a "
        "minute; if it keeps failing, ask an admin to check the model settings."
    )
