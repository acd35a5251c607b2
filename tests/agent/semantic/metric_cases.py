"""Metric queries on the shop (tests/support/shop) and their rows worked out by hand from its seeds,
shared by the DuckDB and PostgreSQL tests."""

from __future__ import annotations

import datetime
import json

import pytest

from agent.semantic.artifacts import Artifacts

MONTHS = [datetime.datetime(2024, m, 1) for m in (1, 2, 3)]
BY_MONTH = {
    "group_by": [{"name": "metric_time", "grain": "month"}],
    "order_by": [{"name": "metric_time"}],
}
BY_REGION = {"group_by": [{"name": "customer__region"}], "order_by": [{"name": "customer__region"}]}
SHIPPED = {"name": "order__status", "operator": "in", "values": ["shipped", "placed"]}
SINCE_FEB = {"name": "metric_time", "operator": ">=", "values": ["2024-02-01"]}
BY_SIGNUP = {"name": "customer__signup_date", "grain": "quarter"}

#: Each query, and its rows worked out by hand from seeds/raw_orders.csv and raw_customers.csv.
CASES = [
    pytest.param({"metrics": ["revenue"], **BY_MONTH},
                 list(zip(MONTHS, [250, 380, 395], strict=True)), id="simple-by-month"),
    pytest.param({"metrics": ["order_count", "average_order_value"], **BY_MONTH},
                 list(zip(MONTHS, [3, 4, 5], [250 / 3, 95, 79], strict=True)), id="ratio"),
    pytest.param({"metrics": ["refunds", "net_revenue"], **BY_REGION},
                 [("APAC", 50, 170), ("EU", 40, 425), ("NA", 0, 340)], id="derived-joined-dim"),
    pytest.param({"metrics": ["revenue"], **BY_MONTH,
                  "where": [{"name": "customer__region", "operator": "=", "values": ["EU"]}]},
                 list(zip(MONTHS, [200, 200, 65], strict=True)), id="filtered-after-join"),
    pytest.param({"metrics": ["order_count"],
                  "where": [SHIPPED, SINCE_FEB]},
                 [(8,)], id="in-and-time-filter"),
    pytest.param({"metrics": ["revenue"], "group_by": [{"name": "customer__region"}],
                  "order_by": [{"name": "revenue", "descending": True}], "limit": 1},
                 [("EU", 465)], id="top-1"),
    pytest.param({"metrics": ["new_customers"], "group_by": [BY_SIGNUP],
                  "order_by": [{"name": "customer__signup_date"}]},
                 [(datetime.datetime(2023, 10, 1), 2), (datetime.datetime(2024, 1, 1), 3)],
                 id="other-time-dimension"),
]  # fmt: skip


def parsed_against(artifacts: Artifacts, relation: str) -> str:
    """The semantic manifest as `dbt parse` writes it against another warehouse's profile:
    `relation` formats each model's name into that warehouse's relation."""
    manifest = json.loads(artifacts.semantic_json)
    for model in manifest["semantic_models"]:
        alias = model["node_relation"]["alias"]
        model["node_relation"]["relation_name"] = relation.format(alias)
    return json.dumps(manifest)
