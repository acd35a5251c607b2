"""Any OpenAI-compatible server as the model: the real `ChatOpenAI` (langchain-openai), built by
`load_model("openai:...")` as the bot builds it, against a local stand-in that answers like
llama.cpp's server (refusing `response_format: json_schema`, answering forced tool calls).
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.memory import InMemorySaver

from agent.context import AgentDeps, AgentLimits
from agent.conversation import Agent
from agent.model.providers import ScriptedChatModel, load_model, structured_method
from agent.model.reply import SqlReply
from connectors.workers.pool import Pool
from tests.agent.conftest import Spy, reply
from tests.agent.model.openai_standin import OpenAIStandin
from tests.support.sql_text import one_line

BY_REGION = "SELECT region, SUM(amount) AS total FROM sales GROUP BY region ORDER BY total DESC"
#: Quick backoff: the tests check what is retried, not how long the waits are.
FAST = AgentLimits(model_backoff_s=0.01)


@pytest.fixture
def server() -> Iterator[OpenAIStandin]:
    standin = OpenAIStandin()
    yield standin
    standin.stop()


@pytest.fixture
def shop(shop_path: Path, shop_workers: dict[str, Pool]) -> Iterator[Spy]:
    connector = Spy(shop_path).share_workers(shop_workers)
    yield connector
    connector.close()


def openai_model(monkeypatch: pytest.MonkeyPatch, base_url: str) -> BaseChatModel:
    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    return load_model("openai:qwen2.5-coder-1.5b", timeout_s=5.0)


def agent_on(model: BaseChatModel, shop: Spy) -> Agent:
    return Agent(AgentDeps(connector=shop, model=model, limits=FAST), InMemorySaver())


def test_structured_output_method_per_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "standin-key")
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    assert structured_method(load_model("google_genai:gemini-2.5-flash")) is None
    assert structured_method(load_model("openai:gpt-4o-mini")) == "function_calling"
    assert structured_method(ScriptedChatModel(replies=[])) is None


def test_a_local_server_answers_through_tool_calling(
    monkeypatch: pytest.MonkeyPatch, server: OpenAIStandin, shop: Spy
) -> None:
    model = openai_model(monkeypatch, server.url)
    # LangChain's default for ChatOpenAI is json_schema, which this kind of server refuses
    with pytest.raises(Exception, match="json_object"):
        model.with_structured_output(SqlReply).invoke("revenue by region?")
    server.answer(reply(BY_REGION))
    outcome = agent_on(model, shop).ask("t1", "revenue by region?", user="U1")
    assert outcome.kind == "proposal", outcome.message
    assert outcome.proposal is not None and "GROUP BY region" in one_line(outcome.proposal.sql)
    asked = server.bodies[-1]
    assert "response_format" not in asked
    assert asked["tool_choice"]["function"]["name"] == asked["tools"][0]["function"]["name"]


def test_retries_are_the_agents_alone(
    monkeypatch: pytest.MonkeyPatch, server: OpenAIStandin, shop: Spy
) -> None:
    for _ in range(3):
        server.fail(503, "model is loading")
    server.answer(reply(BY_REGION))
    outcome = agent_on(openai_model(monkeypatch, server.url), shop).ask("t1", "sales?", user="U1")
    # three agent attempts, one request each: the OpenAI client's own two retries would make nine
    assert outcome.kind == "failed", outcome
    assert server.requests == 3
    assert "tried 3 times" in outcome.message and "Nothing was run" in outcome.message


def test_an_unreachable_server_is_a_clear_message(
    monkeypatch: pytest.MonkeyPatch, shop: Spy
) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = openai_model(monkeypatch, f"http://127.0.0.1:{port}/v1")
    outcome = agent_on(model, shop).ask("t1", "revenue by region?", user="U1")
    assert outcome.kind == "failed"
    assert "could not reach the language model's server" in outcome.message
    assert "OPENAI_BASE_URL" in outcome.message and shop.runs == 0


def test_a_missing_key_says_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    from agent.model.providers import ModelConfigError

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelConfigError, match=r"OPENAI_API_KEY .* OPENAI_BASE_URL"):
        load_model("openai:qwen2.5-coder-1.5b")


def test_a_provider_not_installed_is_added_with_uv_never_pip() -> None:
    """langchain-anthropic is not installed here: LangChain's own ImportError says `pip install`,
    which querybot (a uv project) must not repeat."""
    from agent.model.providers import ModelConfigError

    with pytest.raises(ModelConfigError) as caught:
        load_model("anthropic:claude-sonnet-4-5")
    message = str(caught.value)
    assert "'anthropic' (langchain-anthropic) is not installed" in message
    assert "Install it with `uv add langchain-anthropic`" in message
    assert "pip" not in message


def test_a_provider_of_an_extra_is_synced_with_that_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from agent.model import providers as models

    # as if anthropic were one of pyproject.toml's extras, like openai
    monkeypatch.setitem(models._EXTRAS, "anthropic", "anthropic")
    with pytest.raises(models.ModelConfigError) as caught:
        load_model("anthropic:claude-sonnet-4-5")
    message = str(caught.value)
    assert "Install it with `uv sync --extra anthropic`" in message
    assert "pip" not in message and "uv add" not in message


def test_every_extra_named_in_a_hint_exists() -> None:
    import tomllib

    from agent.model import providers as models

    pyproject = Path(__file__).parents[3] / "pyproject.toml"
    extras = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]
    assert set(models._EXTRAS.values()) <= set(extras)
