"""Value grounding: literal filters checked against real values, misses sent to repair."""

from __future__ import annotations

import pytest

from agent.catalog.grounding import check_values
from agent.catalog.snapshot import Catalog, ProfileLimits
from connectors.duckdb.connector import DuckDBConnector
from tests.agent import context_fixtures
from tests.agent.context_fixtures import MakeAgent, reply

# The catalogue tests' fixtures (a customers/orders shop, an agent that profiles it).
shop = context_fixtures.shop
make_agent = context_fixtures.make_agent
shop_connector = context_fixtures.shop_connector


@pytest.fixture
def catalog(shop_connector: DuckDBConnector) -> Catalog:
    """Region (3 values) listed in full, customer names (4) not: those are checked live."""
    catalog = Catalog(shop_connector, limits=ProfileLimits(complete_values=3, top_values=1))
    catalog.refresh()
    return catalog


def misses(catalog: Catalog, sql: str, live: bool = True) -> list[str]:
    snapshot = catalog.snapshot()
    gated = f"SELECT * FROM shop.main.customers AS c WHERE {sql}"
    return [str(m) for m in check_values(gated, snapshot, catalog.connector if live else None)]


def test_wrong_case_and_misspelling_get_the_real_value_first(catalog: Catalog) -> None:
    assert misses(catalog, "c.region = 'california'") == [
        "'california' not found in customers.region; did you mean 'California'?"
    ]
    assert "did you mean 'North' or" in misses(catalog, "region = 'Nroth'")[0]
    assert misses(catalog, "c.region IN ('North', 'south')")[0].startswith(
        "'south' not found in customers.region; did you mean 'South'"
    )


def test_values_that_occur_and_case_folded_filters_pass(catalog: Catalog) -> None:
    assert misses(catalog, "c.region = 'North' AND lower(c.region) = 'north'") == []
    assert misses(catalog, "c.region <> 'South' AND c.customer_id = 1") == []


def test_columns_without_a_full_value_list_are_checked_live(catalog: Catalog) -> None:
    assert (
        catalog.snapshot().column_profile("shop.main.customers", "customer_name").complete is False
    )
    assert misses(catalog, "c.customer_name = 'Bob Jones'") == []
    found = misses(catalog, "c.customer_name = 'bob jones'")
    assert found == ["'bob jones' not found in customers.customer_name; did you mean 'Bob Jones'?"]
    assert misses(catalog, "c.customer_name = 'bob jones'", live=False) == []


def test_a_miss_goes_to_repair_and_the_fixed_query_is_proposed(make_agent: MakeAgent) -> None:
    wrong = "SELECT COUNT(*) AS n FROM customers WHERE region = 'north'"
    right = "SELECT COUNT(*) AS n FROM customers WHERE region = 'North'"
    agent, model, _ = make_agent([reply(wrong), reply(right)])
    outcome = agent.ask("t1", "how many customers in the north?", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal
    assert "'North'" in outcome.proposal.sql
    repair = str(model.seen[1][-1].content)
    assert "'north' not found in customers.region; did you mean 'North'?" in repair


def test_misses_count_against_the_attempt_limit(make_agent: MakeAgent) -> None:
    wrong = "SELECT COUNT(*) AS n FROM customers WHERE region = 'Atlantis'"
    agent, model, _ = make_agent([reply(wrong)] * 3)
    outcome = agent.ask("t1", "customers in Atlantis?", user="U1")
    assert outcome.kind == "failed" and "'Atlantis' not found" in outcome.message
    assert model.calls == 3
