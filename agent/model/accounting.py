"""Model calls and tokens, counted per node and per question, and readable traces.

Every node that calls a model runs inside `metered(...)`: it receives a config carrying a
`Meter` callback (so calls made through `invoke`, `batch` or threads are all counted, failed ones
included) plus a run name, tags and metadata (thread id, node) that make LangSmith traces
readable. LangSmith itself is switched on by its own environment variables
(`LANGSMITH_TRACING=true`, `LANGSMITH_API_KEY`); LangChain reads them, nothing here does.

Token figures are the provider's (`AIMessage.usage_metadata`). A reply without them is counted
with LangChain's approximation (`count_tokens_approximately`, about four characters a token) and
the question's usage is marked `approximate`. The scripted model reports prompt and reply
characters / 4 as its usage (agent.model.providers), so offline runs have figures too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, TypedDict
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.outputs import ChatGeneration, LLMResult
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import merge_configs


class NodeUsage(TypedDict):
    calls: int
    input_tokens: int
    output_tokens: int


class QuestionUsage(TypedDict):
    """One question's model use (JSON-plain, kept in the thread state)."""

    calls: int
    input_tokens: int
    output_tokens: int
    #: True when some reply carried no usage figures and its tokens were estimated.
    approximate: bool
    #: The same figures per graph node ("generate", "plan", "check", ...).
    nodes: dict[str, NodeUsage]


def empty_usage() -> QuestionUsage:
    return {"calls": 0, "input_tokens": 0, "output_tokens": 0, "approximate": False, "nodes": {}}


class Meter(BaseCallbackHandler):
    """Counts chat model calls started and the tokens of their replies."""

    def __init__(self) -> None:
        self.calls = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.approximate = False
        self._prompts: dict[UUID, list[BaseMessage]] = {}
        self._lock = threading.Lock()

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        **kwargs: Any,
    ) -> None:
        with self._lock:
            self.calls += 1
            self._prompts[run_id] = [m for batch in messages for m in batch]

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        with self._lock:
            prompt = self._prompts.pop(run_id, [])
        for generations in response.generations:
            for generation in generations:
                message = generation.message if isinstance(generation, ChatGeneration) else None
                usage = message.usage_metadata if isinstance(message, AIMessage) else None
                if usage:
                    inp, out, approx = usage.get("input_tokens", 0), usage["output_tokens"], False
                else:
                    inp = count_tokens_approximately(prompt)
                    out = count_tokens_approximately([message]) if message else 0
                    approx = True
                with self._lock:
                    self.input_tokens += inp
                    self.output_tokens += out
                    self.approximate = self.approximate or approx

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        with self._lock:
            self._prompts.pop(run_id, None)


def add_usage(total: QuestionUsage | None, node: str, meter: Meter) -> QuestionUsage:
    """`total` with what `meter` counted in `node` added (a new dict; `total` is unchanged)."""
    base = total or empty_usage()
    was = base["nodes"].get(node, {"calls": 0, "input_tokens": 0, "output_tokens": 0})
    return {
        "calls": base["calls"] + meter.calls,
        "input_tokens": base["input_tokens"] + meter.input_tokens,
        "output_tokens": base["output_tokens"] + meter.output_tokens,
        "approximate": base["approximate"] or meter.approximate,
        "nodes": {
            **base["nodes"],
            node: {
                "calls": was["calls"] + meter.calls,
                "input_tokens": was["input_tokens"] + meter.input_tokens,
                "output_tokens": was["output_tokens"] + meter.output_tokens,
            },
        },
    }


def traced(config: RunnableConfig, node: str, meter: Meter) -> RunnableConfig:
    """The node's config for its model calls: the meter, and a run name, tags and metadata
    naming the node and the thread (the node's own callbacks, tracers included, are kept)."""
    thread = str((config.get("configurable") or {}).get("thread_id", ""))
    return merge_configs(
        config,
        {
            "callbacks": [meter],
            "run_name": f"querybot.{node}",
            "tags": ["querybot", f"node:{node}"],
            "metadata": {"thread_id": thread, "querybot_node": node},
        },
    )


#: A node: `fn(state, config, deps)` returning its update (a TypedDict, agent.state.Update).
Node = Callable[..., Mapping[str, Any]]


def metered(node: str, fn: Node) -> Node:
    """Wrap a node `fn(state, config, deps)` so its model calls are traced and counted in
    the state's `usage` (only when it made any)."""

    def run(state: Any, config: RunnableConfig, deps: Any) -> Mapping[str, Any]:
        meter = Meter()
        update = fn(state, traced(config, node, meter), deps)
        if meter.calls:
            update = {**update, "usage": add_usage(state.get("usage"), node, meter)}
        return update

    run.__name__ = getattr(fn, "__name__", node)
    return run
