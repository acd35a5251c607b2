"""sql-eval's gold SQL over the defog-data schemas: at most 0.5% false rejections per dialect."""

from __future__ import annotations

import pytest

from agent.gate import check_sql
from tests.support import corpora

pytestmark = pytest.mark.slow

MAX_FALSE_REJECTIONS = 0.005


@pytest.mark.parametrize("dialect", corpora.GOLD_DIALECTS)
def test_gold_sql_is_accepted(dialect: str, corpora_ready: None) -> None:
    gold = corpora.gold(dialect)
    assert len(gold) > 300
    rejected = []
    for answer in gold:
        schema = corpora.defog_schema(answer.db, dialect)
        verdict = check_sql(answer.sql, schema)
        if not verdict.ok:
            rejected.append(f"{answer.db}: {answer.sql[:120]} -> {verdict.reasons}")
            continue
        again = check_sql(verdict.sql, schema)
        assert again.sql == verdict.sql, f"not a fixpoint: {answer.sql}"
    assert len(rejected) <= MAX_FALSE_REJECTIONS * len(gold), "\n".join(rejected)
