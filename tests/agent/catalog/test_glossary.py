"""The business glossary: loaded from YAML, shown when its terms appear."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.catalog.glossary import Glossary, GlossaryError
from tests.agent import context_fixtures
from tests.agent.context_fixtures import MakeAgent, reply

# The catalogue tests' fixtures (a customers/orders shop, an agent that profiles it).
shop = context_fixtures.shop
make_agent = context_fixtures.make_agent

YAML = """
terms:
  - term: revenue
    aliases: [turnover]
    definition: Money from orders.
    expression: sum(orders.amount)
    tables: [orders]
  - term: churn
    definition: Customers without an order in 90 days.
"""


def test_terms_match_whole_words_ignoring_case(tmp_path: Path) -> None:
    path = tmp_path / "glossary.yaml"
    path.write_text(YAML)
    glossary = Glossary.load(path)
    assert [t.term for t in glossary.matching("Turnover by region?")] == ["revenue"]
    assert glossary.matching("revenues? churned?") == []


def test_a_bad_file_is_refused_with_its_name(tmp_path: Path) -> None:
    path = tmp_path / "glossary.yaml"
    path.write_text("terms:\n  - term: revenue\n")
    with pytest.raises(GlossaryError, match=r"glossary\.yaml: term 1 needs"):
        Glossary.load(path)


def test_matching_terms_reach_the_prompt(tmp_path: Path, make_agent: MakeAgent) -> None:
    path = tmp_path / "glossary.yaml"
    path.write_text(YAML)
    sql = "SELECT SUM(amount) AS revenue FROM orders"
    agent, model, _ = make_agent([reply(sql)], glossary=Glossary.load(path))
    agent.ask("t1", "What is our revenue?", user="U1")
    system = str(model.seen[0][0].content)
    assert "- revenue: Money from orders. Compute as: sum(orders.amount)" in system
    assert "churn" not in system
