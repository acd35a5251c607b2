"""A dbt project directory named as the project: querybot runs `dbt parse` there first
(agent/semantic/dbt_parse.py), bounded in time, and says what to do when dbt is missing, fails or
hangs. A target/ directory is read as it is."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from agent.semantic.artifacts import DbtProjectError, ProjectArtifacts
from agent.semantic.dbt_parse import DbtParseError, find_dbt, parse_project
from tests.support.needs import unavailable
from tests.support.shop_build import copy_shop


def _dbt() -> Path:
    dbt = find_dbt()
    if dbt is None:
        unavailable("dbt is not installed (`uv sync` installs it with the dev group)")
    return dbt


@pytest.mark.slow
def test_a_project_directory_is_parsed_then_read(tmp_path: Path) -> None:
    _dbt()
    root = copy_shop(tmp_path)
    assert not (root / "target").exists()  # nothing dbt wrote: only the project's files
    project = ProjectArtifacts(root)
    artifacts = project.current()
    assert artifacts.target == (root / "target").resolve()
    assert artifacts.documentation.table("shop.main.fct_orders") is not None
    assert artifacts.semantic is not None and "net_revenue" in artifacts.semantic.metrics
    assert artifacts.semantic.metrics["revenue"].synonyms == ("turnover", "takings")


@pytest.mark.slow
def test_a_project_dbt_cannot_parse_says_what_dbt_said(tmp_path: Path) -> None:
    _dbt()
    root = copy_shop(tmp_path)
    (root / "models" / "broken.sql").write_text("select * from {{ ref('nowhere') }}\n")
    with pytest.raises(DbtProjectError) as raised:
        ProjectArtifacts(root)
    message = str(raised.value)
    assert message.startswith(f"`dbt parse` failed in {root}; mend the project")
    assert "depends on a node named 'nowhere' which was not found" in message
    assert "\x1b[" not in message  # no terminal colours


def test_without_dbt_a_project_directory_says_how_to_go_on(tmp_path: Path) -> None:
    (tmp_path / "dbt_project.yml").write_text("name: p\n")
    with pytest.raises(DbtParseError, match=r"dbt is not installed here: install querybot\[dbt\]"):
        parse_project(tmp_path, dbt=tmp_path / "bin" / "dbt")


def test_a_parse_that_does_not_finish_is_stopped(tmp_path: Path) -> None:
    """A stand-in for dbt that never finishes (a real parse cannot be made to hang)."""
    hanging = tmp_path / "dbt"
    hanging.write_text("#!/bin/sh\nexec sleep 60\n")
    hanging.chmod(hanging.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(DbtParseError, match=r"did not finish in 0\.5 s and was stopped"):
        parse_project(tmp_path, dbt=hanging, timeout_s=0.5)


def test_a_target_directory_is_read_as_it_is(tmp_path: Path) -> None:
    """Named directly, target/ is not parsed again, even inside a project dbt would refuse."""
    (tmp_path / "dbt_project.yml").write_text("this is not: [a dbt project\n")
    target = tmp_path / "target"
    target.mkdir()
    (target / "manifest.json").write_text('{"nodes": {}, "metadata": {"project_name": "p"}}')
    assert ProjectArtifacts(target).current().documentation.source == "dbt project p"
    assert ProjectArtifacts(target / "manifest.json").current().target == target
