"""The model fails: rate limit or quota (retried with backoff, then a clear message), a bad key
(a clear message at once, never retried), a timeout, and replies that do not fit the schema.

The scripted model raises the exceptions providers raise; the last tests drive the real
`ChatGoogleGenerativeAI` (langchain-google-genai) against a local stand-in of Gemini's REST API
that answers 429, 401 or nothing in time, to prove those map the same way.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.exceptions import ModelAuthenticationError, ModelRateLimitError
from langchain_core.runnables.retry import RunnableRetry
from tenacity import RetryCallState, Retrying

from agent.context import AgentDeps, AgentLimits
from agent.conversation import Agent
from agent.model.errors import ModelFault, classify, is_retryable
from connectors.workers.pool import Pool
from tests.agent.conftest import MakeAgent, Spy, reply
from tests.support.gemini_standin import GeminiStandin

BY_REGION = "SELECT region, SUM(amount) AS total FROM sales GROUP BY region ORDER BY total DESC"
#: Quick backoff: the tests check what is retried, not how long the waits are.
FAST = AgentLimits(model_backoff_s=0.01)


def error(message: str, status: int | str) -> str:
    return json.dumps({"__error__": message, "status": status})


def test_a_rate_limit_is_retried_then_the_question_is_answered(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent(
        [error("quota", 429), error("quota", 429), reply(BY_REGION)], limits=FAST
    )
    outcome = agent.ask("t1", "revenue by region?", user="U1")
    assert outcome.kind == "proposal"
    assert model.calls == 3


def test_a_rate_limit_that_lasts_ends_in_a_clear_message(make_agent: MakeAgent) -> None:
    agent, model, spy = make_agent(
        [error("Resource has been exhausted (e.g. check quota).", 429)] * 3 + [reply(BY_REGION)],
        limits=FAST,
    )
    outcome = agent.ask("t1", "revenue by region?", user="U1")
    assert outcome.kind == "failed"
    assert "rate limit or quota (tried 3 times)" in outcome.message
    assert "nothing was run" in outcome.message and "Ask again in a few minutes" in outcome.message
    assert model.calls == 3 and spy.runs == 0
    # the thread goes on: the next question is answered
    assert agent.ask("t1", "revenue by region?", user="U1").kind == "proposal"


@pytest.mark.parametrize(("jitter", "waits"), [("least", [2.0, 4.0]), ("most", [3.0, 5.0])])
def test_the_backoff_is_about_2_then_4_seconds(
    make_agent: MakeAgent, monkeypatch: pytest.MonkeyPatch, jitter: str, waits: list[float]
) -> None:
    """The schedule docs/failures.md promises (3 calls, waits of about 2 s then 4 s, each with up to
    half the first wait of jitter), read from the retry policy the agent built with its default
    limits rather than timed: the waits come from the very tenacity objects its Runnable runs."""
    agent, _, _ = make_agent([reply(BY_REGION)])
    retry = agent.deps.structured_model
    assert isinstance(retry, RunnableRetry)
    assert retry.retry_exception_types is is_retryable
    # the arguments RunnableRetry hands to tenacity's Retrying for each invoke
    policy = retry._kwargs_retrying
    # random.uniform(0, jitter) is tenacity's jitter: take either end of its range
    monkeypatch.setattr(random, "uniform", lambda a, b: a if jitter == "least" else b)
    state = RetryCallState(Retrying(), fn=None, args=(), kwargs={})
    seen, stopped = [], False
    while not stopped:
        state.attempt_number = len(seen) + 1
        stopped = policy["stop"](state)
        if not stopped:
            seen.append(policy["wait"](state))
    assert seen == waits
    assert state.attempt_number == AgentLimits().model_attempts == 3


def test_a_bad_key_is_told_at_once_and_never_retried(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent([error("API key not valid", 401), reply(BY_REGION)], limits=FAST)
    outcome = agent.ask("t1", "revenue by region?", user="U1")
    assert outcome.kind == "failed"
    assert "refused querybot's API key" in outcome.message
    assert "GOOGLE_API_KEY" in outcome.message and "tried" not in outcome.message
    assert model.calls == 1


def test_a_forbidden_key_is_a_bad_key_too(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent([error("permission denied", 403)], limits=FAST)
    assert "refused querybot's API key" in agent.ask("t1", "sales?", user="U1").message
    assert model.calls == 1


def test_timeouts_are_retried_a_bounded_number_of_times(make_agent: MakeAgent) -> None:
    limits = AgentLimits(model_backoff_s=0.01, model_attempts=2)
    agent, model, _ = make_agent(
        [error("deadline", "timeout")] * 2 + [reply(BY_REGION)], limits=limits
    )
    outcome = agent.ask("t1", "revenue by region?", user="U1")
    assert outcome.kind == "failed"
    assert "did not answer in time (tried 2 times)" in outcome.message
    assert model.calls == 2


def test_a_server_error_is_retried(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent([error("overloaded", 503), reply(BY_REGION)], limits=FAST)
    assert agent.ask("t1", "revenue by region?", user="U1").kind == "proposal"
    assert model.calls == 2


def test_a_reply_off_the_schema_is_asked_again_then_explained(make_agent: MakeAgent) -> None:
    off_schema = json.dumps({"kind": "table", "rows": []})
    agent, model, spy = make_agent([off_schema, "not JSON at all", reply(BY_REGION)])
    assert agent.ask("t1", "revenue by region?", user="U1").kind == "proposal"
    assert "not valid JSON for the required schema" in str(model.seen[1][-1].content)

    agent, model, spy = make_agent([off_schema] * 3, limits=AgentLimits(max_attempts=3))
    outcome = agent.ask("t1", "revenue by region?", user="U1")
    assert outcome.kind == "failed" and "cannot read" in outcome.message
    assert model.calls == 3 and spy.runs == 0


# -- the real Gemini client against a local stand-in ----------------------------------------


@pytest.fixture
def gemini() -> Iterator[GeminiStandin]:
    standin = GeminiStandin()
    yield standin
    standin.stop()


def gemini_agent(gemini: GeminiStandin, shop: Spy, *, timeout_s: float = 5.0) -> Agent:
    from langchain.chat_models import init_chat_model
    from langgraph.checkpoint.memory import InMemorySaver

    # what load_model builds, pointed at the stand-in
    model = init_chat_model(
        "google_genai:gemini-2.5-flash",
        temperature=0,
        timeout=timeout_s,
        max_retries=1,
        api_key="standin-key",
        base_url=gemini.url,
    )
    return Agent(AgentDeps(connector=shop, model=model, limits=FAST), InMemorySaver())


@pytest.fixture
def shop(shop_path: Any, shop_workers: dict[str, Pool]) -> Iterator[Spy]:
    connector = Spy(shop_path).share_workers(shop_workers)
    yield connector
    connector.close()


@pytest.mark.slow
def test_gemini_429_is_a_rate_limit_and_is_retried(gemini: GeminiStandin, shop: Spy) -> None:
    gemini.fail(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).")
    gemini.answer(reply(BY_REGION))
    outcome = gemini_agent(gemini, shop).ask("t1", "revenue by region?", user="U1")
    assert outcome.kind == "proposal", outcome.message
    assert gemini.requests == 2


@pytest.mark.slow
def test_gemini_quota_exhausted_for_good(gemini: GeminiStandin, shop: Spy) -> None:
    for _ in range(3):
        gemini.fail(429, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric.")
    outcome = gemini_agent(gemini, shop).ask("t1", "revenue by region?", user="U1")
    assert outcome.kind == "failed" and "rate limit or quota (tried 3 times)" in outcome.message
    assert gemini.requests == 3


@pytest.mark.slow
def test_gemini_401_is_a_bad_key_and_is_not_retried(gemini: GeminiStandin, shop: Spy) -> None:
    gemini.fail(401, "UNAUTHENTICATED", "API key not valid. Please pass a valid API key.")
    gemini.answer(reply(BY_REGION))
    outcome = gemini_agent(gemini, shop).ask("t1", "revenue by region?", user="U1")
    assert outcome.kind == "failed" and "refused querybot's API key" in outcome.message
    assert gemini.requests == 1


@pytest.mark.slow
def test_gemini_timeout_is_bounded(gemini: GeminiStandin, shop: Spy) -> None:
    for _ in range(3):
        gemini.answer(reply(BY_REGION), delay=2.0)
    outcome = gemini_agent(gemini, shop, timeout_s=0.3).ask("t1", "sales?", user="U1")
    assert outcome.kind == "failed", outcome
    assert "did not answer in time (tried 3 times)" in outcome.message
    assert gemini.requests == 3


def test_the_exception_types_langchain_google_genai_raises() -> None:
    from google.genai.errors import ClientError
    from langchain_google_genai.chat_models import _handle_client_error

    for code, fault in [(429, ModelFault.RATE_LIMITED), (401, ModelFault.BAD_KEY)]:
        body = {"error": {"code": code, "message": "x", "status": "X"}}
        with pytest.raises(ModelRateLimitError if code == 429 else ModelAuthenticationError) as e:
            _handle_client_error(ClientError(code, body), {"model": "gemini-2.5-flash"})
        assert classify(e.value) is fault


def test_load_model_bounds_gemini_and_leaves_retries_to_the_agent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agent.model.providers import MODEL_TIMEOUT_S, load_model

    monkeypatch.setenv("GOOGLE_API_KEY", "standin-key")
    model = load_model("google_genai:gemini-2.5-flash")
    # max_retries=1 is one attempt in the Google SDK (0 would mean its default of 5 retries)
    assert (model.timeout, model.max_retries) == (MODEL_TIMEOUT_S, 1)
    assert load_model("google_genai:gemini-2.5-flash", timeout_s=7.5).timeout == 7.5
