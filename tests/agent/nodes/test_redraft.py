"""The redraft strategy (agent/nodes/generate.py): a model draft the checks refuse for naming
tables or columns the warehouse lacks is written afresh, in text, without the refused draft;
once a question, in a repair's place (no extra model call). Real DuckDB, real gate, scripted
model."""

from __future__ import annotations

from agent.context import AgentLimits
from agent.strategies.options import parse_strategies
from tests.agent.conftest import MakeAgent, prompt_of, reply

BY_REGION = "SELECT region, SUM(amount) AS total FROM sales GROUP BY region"
#: Refused by the gate: a column the table lacks.
MISSING = "SELECT shop_name, SUM(amount) AS total FROM sales GROUP BY shop_name"
FENCE = "```"


def text(sql: str, sentence: str = "Totals by region.") -> str:
    return f"{sentence}\n{FENCE}sql\n{sql}\n{FENCE}"


def test_a_draft_naming_a_missing_column_is_written_afresh_in_text(
    make_agent: MakeAgent,
) -> None:
    agent, model, spy = make_agent([reply(MISSING), text(BY_REGION)])
    outcome = agent.ask("t1", "sales by shop?", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal is not None
    assert "GROUP BY" in outcome.proposal.sql and "shop_name" not in outcome.proposal.sql
    assert model.calls == 2 and spy.runs == 0
    afresh = model.seen[1]
    # the first draft's messages open the redraft (a server's prompt cache serves them) ...
    assert [m.content for m in afresh[: len(model.seen[0])]] == [m.content for m in model.seen[0]]
    # ... then the names it lacks, without the refused draft
    assert "Unknown column 'shop_name'" in str(afresh[-1].content)
    assert "```sql code block" in str(afresh[-1].content)
    assert MISSING not in prompt_of(model, 1)
    explanation = agent.explain("t1")
    assert explanation is not None
    assert any("afresh" in step["text"] for step in explanation.steps)


def test_once_a_question_then_repairs_as_before(make_agent: MakeAgent) -> None:
    """The redraft still names a missing column: the next try corrects it (the redraft's SQL and
    its problems shown), and the tries are spent as before."""
    still = "SELECT shop, SUM(amount) AS total FROM sales GROUP BY shop"
    agent, model, _ = make_agent([reply(MISSING), text(still), reply(still)])
    outcome = agent.ask("t1", "sales by shop?", user="U1")
    assert outcome.kind == "clarify" and model.calls == 3
    assert "Unknown column 'shop'" in outcome.message
    repair = prompt_of(model, 2)
    assert "Your previous SQL was not accepted" in repair and still in repair
    assert "Write the query again from the start" not in str(model.seen[2][-1].content)


def test_a_redraft_may_say_the_data_cannot_answer(make_agent: MakeAgent) -> None:
    """Told which names are missing, the model may answer that no table records what was
    asked (as for a question about shops in a warehouse that has none): the question ends
    there, with its sentence, and nothing is proposed."""
    agent, model, spy = make_agent([reply(MISSING), "Clarify: The sales table records no shop."])
    outcome = agent.ask("t1", "sales by shop?", user="U1")
    assert outcome.kind == "clarify" and model.calls == 2 and spy.runs == 0
    assert outcome.message == "The sales table records no shop."
    assert "write no SQL: say in one sentence which data is missing" in prompt_of(model, 1)
    explanation = agent.explain("t1")
    assert explanation is not None
    assert [s["kind"] for s in explanation.steps][-1] == "clarify"


def test_an_empty_redraft_is_asked_again(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent([reply(MISSING), "  \n", reply(BY_REGION)])
    outcome = agent.ask("t1", "sales by shop?", user="U1")
    assert outcome.kind == "proposal" and model.calls == 3
    assert "Your reply was empty" in prompt_of(model, 2)


def test_other_refusals_are_corrected_not_redrafted(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent([reply("DELETE FROM sales"), reply(BY_REGION)])
    assert agent.ask("t1", "sales by region?", user="U1").kind == "proposal"
    assert "Your previous SQL was not accepted" in prompt_of(model, 1)
    assert "DELETE FROM sales" in prompt_of(model, 1)


def test_switched_off_a_missing_column_is_corrected(make_agent: MakeAgent) -> None:
    strategies = parse_strategies("-redraft")
    agent, model, _ = make_agent([reply(MISSING), reply(BY_REGION)], strategies=strategies)
    assert agent.ask("t1", "sales by shop?", user="U1").kind == "proposal"
    assert MISSING in prompt_of(model, 1)
    assert "Write the query again from the start" not in prompt_of(model, 1)


def test_a_redraft_takes_a_try_of_the_budget(make_agent: MakeAgent) -> None:
    """With one repair allowed, the redraft is that repair: two calls in all."""
    agent, model, _ = make_agent(
        [reply(MISSING), text(MISSING), reply(BY_REGION)], limits=AgentLimits(max_attempts=2)
    )
    outcome = agent.ask("t1", "sales by shop?", user="U1")
    assert outcome.kind == "clarify" and model.calls == 2
