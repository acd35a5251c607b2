"""Fixtures every part of the suite shares: the demo warehouse and its golden set, the shop dbt
project (built with dbt-duckdb into a temporary directory, so nothing is written next to the
project's files), the defog-data databases in DuckDB, each built once per run (by one xdist
worker for all), and a fresh Slack Web API stand-in."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.evaluation.defog import CORPORA, build_defog, databases
from agent.evaluation.golden import GoldenSet, load_golden
from connectors.demo.build import ensure_demo
from connectors.duckdb.connector import DuckDBConnector
from tests.support import file_seconds
from tests.support.demo_day import TODAY
from tests.support.needs import unavailable
from tests.support.once import once
from tests.support.shop_build import BuiltProject, build_shop
from tests.support.standin import SlackStandin

DEMO_GOLDEN = Path(__file__).resolve().parents[1] / "evals" / "demo.yaml"


@pytest.hookimpl(trylast=True)  # after the marks are added and `-m` has deselected
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Test files in order of their estimated cost, dearest first, each file's tests in their
    own order: `-n N --dist loadfile` hands whole files to workers in this order
    (`--no-loadscope-reorder`), so the long end-to-end files start early instead of running
    alone at the end while the other workers idle (tests/support/file_seconds.py)."""
    seconds = file_seconds.recorded()
    cost: dict[Path, float] = {}
    for item in items:
        name = item.path.relative_to(file_seconds.ROOT).as_posix()
        if name in seconds:
            cost[item.path] = seconds[name]
            continue
        each = file_seconds.SLOW_S if item.get_closest_marker("slow") else file_seconds.FAST_S
        cost[item.path] = cost.get(item.path, 0.0) + each
    items.sort(key=lambda item: -cost[item.path])


@pytest.fixture(scope="session")
def demo_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo warehouse as seen on TODAY (its data ending 2026-10-31), built once; a test that
    needs a data directory copies it there (`data_dir_with`, which keeps its last-day file)."""
    return once(tmp_path_factory, "demo", lambda folder: ensure_demo(folder, today=TODAY))


@pytest.fixture(scope="session")
def demo(demo_file: Path) -> Iterator[DuckDBConnector]:
    """One connector shared by the session's tests, as the bot shares one across threads."""
    connector = DuckDBConnector(demo_file)
    yield connector
    connector.close()


@pytest.fixture(scope="session")
def demo_golden() -> GoldenSet:
    return load_golden(DEMO_GOLDEN)


@pytest.fixture(scope="session")
def shop_project(tmp_path_factory: pytest.TempPathFactory) -> BuiltProject:
    return once(tmp_path_factory, "dbt", build_shop)


@pytest.fixture(scope="session")
def shop_warehouse(shop_project: BuiltProject) -> Iterator[DuckDBConnector]:
    """The built shop as querybot reads it: a read-only DuckDB connector."""
    connector = DuckDBConnector(shop_project.database)
    yield connector
    connector.close()


@pytest.fixture(scope="session")
def defog_duckdb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding each defog-data database as `<name>.duckdb` (`build_defog`), built once
    for the tests that read them (read-only: DuckDB lets several processes read one file)."""
    if not (CORPORA / "defog-data").is_dir():
        unavailable(f"the shared corpora are missing ({CORPORA})")

    def build(folder: Path) -> Path:
        for name in databases():
            build_defog(name, folder / f"{name}.duckdb")
        return folder

    return once(tmp_path_factory, "defog-duckdb", build)


@pytest.fixture
def slack() -> Iterator[SlackStandin]:
    """A fresh Web API stand-in; fails the test if the bot sent anything Slack would refuse."""
    with SlackStandin() as standin:
        yield standin
        standin.assert_clean()
