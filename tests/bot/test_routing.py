"""Routing: one process, one Agent per configured warehouse (the real agents over the demo
DuckDB file and a SQLite file, a scripted model), each thread answered by its channel's warehouse;
the override asked first; channels no warehouse answers refused politely."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from slack_sdk import WebClient

from agent.evaluation.golden import load_golden
from bot.cli import main
from bot.config import DeploymentConfig, load_config
from bot.routing import Route, RoutedChannelRules, Router, unmapped
from bot.settings import Settings
from bot.wiring import Deployment
from connectors.base import ConnectorError, TableInfo, WarehouseUnavailable
from connectors.demo.build import ensure_demo
from connectors.duckdb.connector import DuckDBConnector
from tests.support.demo_day import TODAY

DEMO_SQL = "SELECT COUNT(*) AS regions FROM demo.main.regions"
SURVEY_SQL = "SELECT answer, COUNT(*) AS n FROM surveys GROUP BY answer ORDER BY answer"


def survey_file(folder: Path) -> Path:
    path = folder / "survey.db"
    with closing(sqlite3.connect(path)) as con, con:
        con.execute("CREATE TABLE surveys (id INTEGER PRIMARY KEY, answer TEXT NOT NULL)")
        con.executemany("INSERT INTO surveys (answer) VALUES (?)", [("yes",), ("no",), ("yes",)])
    return path


def settings_for(tmp_path: Path, replies: list[str], config: Path | None = None) -> Settings:
    script = tmp_path / "script.jsonl"
    lines = [json.dumps({"kind": "sql", "explanation": "Counts.", "sql": s}) for s in replies]
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {
        "QUERYBOT_MODEL": f"scripted:{script}",
        "QUERYBOT_DATA_DIR": str(tmp_path / "data"),
        # routing reads no value profile: scanning the demo's columns in the background would
        # only make each deployment's close wait for it
        "QUERYBOT_PROFILE_VALUES": "off",
    }
    if config:
        env["QUERYBOT_CONFIG"] = str(config)
    return Settings.from_env(env, dotenv=False)


def two_warehouses(tmp_path: Path, demo_file: Path, *, default: bool) -> Path:
    survey = survey_file(tmp_path)
    path = tmp_path / "querybot.toml"
    path.write_text(
        ('default = "shop"\n' if default else "")
        + f'[warehouses.shop]\nspec = "duckdb:{demo_file}"\ndescription = "the demo shop"\n'
        + f'[warehouses.survey]\nspec = "sqlite:///{survey}"\nrow_limit = 2\n'
        + '[channels]\nC0SURVEY01 = "survey"\nC0SHOP0001 = "shop"\n',
        encoding="utf-8",
    )
    return path


@pytest.fixture
def deployment(tmp_path: Path, demo_file: Path) -> Iterator[Deployment]:
    config = two_warehouses(tmp_path, demo_file, default=True)
    built = Deployment(settings_for(tmp_path, [SURVEY_SQL, DEMO_SQL, DEMO_SQL], config))
    yield built
    built.close()


@pytest.mark.slow
def test_each_channel_asks_its_own_warehouse(deployment: Deployment) -> None:
    router = Router(deployment.open_warehouses(), deployment.config)
    survey_thread, shop_thread = "T1:C0SURVEY01:1.0", "T1:C0ELSEWHERE:2.0"
    asks_survey = router.route(survey_thread).agent
    assert asks_survey is deployment.agents["survey"]

    outcome = asks_survey.ask(survey_thread, "answers?", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal
    assert outcome.proposal.tables == ["main.surveys"]
    pid = outcome.proposal.proposal_id
    answer = asks_survey.decide(survey_thread, pid, approved=True, user="U2")
    assert answer.kind == "answer" and answer.answer
    assert answer.answer.connector == "sqlite"
    assert answer.answer.rows == [["no", 1], ["yes", 2]]
    assert "LIMIT 2" in answer.answer.sql  # the survey warehouse's own row limit

    # an unmapped channel goes to the default (the shop)
    asks_shop = router.route(shop_thread).agent
    assert asks_shop is deployment.agents["shop"]
    outcome = asks_shop.ask(shop_thread, "how many regions?", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal
    assert outcome.proposal.tables == ["demo.main.regions"]
    assert router.route(shop_thread).is_conversation()
    assert router.route(survey_thread).is_conversation()
    assert not router.route("T1:C0SHOP0001:9.0").is_conversation()

    # one model, one audit log, one checkpointer; each warehouse its own examples and limits
    shop, survey = deployment.agents["shop"].deps, deployment.agents["survey"].deps
    assert shop.model is survey.model is deployment.model
    assert shop.audit is survey.audit is deployment.audit
    assert shop.examples is not survey.examples
    assert (shop.limits.row_limit, survey.limits.row_limit) == (1000, 2)
    events = {e["event"] for e in deployment.audit.events(survey_thread)}
    assert {"proposed", "approved", "executed"} <= events


@pytest.mark.slow
def test_the_override_is_asked_first(tmp_path: Path, demo_file: Path) -> None:
    config = two_warehouses(tmp_path, demo_file, default=True)
    deployment = Deployment(settings_for(tmp_path, [DEMO_SQL], config))
    # a per-thread agent over another connector, as the files-in-thread sandbox builds one
    connector = DuckDBConnector(ensure_demo(tmp_path / "sandbox", today=TODAY))
    special = deployment.agent_for(connector, name="sandbox")
    assert special.deps.model is deployment.model and special.deps.audit is deployment.audit
    asked: list[str] = []

    def override(thread_id: str) -> Route | None:
        asked.append(thread_id)
        return Route(thread_id, special) if thread_id.endswith(":7.0") else None

    try:
        router = Router(deployment.open_warehouses(), deployment.config, override=override)
        # the channel maps to the SQLite survey, but the override's DuckDB agent answers
        route = router.route("T1:C0SURVEY01:7.0")
        assert route.agent is special and asked == ["T1:C0SURVEY01:7.0"]
        outcome = special.ask(route.thread_id, "how many regions?", user="U1")
        assert outcome.kind == "proposal" and outcome.proposal
        assert outcome.proposal.tables == ["demo.main.regions"]
        proposal_id = outcome.proposal.proposal_id
        answer = special.decide(route.thread_id, proposal_id, approved=True, user="U2")
        assert answer.answer and answer.answer.connector == "duckdb"
        assert router.route("T1:C0SURVEY01:8.0").agent is deployment.agents["survey"]
    finally:
        special.close()
        deployment.close()


def test_without_a_default_an_unmapped_channel_gets_a_polite_note(
    tmp_path: Path, demo_file: Path
) -> None:
    config = two_warehouses(tmp_path, demo_file, default=False)
    deployment = Deployment(settings_for(tmp_path, [], config))
    try:
        router = Router(deployment.open_warehouses(), deployment.config)
        route = router.route("T1:C0RANDOM01:1.0")
        assert route.agent is None and not route.is_conversation()
        outcome = route.refused()
        assert outcome.kind == "failed"
        assert "not connected to a warehouse" in outcome.message
        assert "#C0SHOP0001 for shop (the demo shop)" in outcome.message
        assert "#C0SURVEY01 for survey" in outcome.message

        # the listeners refuse there (and in direct messages) before any work, with links
        rules = RoutedChannelRules(WebClient(token="xoxb-unused"), deployment.config)
        refusal = rules.refusal("C0RANDOM01", ext_shared=False)
        assert refusal and "<#C0SHOP0001> for shop" in refusal
        assert rules.refusal("D0DIRECT01", ext_shared=False) == refusal
        assert rules.refusal("C0SURVEY01", ext_shared=False) is None
        assert rules.refusal("C0SURVEY01", ext_shared=True) is not None  # Slack Connect still
    finally:
        deployment.close()


def test_home_tab_lists_every_warehouse_tables(deployment: Deployment) -> None:
    router = Router(deployment.open_warehouses(), deployment.config)
    held = {w.name: w for w in router.warehouses()}
    assert sorted(held) == ["shop", "survey"]
    assert [name for name, _ in held["survey"].tables] == ["main.surveys"]
    assert "demo.main.regions" in [name for name, _ in held["shop"].tables]
    # each says what it holds, as its config describes it
    assert held["shop"].description == "the demo shop"


@pytest.mark.slow
def test_close_closes_every_warehouse(tmp_path: Path, demo_file: Path) -> None:
    config = two_warehouses(tmp_path, demo_file, default=True)
    deployment = Deployment(settings_for(tmp_path, [], config))
    connectors = [a.deps.connector for a in deployment.open_warehouses().values()]
    deployment.close()
    assert deployment.agents == {}
    for connector in connectors:
        with pytest.raises(ConnectorError):
            connector.run("SELECT 1", max_rows=1, timeout_s=5)


def test_a_router_needs_an_agent_for_each_mapped_warehouse(tmp_path: Path) -> None:
    path = tmp_path / "q.toml"
    path.write_text('[warehouses.a]\nspec = "demo"\n[channels]\nC0AAAAAAA1 = "a"\n')
    config: DeploymentConfig = load_config(path, {})
    with pytest.raises(ValueError, match="No agent for the warehouse"):
        Router({}, config)


# -- the terminal -----------------------------------------------------------------------------


def test_querybot_ask_picks_a_warehouse_by_name(
    tmp_path: Path,
    demo_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = two_warehouses(tmp_path, demo_file, default=False)
    settings = settings_for(tmp_path, [SURVEY_SQL], config)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("QUERYBOT_CONFIG", str(config))
    monkeypatch.setenv("QUERYBOT_MODEL", settings.model)
    monkeypatch.setenv("QUERYBOT_PROFILE_VALUES", settings.profile_values)
    monkeypatch.setenv("QUERYBOT_DATA_DIR", str(settings.data_dir))

    # several warehouses and no default: the terminal must be told which
    assert main(["ask", "answers?", "--yes"]) == 2
    assert "no default: choose one with --warehouse NAME (shop, survey)" in capsys.readouterr().err

    assert main(["ask", "--warehouse", "survey", "answers?", "--yes"]) == 0
    out = capsys.readouterr().out
    # capped at the survey warehouse's own row_limit (2)
    assert "Sources: main.surveys · sqlite · 2+ rows" in out, out

    # the approval taught the survey warehouse (only) an example; export it as a golden set
    assert (settings.data_dir / "examples-survey.sqlite").is_file()
    assert not (settings.data_dir / "examples.sqlite").exists()
    exported = tmp_path / "approved.yaml"
    assert main(["eval", "--export-examples", str(exported), "--warehouse", "survey"]) == 0
    golden = load_golden(exported)
    assert golden.warehouse == "survey" and len(golden.questions) == 1
    assert "main.surveys" in golden.questions[0].gold[0]
    assert main(["eval", "--export-examples", str(exported), "--warehouse", "shop"]) == 0
    assert load_golden(exported).questions == ()


def test_a_warehouse_that_cannot_open_stops_the_start_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "querybot.toml"
    config.write_text('[warehouses.gone]\nspec = "sqlite:///nowhere/at/all.db"\n')
    settings = settings_for(tmp_path, [], config)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("QUERYBOT_CONFIG", str(config))
    monkeypatch.setenv("QUERYBOT_MODEL", settings.model)
    monkeypatch.setenv("QUERYBOT_PROFILE_VALUES", settings.profile_values)
    assert main(["ask", "anything?"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"Warehouse 'gone' ({config}) cannot be used:")
    assert "Traceback" not in err


def test_the_note_escapes_descriptions_for_mrkdwn(tmp_path: Path) -> None:
    path = tmp_path / "q.toml"
    path.write_text(
        '[warehouses.fin]\nspec = "demo"\ndescription = "P&L <all> of it"\n'
        '[channels]\nC0FIN00001 = "fin"\n'
    )
    config = load_config(path, {})
    assert "<#C0FIN00001> for fin (P&amp;L &lt;all&gt; of it)" in unmapped(config, links=True)
    assert "#C0FIN00001 for fin (P&L <all> of it)" in unmapped(config, links=False)


def test_querybot_eval_runs_on_a_configured_warehouse_by_name(
    tmp_path: Path,
    demo_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = two_warehouses(tmp_path, demo_file, default=True)
    settings = settings_for(tmp_path, [SURVEY_SQL], config)
    golden = tmp_path / "survey.yaml"
    golden.write_text(
        "questions:\n  - id: s1\n    category: count\n    question: How did people answer?\n"
        f"    gold: {SURVEY_SQL}\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("QUERYBOT_CONFIG", str(config))
    monkeypatch.setenv("QUERYBOT_MODEL", settings.model)
    monkeypatch.setenv("QUERYBOT_PROFILE_VALUES", settings.profile_values)
    monkeypatch.setenv("QUERYBOT_DATA_DIR", str(settings.data_dir))
    out_file = tmp_path / "report.json"
    assert main(["eval", str(golden), "--warehouse", "survey", "--out", str(out_file)]) == 0
    report = json.loads(out_file.read_text())
    # the report names the warehouse, never its spec
    assert report["meta"]["warehouse"] == "survey"
    assert report["summary"]["accuracy"] == 1.0
    capsys.readouterr()


class UnreachableDuckDB(DuckDBConnector):
    """The demo file, but its table list fails as a warehouse gone away mid-run would."""

    def list_tables(self) -> list[TableInfo]:
        raise WarehouseUnavailable("The warehouse went away.")


def test_home_tab_keeps_the_tables_of_warehouses_still_up(
    deployment: Deployment, demo_file: Path
) -> None:
    agents = deployment.open_warehouses()
    broken = UnreachableDuckDB(demo_file)
    agents["shop"] = deployment.agent_for(broken, name="shop")
    held = Router(agents, deployment.config).warehouses()
    assert [(w.name, [name for name, _ in w.tables]) for w in held] == [
        ("survey", ["main.surveys"])
    ]
    broken.close()
