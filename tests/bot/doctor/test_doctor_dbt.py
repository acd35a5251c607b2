"""`querybot doctor` on a warehouse with a dbt project: what it reads, whether its models are
this warehouse's tables, and whether a metric compiles to SQL the gate accepts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bot.config import Warehouse
from bot.doctor.deployment import check_warehouse
from bot.doctor.report import render
from connectors import open_connector
from connectors.base import Connector
from tests.support.shop_build import BuiltProject

pytestmark = pytest.mark.slow


def _check(shop: BuiltProject, project: Path, tmp_path: Path) -> str:
    spec = f"duckdb:{shop.database}"
    warehouse = Warehouse("shop", spec, spec, dbt_project=project)

    def opener(w: Warehouse) -> Connector:
        return open_connector(w.spec, data_dir=tmp_path)

    return render([check_warehouse(warehouse, opener)])


def test_the_shop_project_is_read_and_a_metric_compiles(
    shop_project: BuiltProject, tmp_path: Path
) -> None:
    out = _check(shop_project, shop_project.target, tmp_path)
    assert (
        "✓ dbt project shop: 5 of its models are tables here; 2 value lists, 1 join key; "
        "catalog.json read" in out
    )
    assert "✓ metric questions: 6 metrics (revenue, order_count, refunds, " in out


def test_a_project_parsed_for_another_warehouse_says_what_to_run(
    shop_project: BuiltProject, tmp_path: Path
) -> None:
    target = tmp_path / "target"
    shutil.copytree(shop_project.target, target)
    manifest = json.loads((target / "manifest.json").read_text())
    for node in manifest["nodes"].values():
        if node.get("relation_name"):
            node["relation_name"] = node["relation_name"].replace('"main"', '"elsewhere"')
    (target / "manifest.json").write_text(json.dumps(manifest))
    catalog = json.loads((target / "catalog.json").read_text())
    for entry in catalog["nodes"].values():
        entry["metadata"]["schema"] = "elsewhere"
    (target / "catalog.json").write_text(json.dumps(catalog))
    out = _check(shop_project, target, tmp_path)
    assert "is a table here: run `dbt parse` with this warehouse's profile." in out
    missing = _check(shop_project, tmp_path / "nowhere", tmp_path)
    assert "✗ dbt project: No manifest.json in" in missing
