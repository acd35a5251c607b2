"""Which metrics a question names (agent.semantic.metrics.named_in): the metric step asks the
model only when one is named, and keeps the model's choice only when every metric it chose is."""

from __future__ import annotations

from agent.catalog.glossary import Glossary, Term
from agent.semantic.metrics import named_in
from agent.semantic.semantic_manifest import Metric, SemanticLayer, read_semantic_manifest

LAYER = SemanticLayer(
    metrics={
        "revenue": Metric("revenue", "simple", label="Revenue", synonyms=("turnover",)),
        "order_count": Metric("order_count", "simple", label="Orders"),
        "refunds": Metric(
            "refunds",
            "simple",
            label="Refunds",
            description="Amounts paid back for returned orders.",
        ),
        "average_order_value": Metric(
            "average_order_value", "ratio", label="AOV", description="Revenue per order."
        ),
    }
)


def test_a_metric_is_named_by_its_name_label_or_synonym() -> None:
    assert named_in("revenue by month", LAYER) == ["revenue"]
    assert named_in("What was our turnover in March?", LAYER) == ["revenue"]
    assert named_in("order count by region", LAYER) == ["order_count"]
    assert named_in("How many orders last week?", LAYER) == ["order_count"]  # "Orders", stemmed


def test_a_question_using_every_word_of_a_description_names_the_metric() -> None:
    assert named_in("revenue per order each month", LAYER) == [
        "revenue",
        "order_count",
        "average_order_value",
    ]


def test_words_near_a_metric_do_not_name_it() -> None:
    """ "Returned orders" is in the refunds' description, but the question asks for orders, not
    for the amounts paid back."""
    assert named_in("Which orders were returned?", LAYER) == ["order_count"]
    assert named_in("List the names of our customers", LAYER) == []


def test_a_glossary_term_naming_a_metric_names_it() -> None:
    glossary = Glossary([Term("sales", "Money in.", aliases=("turnover",))])
    assert named_in("sales per region", LAYER) == []
    assert named_in("sales per region", LAYER, glossary) == ["revenue"]


def test_synonyms_and_meta_are_read_from_the_dbt_manifest() -> None:
    """dbt 1.11 writes a metric's `meta` into manifest.json, not into semantic_manifest.json."""
    semantic = {"metrics": [{"name": "revenue", "type": "simple", "config": {"meta": {}}}]}
    manifest = {
        "metrics": {
            "metric.p.revenue": {
                "name": "revenue",
                "config": {"meta": {"synonyms": ["turnover", "takings"], "owner": "finance"}},
            }
        }
    }
    metric = read_semantic_manifest(semantic, manifest).metrics["revenue"]
    assert metric.synonyms == ("turnover", "takings")
    assert metric.meta == (("owner", "finance"),)
    assert metric.names == ("revenue", "turnover", "takings")
    # written in the semantic manifest itself, or as text, it is read there
    semantic["metrics"][0]["config"] = {"meta": {"synonyms": "sales, takings"}}
    assert read_semantic_manifest(semantic, manifest).metrics["revenue"].synonyms == (
        "sales",
        "takings",
    )
    assert read_semantic_manifest(semantic).metrics["revenue"].synonyms == ("sales", "takings")
