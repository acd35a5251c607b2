"""Model calls and tokens are counted per node and per question, and reach the outcomes."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, LLMResult

from agent.model.accounting import Meter
from bot.blocks.results import result, usage_text
from tests.agent.conftest import MakeAgent, reply

BY_REGION = "SELECT region, SUM(amount) AS total FROM sales GROUP BY region"


def test_usage_is_counted_per_node_and_question_and_reaches_proposal_and_answer(
    make_agent: MakeAgent,
) -> None:
    agent, model, _ = make_agent([reply("SELECT regoin FROM sales"), reply(BY_REGION)])
    outcome = agent.ask("t1", "revenue by region?", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal
    usage = outcome.proposal.usage
    assert usage is not None and usage == outcome.usage
    # the scripted model reports prompt and reply characters / 4 as its usage
    prompt_chars = sum(len(str(m.content)) for call in model.seen for m in call)
    assert usage["calls"] == 2 == model.calls
    assert usage["input_tokens"] == sum(
        sum(len(str(m.content)) for m in call) // 4 for call in model.seen
    )
    assert usage["input_tokens"] <= prompt_chars // 4 and usage["output_tokens"] > 0
    assert usage["nodes"] == {
        "generate": {
            "calls": 2,
            "input_tokens": usage["input_tokens"],
            "output_tokens": usage["output_tokens"],
        }
    }
    assert not usage["approximate"]

    answer = agent.decide("t1", outcome.proposal.proposal_id, approved=True, user="U2").answer
    assert answer is not None and answer.usage == usage
    sources = result(answer, display_rows=20).blocks[-1]["elements"][0]["text"]
    assert f"2 model calls, {usage_text(usage).split(', ')[1]}" in sources

    # the next question starts its own count
    agent2, _, _ = make_agent([reply(BY_REGION), reply(BY_REGION)])
    agent2.ask("t2", "revenue by region?", user="U1")
    again = agent2.ask("t2", "and again?", user="U1")
    assert again.usage is not None and again.usage["calls"] == 1


def test_a_failed_call_counts_and_a_question_without_model_calls_counts_none(
    make_agent: MakeAgent,
) -> None:
    agent, _, _ = make_agent(['{"__error__": "503 Service Unavailable"}'])
    failed = agent.ask("t1", "revenue by region?", user="U1")
    assert failed.kind == "failed" and failed.usage is not None
    assert failed.usage["calls"] == 1 and failed.usage["output_tokens"] == 0

    pasted = agent.ask("t1", BY_REGION, user="U1")
    assert pasted.kind == "proposal" and pasted.usage is not None
    assert pasted.usage["calls"] == 0 and pasted.usage["nodes"] == {}


def test_replies_without_provider_usage_are_estimated_and_marked() -> None:
    meter = Meter()
    run = UUID(int=1)
    prompt = [HumanMessage("x" * 400)]
    meter.on_chat_model_start({}, [prompt], run_id=run)
    reply_message = AIMessage(content="y" * 40)
    meter.on_llm_end(LLMResult(generations=[[ChatGeneration(message=reply_message)]]), run_id=run)
    assert meter.calls == 1 and meter.approximate
    assert 100 <= meter.input_tokens <= 110 and 10 <= meter.output_tokens <= 20
    assert usage_text(
        {"calls": 1, "input_tokens": 900, "output_tokens": 250, "approximate": True, "nodes": {}}
    ) == ("1 model call, ~1.1k tokens")


class Names(BaseCallbackHandler):
    """Records what each chat model run was called and tagged (as a LangSmith trace shows)."""

    def __init__(self) -> None:
        self.runs: list[dict[str, Any]] = []

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        if kwargs.get("name", "").startswith("querybot."):
            self.runs.append(
                {"name": kwargs["name"], "tags": kwargs["tags"], "meta": kwargs["metadata"]}
            )


def test_model_calls_carry_run_name_tags_and_thread_metadata(make_agent: MakeAgent) -> None:
    agent, _, _ = make_agent([reply(BY_REGION)])
    names = Names()
    agent.graph.invoke(
        {"question": "revenue by region?", "user": "U1"},
        {"configurable": {"thread_id": "t-trace"}, "callbacks": [names]},
    )
    (run,) = names.runs
    assert run["name"] == "querybot.generate"
    assert {"querybot", "node:generate"} <= set(run["tags"])
    assert run["meta"]["thread_id"] == "t-trace" and run["meta"]["querybot_node"] == "generate"
