"""The container (issue 17, item 8), without a Docker engine: the Dockerfile and the compose file
read as data and held to their rules, and `querybot` run from the image's file set (built the
way the Dockerfile builds it, tests/support/container_image.py) as the image's user, who may write
only the data directory. The HTTP service itself is run the same way in
tests/e2e/test_container_service.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agent.evaluation.golden import load_golden
from tests.agent.evaluation.conftest import gold_script
from tests.support.container_image import (
    COMPOSE,
    Image,
    build_image,
    compose,
    entry_point,
    env_of,
    ignore_patterns,
    ignored,
    instructions,
)

#: Where compose mounts ./config for QUERYBOT_CONFIG and QUERYBOT_GLOSSARY.
CONFIG_DIR = "/config"
#: The secret each mode cannot start without, by compose profile.
MODE_SECRET = {"socket": "SLACK_APP_TOKEN", "http": "SLACK_SIGNING_SECRET"}
REGIONS = "SELECT COUNT(*) AS regions FROM demo.main.regions"


def services() -> dict[str, dict]:
    return compose()["services"]


def started_by(profiles: set[str]) -> set[str]:
    """The services `docker compose --profile P... up` starts: those with no profile, and
    those with one of `profiles`."""
    return {
        name
        for name, service in services().items()
        if not service.get("profiles") or profiles & set(service["profiles"])
    }


def service_args(name: str) -> list[str]:
    """What the service runs after the image's ENTRYPOINT: its command, else the image's CMD."""
    found = instructions()
    cmd = [i for i in found if i.keyword == "CMD"][-1].json_list()
    return [str(a) for a in services()[name].get("command", cmd)]


def mounts(name: str) -> dict[str, str]:
    """The service's volumes (short syntax), target -> `source[:mode]`."""
    found = {}
    for volume in services()[name].get("volumes", []):
        source, target, *mode = str(volume).split(":")
        found[target] = ":".join([source, *mode])
    return found


# -- the compose file ---------------------------------------------------------------------


def test_each_mode_is_a_profile_that_starts_only_its_own_service() -> None:
    assert set(services()) == {"querybot", "querybot-http"}
    assert started_by({"http"}) == {"querybot-http"}
    assert started_by({"socket"}) == {"querybot"}
    assert started_by(set()) == set(), "a service without a profile starts with every profile"
    assert service_args("querybot") == ["run"]
    assert service_args("querybot-http")[:2] == ["run", "--http"]
    # the usage the file's own comments give names these profiles and no others
    usage = set(re.findall(r"--profile (\w+)", COMPOSE.read_text(encoding="utf-8")))
    assert usage == set(MODE_SECRET)
    for name in services():
        assert set(services()[name]["profiles"]) <= set(MODE_SECRET)


def test_each_service_keeps_its_state_in_a_volume_of_its_own() -> None:
    data_dir = env_of(instructions())["QUERYBOT_DATA_DIR"]
    volumes = {name: mounts(name)[data_dir] for name in services()}
    assert len(set(volumes.values())) == len(volumes), f"services share a state volume: {volumes}"
    declared = set(compose()["volumes"])
    for name, volume in volumes.items():
        assert volume in declared, f"{name}: {volume} is not a named volume"


def test_a_configuration_error_is_retried_a_few_times_then_left_stopped() -> None:
    for name, service in services().items():
        policy = str(service.get("restart"))
        found = re.fullmatch(r"on-failure:(\d+)", policy)
        assert found, f"{name}: restart {policy!r} restarts a failing start forever"
        assert 1 <= int(found.group(1)) <= 10


def test_config_files_mount_read_only_at_one_documented_place() -> None:
    for name in services():
        assert mounts(name)[CONFIG_DIR] == "./config:ro", name
    text = COMPOSE.read_text(encoding="utf-8")
    assert f"QUERYBOT_CONFIG={CONFIG_DIR}/" in text and f"QUERYBOT_GLOSSARY={CONFIG_DIR}/" in text


def test_the_http_service_publishes_the_port_it_listens_on() -> None:
    args = service_args("querybot-http")
    port = args[args.index("--port") + 1]
    assert services()["querybot-http"]["ports"] == [f"{port}:{port}"]
    exposed = [i.arguments for i in instructions() if i.keyword == "EXPOSE"]
    assert exposed == [port]


# -- the Dockerfile -----------------------------------------------------------------------


def test_the_base_image_and_uv_are_pinned_by_version() -> None:
    found = instructions()
    base = [i.arguments for i in found if i.keyword == "FROM"]
    assert len(base) == 1
    assert re.fullmatch(r"python:3\.11\.\d+-slim-\w+(@sha256:[0-9a-f]{64})?", base[0]), base[0]
    packages = [
        word
        for i in found
        if i.keyword == "RUN"
        for command in i.arguments.split("&&")
        if command.split()[:2] == ["pip", "install"]
        for word in command.split()[2:]
        if not word.startswith("-")
    ]
    assert any(p.startswith("uv==") for p in packages), packages
    for package in packages:
        assert re.fullmatch(r"[\w-]+==\d+\.\d+\.\d+", package), f"{package} is not pinned"


def test_the_image_runs_as_a_user_who_owns_only_the_data_directory() -> None:
    found = instructions()
    data_dir = env_of(found)["QUERYBOT_DATA_DIR"]
    users = [i for i in found if i.keyword == "USER"]
    assert len(users) == 1
    uid = users[0].arguments.split(":")[0]
    assert uid.isdigit() and int(uid) != 0, "a numeric non-root uid (Kubernetes runAsNonRoot)"
    chowns = [
        word
        for i in found
        if i.keyword == "RUN"
        for command in i.arguments.split("&&")
        if command.split()[:1] == ["chown"]
        for word in command.split()[1:]
    ]
    owner, *paths = chowns
    assert not owner.startswith("-"), "no recursive chown: only the directory itself"
    assert paths == [data_dir]
    assert all("--chown" not in i.arguments for i in found if i.keyword in {"COPY", "ADD"})
    volumes = [i.json_list() for i in found if i.keyword == "VOLUME"]
    assert volumes == [[data_dir]]
    # HOME (matplotlib's cache) is the data directory, set after every build step
    assert env_of(found)["HOME"] == data_dir


def test_the_entrypoint_is_the_installed_script() -> None:
    """Not `uv run`: uv would check the root-owned environment, and sync it, at each start."""
    found = instructions()
    workdir = [i.arguments for i in found if i.keyword == "WORKDIR"][-1]
    entrypoint = [i.json_list() for i in found if i.keyword == "ENTRYPOINT"]
    assert entrypoint == [[f"{workdir}/.venv/bin/querybot"]]
    assert entry_point() == "bot.cli:main"


def test_dockerignore_patterns_as_docker_reads_them() -> None:
    patterns = ignore_patterns("data\n**/__pycache__\n.env\n.env.*\nbench\n!bench/keep.py\n")
    assert ignored("data", patterns) and ignored("data/state.sqlite", patterns)
    assert ignored("bot/__pycache__/cli.cpython-311.pyc", patterns)
    assert ignored("__pycache__/x.pyc", patterns)
    assert ignored(".env", patterns) and ignored(".env.local", patterns)
    assert not ignored(".env.example.d/x", ignore_patterns(".env\n"))
    assert not ignored("bot/data.py", patterns) and not ignored("connectors/data/x", patterns)
    assert ignored("bench/load.py", patterns) and not ignored("bench/keep.py", patterns)
    # the real file keeps secrets and local state out, and the code in
    real = ignore_patterns()
    for secret in (".env", ".env.production", "data/audit.sqlite", "config/querybot.toml"):
        assert ignored(secret, real), secret
    for needed in ("bot/cli.py", "connectors/demo/build.py", "evals/demo.yaml", "uv.lock"):
        assert not ignored(needed, real), needed


# -- querybot run from the image's file set -----------------------------------------------


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> Image:
    return build_image(tmp_path_factory.mktemp("container"))


@pytest.fixture(scope="module")
def script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scripted model that proposes REGIONS."""
    path = tmp_path_factory.mktemp("model") / "regions.jsonl"
    reply = {"kind": "sql", "explanation": "Counts regions.", "sql": REGIONS}
    path.write_text(json.dumps(reply) + "\n", encoding="utf-8")
    return path


def test_the_image_holds_only_what_the_dockerfile_copies(image: Image) -> None:
    top = {p.name for p in image.app.iterdir()}
    copied = {"pyproject.toml", "uv.lock", "README.md", "agent", "bot", "connectors", "evals"}
    assert top == copied | {image.data.name}
    assert not list(image.app.rglob("__pycache__"))
    assert (image.app / "evals" / "demo.yaml").is_file()
    assert image.data.parent == image.app and image.data.is_dir()


def test_help_runs_in_the_image(image: Image) -> None:
    done = image.run(["--help"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: querybot")
    for command in ("run", "ask", "eval", "doctor", "gate"):
        assert command in done.stdout


@pytest.mark.slow
def test_the_demo_evaluation_runs_in_the_image(image: Image, tmp_path: Path) -> None:
    golden = load_golden(image.app / "evals" / "demo.yaml")
    model = gold_script(golden, tmp_path / "gold.jsonl")
    env = {
        "QUERYBOT_MODEL": f"scripted:{model}",
        "QUERYBOT_WAREHOUSE": "demo",
        "QUERYBOT_PROFILE_VALUES": "off",
    }
    done = image.run(["eval", "evals/demo.yaml", "--out", "data/demo-report.json"], env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"Accuracy: 100.0% ({len(golden.questions)}/{len(golden.questions)}" in done.stdout
    report = json.loads((image.data / "demo-report.json").read_text(encoding="utf-8"))
    assert report["summary"]["accuracy"] == 1.0
    assert (image.data / "demo.duckdb").is_file(), "the demo warehouse is built in the data dir"
    # the image's user writes nowhere else: Python would have cached bytecode next to the code
    assert not list(image.app.rglob("__pycache__"))


@pytest.mark.slow
def test_config_and_glossary_files_are_read_from_the_config_mount(
    image: Image, script: Path
) -> None:
    config = image.mount(CONFIG_DIR)
    (config / "querybot.toml").write_text(
        'default = "shop"\n\n[warehouses.shop]\nspec = "demo"\n', encoding="utf-8"
    )
    (config / "glossary.yaml").write_text(
        "terms:\n  - term: region\n    definition: A sales region.\n    tables: [regions]\n",
        encoding="utf-8",
    )
    for path in (config / "querybot.toml", config / "glossary.yaml", config):
        path.chmod(0o555 if path.is_dir() else 0o444)  # mounted :ro
    env = {
        "QUERYBOT_MODEL": f"scripted:{script}",
        "QUERYBOT_CONFIG": str(config / "querybot.toml"),
        "QUERYBOT_GLOSSARY": str(config / "glossary.yaml"),
        "QUERYBOT_PROFILE_VALUES": "off",
    }
    done = image.run(["ask", "--yes", "How many regions are there?"], env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "regions" in done.stdout and "Counts regions." in done.stdout

    # and the glossary is read: one that is not there stops the command
    missing = {**env, "QUERYBOT_GLOSSARY": str(config / "absent.yaml")}
    done = image.run(["ask", "--yes", "How many regions are there?"], missing)
    assert done.returncode == 2 and "QUERYBOT_GLOSSARY" in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("name", ["querybot", "querybot-http"])
def test_a_missing_slack_secret_stops_the_service_with_a_message_not_a_traceback(
    image: Image, script: Path, name: str
) -> None:
    """One line and exit 2, which `restart: on-failure:N` counts as a failure (N retries, then
    the container stays stopped)."""
    (profile,) = services()[name]["profiles"]
    secret = MODE_SECRET[profile]
    env = {
        "QUERYBOT_MODEL": f"scripted:{script}",
        "QUERYBOT_WAREHOUSE": "demo",
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_APP_TOKEN": "xapp-test",
        "SLACK_SIGNING_SECRET": "test-secret",
    }
    del env[secret]
    done = image.run(service_args(name), env, timeout=120)
    assert done.returncode == 2, done.stderr[-3000:]
    (line,) = done.stderr.strip().splitlines()  # what `docker compose logs` shows, each retry
    assert line.startswith("querybot cannot start: ") and secret in line
