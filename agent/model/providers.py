"""Chat models from a `provider:model` string, and the scripted model for offline runs.

`QUERYBOT_MODEL=google_genai:gemini-2.5-flash` goes through LangChain's `init_chat_model`;
`QUERYBOT_MODEL=scripted:PATH` replays a JSONL file, one reply a line (an object is the JSON the
model answers, a string is its raw text, and `{"__error__": "503 Service Unavailable"}` makes that
call fail as a provider outage would), so the whole bot runs without a network. A `"__delay__"`
key on an object line (seconds) makes that reply arrive that much later, like a slow provider.
An error line may carry a `"status"` to fail the way a provider does (the LangChain exception
types langchain-google-genai raises, as `classify` reads them): 429 (rate limit or quota),
401 / 403 (bad key), 5xx (server error), or `"timeout"`. When a file `NAME.seen.jsonl` exists
beside the script `NAME.jsonl`, every call's messages are appended to it, one call a line (a
test checks from there what a bot process showed its model).

Real models get a request timeout and no retries of their own: the agent retries what is worth
retrying, with backoff, in one place for every provider (`AgentDeps.structured_model`).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.exceptions import (
    ModelAPIError,
    ModelAuthenticationError,
    ModelPermissionDeniedError,
    ModelRateLimitError,
    ModelTimeoutError,
)
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.output_parsers import PydanticOutputParser
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable, RunnableLambda
from pydantic import BaseModel, Field, PrivateAttr

from connectors.units import counted


class ModelConfigError(Exception):
    """The model setting cannot be used; the message says what to change."""


class ScriptExhausted(RuntimeError):
    """The scripted model has no reply left: the script is shorter than the run needs (a test
    set-up problem, never a provider outage)."""

    def __init__(self, replies: int) -> None:
        self.replies = replies
        super().__init__(
            f"the scripted model ran out of replies after {counted(replies, 'reply', 'replies')}"
        )


class ScriptedOutage(RuntimeError):
    """A scripted `{"__error__": ...}` line: this call fails, the next line answers again."""


#: Seconds a real model may take to answer one request, unless told otherwise
#: (`QUERYBOT_MODEL_TIMEOUT_S`).
MODEL_TIMEOUT_S = 60.0

#: A scripted error line's `"status"` -> the exception a provider raises for it.
_FAULTS: dict[int | str, type[Exception]] = {
    429: ModelRateLimitError,
    401: ModelAuthenticationError,
    403: ModelPermissionDeniedError,
    "timeout": ModelTimeoutError,
}


def _outage(text: str) -> Exception | None:
    """The exception of an `{"__error__": message[, "status": ...]}` reply, else None."""
    if not text.startswith('{"__error__"'):
        return None
    value = json.loads(text)
    if not isinstance(value, dict) or not set(value) <= {"__error__", "status"}:
        return None
    message, status = str(value["__error__"]), value.get("status")
    if status is None:
        return ScriptedOutage(message)
    if isinstance(status, int) and 500 <= status < 600:
        return ModelAPIError(f"{status}: {message}")
    fault = _FAULTS.get(status)
    if fault is None:
        raise ModelConfigError(
            f"unknown scripted error status {status!r} (use 429, 401, 403, 5xx or timeout)"
        )
    return fault(f"{status}: {message}")


class ScriptedChatModel(BaseChatModel):
    """Replays prepared replies in order; supports `with_structured_output` like a real model."""

    replies: list[str]
    #: Seconds before each reply arrives (a line's `"__delay__"`); missing entries mean none.
    delays: list[float] = Field(default_factory=list)
    _next: int = PrivateAttr(default=0)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _seen: list[list[BaseMessage]] = PrivateAttr(default_factory=list)
    #: Where every call's messages are appended as one JSON line (see the module docstring).
    seen_file: Path | None = None

    @classmethod
    def from_jsonl(cls, path: Path) -> ScriptedChatModel:
        replies, delays = [], []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ModelConfigError(f"{path}:{number} is not a JSON value: {exc}") from exc
            delay = value.pop("__delay__", 0) if isinstance(value, dict) else 0
            if not isinstance(delay, int | float) or delay < 0:
                raise ModelConfigError(f"{path}:{number}: __delay__ must be seconds (>= 0)")
            delays.append(float(delay))
            replies.append(value if isinstance(value, str) else json.dumps(value))
            _outage(replies[-1])  # an unknown error status fails here, not mid-run
        seen = path.with_suffix(".seen.jsonl")
        return cls(replies=replies, delays=delays, seen_file=seen if seen.is_file() else None)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def calls(self) -> int:
        """How many replies have been used."""
        return self._next

    @property
    def seen(self) -> list[list[BaseMessage]]:
        """The messages of every call, oldest first (to check what the model was shown)."""
        return self._seen

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with self._lock:
            self._seen.append(list(messages))
            if self.seen_file is not None:
                shown = [{"type": m.type, "content": str(m.content)} for m in messages]
                with self.seen_file.open("a", encoding="utf-8") as seen:
                    seen.write(json.dumps(shown) + "\n")
            if self._next >= len(self.replies):
                raise ScriptExhausted(len(self.replies))
            text = self.replies[self._next]
            delay = self.delays[self._next] if self._next < len(self.delays) else 0.0
            self._next += 1
        if delay:
            time.sleep(delay)
        if (error := _outage(text)) is not None:
            raise error
        prompt_chars = sum(len(str(m.content)) for m in messages)
        usage = {
            "input_tokens": prompt_chars // 4,
            "output_tokens": len(text) // 4,
            "total_tokens": (prompt_chars + len(text)) // 4,
        }
        message = AIMessage(content=text, usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def with_structured_output(
        self, schema: Any, *, include_raw: bool = False, **kwargs: Any
    ) -> Runnable[LanguageModelInput, Any]:
        if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
            raise TypeError("the scripted model supports Pydantic schemas only")
        parser = PydanticOutputParser(pydantic_object=schema)

        def parse(message: BaseMessage) -> Any:
            if not include_raw:
                return parser.invoke(message)
            try:
                return {"raw": message, "parsed": parser.invoke(message), "parsing_error": None}
            except Exception as exc:  # the same contract as LangChain's include_raw
                return {"raw": message, "parsed": None, "parsing_error": exc}

        return self | RunnableLambda(parse)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[LanguageModelInput, Any]:
        return self


class UnavailableChatModel(BaseChatModel):
    """The model of a terminal session started without the model's key: SQL a person pasted
    never reaches a model, so it still runs; a call fails with `reason` (what is missing and
    what to do), which the terminal says before asking anything of the graph."""

    reason: str

    @property
    def _llm_type(self) -> str:
        return "unavailable"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        raise ModelConfigError(self.reason)

    def with_structured_output(
        self, schema: Any, *, include_raw: bool = False, **kwargs: Any
    ) -> Runnable[LanguageModelInput, Any]:
        return self

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[LanguageModelInput, Any]:
        return self


#: Per provider: options that bound one request and turn the SDK's own retries off, since the
#: agent retries what is worth retrying in one place (`AgentDeps.structured`); without them the
#: OpenAI client's two retries stack on the agent's three (nine requests for one failing call).
#: `max_retries=1` is one attempt in langchain-google-genai, `max_retries=0` none again in openai.
_SDK_OPTIONS: dict[str, dict[str, Any]] = {
    "google_genai": {"max_retries": 1},
    "openai": {"max_retries": 0},
}

#: Providers whose `with_structured_output` default suits them. Every other provider answers
#: through tool calling, which OpenAI-compatible servers (llama.cpp, vLLM, Ollama, LM Studio)
#: support, while several refuse `response_format: json_schema`, LangChain's default for OpenAI.
_DEFAULT_METHOD_MODULES = ("langchain_google_genai", __name__)

#: What each provider's set-up error is usually about.
_SETUP_HINTS = {
    "google_genai": " Set GOOGLE_API_KEY in .env.",
    "openai": (
        " Set OPENAI_API_KEY (any value for a local server) and, for a local or hosted "
        "OpenAI-compatible server, OPENAI_BASE_URL (e.g. http://127.0.0.1:8080/v1)."
    ),
}

#: The optional extra that installs each provider's package.
_EXTRAS = {"openai": "openai"}


def structured_method(model: BaseChatModel) -> str | None:
    """The `method` to ask `model` for structured output with (None: the provider's default)."""
    if type(model).__module__.startswith(_DEFAULT_METHOD_MODULES):
        return None
    return "function_calling"


def load_model(spec: str, *, timeout_s: float = MODEL_TIMEOUT_S) -> BaseChatModel:
    """Build the chat model named by `spec` (`provider:model` or `scripted:PATH`); a request to
    a real provider is cut after `timeout_s` and not retried by its SDK."""
    provider, _, rest = spec.partition(":")
    if not rest:
        raise ModelConfigError(
            f"QUERYBOT_MODEL={spec!r} is not of the form provider:model "
            "(e.g. google_genai:gemini-2.5-flash, openai:qwen2.5-coder with OPENAI_BASE_URL, "
            "or scripted:replies.jsonl for offline runs)."
        )
    if provider == "scripted":
        path = Path(rest)
        if not path.is_file():
            raise ModelConfigError(f"QUERYBOT_MODEL names a script that does not exist: {path}")
        return ScriptedChatModel.from_jsonl(path)
    from langchain.chat_models import init_chat_model

    options = {"timeout": timeout_s, **_SDK_OPTIONS[provider]} if provider in _SDK_OPTIONS else {}
    try:
        return init_chat_model(spec, temperature=0, **options)
    except ImportError as exc:
        package = _missing_package(exc, provider)
        extra = _EXTRAS.get(provider)
        # LangChain's own message says `pip install`: querybot is a uv project, so it is not
        # repeated; an extra is synced, any other provider's package added to the project
        how = f"`uv sync --extra {extra}`" if extra else f"`uv add {package}`"
        raise ModelConfigError(
            f"The package for model provider {provider!r} ({package}) is not installed. "
            f"Install it with {how}, or use google_genai:..., which querybot ships with."
        ) from exc
    except Exception as exc:  # a missing key surfaces as a pydantic ValidationError
        hint = _SETUP_HINTS.get(provider, "")
        raise ModelConfigError(f"Could not set up model {spec!r}: {exc}.{hint}") from exc


def _missing_package(exc: ImportError, provider: str) -> str:
    """The distribution `exc` (from `init_chat_model`) says is missing: LangChain names it
    ("requires the langchain-openai package"); else the module that failed to import."""
    named = re.search(r"requires the (\S+) package", str(exc))
    if named:
        return named.group(1)
    module = exc.name or (exc.__cause__.name if isinstance(exc.__cause__, ImportError) else None)
    return (module or f"langchain_{provider}").split(".")[0].replace("_", "-")
