"""The Docker image without Docker: its Dockerfile and compose file read as data, and its file
set built the way `docker build` builds it, so tests can run querybot from what the image holds.

`build_image` copies exactly what the Dockerfile's COPY lines copy from the build context (the
checkout, less what .dockerignore leaves out) into a directory standing for the image's `/`,
creates the data directory the image's user owns, and makes everything else read-only, as it is
for that user. The image's virtual environment is stood in for by this checkout's (the same
uv.lock, plus the dev group); `Image.command` runs the image's entrypoint script (`querybot`,
[project.scripts]) with the image's copy of the code first on `sys.path` and this checkout taken
off it, so a module the image lacks fails to import instead of being found here.

Run as root, the command drops every capability first (`setpriv`), so the file modes hold for
it as they hold for the image's user: only the data directory is writable.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.support.needs import unavailable

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "Dockerfile"
COMPOSE = REPO / "docker-compose.yml"
DOCKERIGNORE = REPO / ".dockerignore"

#: Environment the python base image sets itself (the rest of the image's comes from ENV).
BASE_ENV = {"LANG": "C.UTF-8"}

#: Runs the image's entrypoint: argv is the image's app directory, this checkout, the script's
#: `module:function`, then querybot's arguments.
BOOT = """
import importlib, sys
app, repo, entry = sys.argv[1:4]
sys.path[:] = [app, *(p for p in sys.path[1:] if p not in (repo, ""))]
module, _, function = entry.partition(":")
main = getattr(importlib.import_module(module), function)
where = sys.modules[module].__file__
if not where.startswith(app + "/"):
    sys.exit(f"{module} was imported from {where}, not from the image's {app}")
sys.argv = ["querybot", *sys.argv[4:]]
sys.exit(main(sys.argv[1:]))
"""


@dataclass(frozen=True)
class Instruction:
    keyword: str
    arguments: str

    def json_list(self) -> list[str]:
        """The arguments of an exec-form instruction (ENTRYPOINT, CMD, VOLUME)."""
        value = json.loads(self.arguments)
        assert isinstance(value, list), f"{self.keyword} is not in exec (JSON) form"
        return [str(v) for v in value]

    def words(self) -> list[str]:
        return shlex.split(self.arguments)


def instructions(text: str | None = None) -> list[Instruction]:
    """The Dockerfile's instructions, continuation lines joined and comments dropped."""
    text = DOCKERFILE.read_text(encoding="utf-8") if text is None else text
    result: list[Instruction] = []
    current = ""
    for line in text.splitlines():
        if line.strip().startswith("#"):
            continue
        if line.rstrip().endswith("\\"):
            current += line.rstrip()[:-1] + " "
            continue
        current += line
        if current.strip():
            keyword, _, arguments = current.strip().partition(" ")
            result.append(Instruction(keyword.upper(), arguments.strip()))
        current = ""
    return result


def env_of(found: list[Instruction]) -> dict[str, str]:
    """Every ENV setting, later ones winning (`KEY=VALUE` pairs; `$` expansion is refused)."""
    env: dict[str, str] = {}
    for instruction in found:
        if instruction.keyword == "ENV":
            for word in instruction.words():
                key, sep, value = word.partition("=")
                assert sep and "$" not in value, f"ENV {word!r}: only plain KEY=VALUE is read"
                env[key] = value
    return env


def compose() -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def entry_point() -> str:
    """`module:function` of the `querybot` script (pyproject's [project.scripts])."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return str(project["project"]["scripts"]["querybot"])


# -- .dockerignore ------------------------------------------------------------------------


@dataclass(frozen=True)
class IgnorePattern:
    regex: re.Pattern[str]
    exclusion: bool  # a `!pattern`: puts back what an earlier pattern left out


def _regex(pattern: str) -> re.Pattern[str]:
    """Docker's pattern syntax: `*` and `?` within one path element, `**` across any number."""
    out, i = "", 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**", i):
            i += 2
            if pattern.startswith("/", i):
                out, i = out + "(?:.*/)?", i + 1
            else:
                out += ".*"
            continue
        if char == "*":
            out += "[^/]*"
        elif char == "?":
            out += "[^/]"
        elif char == "[":
            end = pattern.index("]", i)
            out += "[" + pattern[i + 1 : end].replace("!", "^", 1) + "]"
            i = end
        else:
            out += re.escape(char)
        i += 1
    return re.compile(out + r"\Z")


def ignore_patterns(text: str | None = None) -> list[IgnorePattern]:
    text = DOCKERIGNORE.read_text(encoding="utf-8") if text is None else text
    patterns = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        exclusion = line.startswith("!")
        cleaned = posixpath.normpath(line.removeprefix("!").strip().lstrip("/"))
        patterns.append(IgnorePattern(_regex(cleaned), exclusion))
    return patterns


def ignored(path: str, patterns: list[IgnorePattern]) -> bool:
    """Whether the build context leaves out `path` (relative, `/`-separated): the last pattern
    matching it or one of its parent directories decides (moby's MatchesOrParentMatches)."""
    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    matched = False
    for pattern in patterns:
        if pattern.exclusion != matched:
            continue
        if any(pattern.regex.match(p) for p in prefixes):
            matched = not pattern.exclusion
    return matched


# -- the image's file set -----------------------------------------------------------------


@dataclass(frozen=True)
class Image:
    """The image's file set under `root` (the image's `/`), and how it runs."""

    root: Path
    workdir: str
    env: dict[str, str]
    entrypoint: list[str]
    cmd: list[str]

    def path(self, inside: str) -> Path:
        """Where the image's absolute path `inside` is in the file set."""
        assert inside.startswith("/"), inside
        return self.root / inside.lstrip("/")

    @property
    def app(self) -> Path:
        return self.path(self.workdir)

    @property
    def data(self) -> Path:
        return self.path(self.env["QUERYBOT_DATA_DIR"])

    def mount(self, inside: str) -> Path:
        """An empty directory at `inside` for a test to fill, as a bind mount shows one there."""
        target = self.path(inside)
        mode = target.parent.stat().st_mode
        target.parent.chmod(mode | stat.S_IWUSR)
        try:
            target.mkdir()
        finally:
            target.parent.chmod(mode)
        return target

    def environ(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """The container's environment: the base image's, the Dockerfile's ENV with its paths
        moved into the file set, then `extra` (what .env and compose add). Nothing is taken
        from the test's own environment but PATH, which finds `setpriv`."""
        mapped = {k: str(self.path(v)) if v.startswith("/") else v for k, v in self.env.items()}
        return {"PATH": os.environ["PATH"], **BASE_ENV, **mapped, **(extra or {})}

    def command(self, args: list[str]) -> list[str]:
        """The image's ENTRYPOINT with `args`, run from the file set (see the module doc)."""
        venv_script = posixpath.join(self.workdir, ".venv/bin/querybot")
        assert self.entrypoint == [venv_script], f"only {venv_script} is stood in for"
        drop = ["setpriv", "--bounding-set=-all", "--inh-caps=-all"] if os.geteuid() == 0 else []
        boot = [sys.executable, "-c", BOOT, str(self.app), str(REPO), entry_point()]
        return [*drop, *boot, *args]

    def run(
        self, args: list[str], env: dict[str, str] | None = None, *, timeout: float = 300
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(args),
            cwd=self.app,
            env=self.environ(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )


def _context_files(source: str, patterns: list[IgnorePattern]) -> list[str]:
    """The build context's files under `source` (a file or a directory), less the ignored."""
    top = REPO / source
    assert top.exists(), f"COPY {source}: not in the build context"
    if top.is_file():
        return [] if ignored(source, patterns) else [source]
    found = []
    for path in sorted(top.rglob("*")):
        relative = path.relative_to(REPO).as_posix()
        if path.is_file() and not ignored(relative, patterns):
            found.append(relative)
    return found


def _copy(
    instruction: Instruction, workdir: str, root: Path, patterns: list[IgnorePattern]
) -> None:
    words = instruction.words()
    flags = [w for w in words if w.startswith("--")]
    assert not flags, f"COPY {instruction.arguments}: flags are not modelled here"
    *sources, dest = words
    dest_path = posixpath.join(workdir, dest)
    into_dir = dest.endswith("/") or len(sources) > 1
    for source in sources:
        files = _context_files(source, patterns)
        assert files, f"COPY {source}: everything in it is ignored"
        for relative in files:
            if (REPO / source).is_dir():
                target = posixpath.join(dest_path, posixpath.relpath(relative, source))
            elif into_dir:
                target = posixpath.join(dest_path, posixpath.basename(relative))
            else:
                target = dest_path
            out = root / posixpath.normpath(target).lstrip("/")
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / relative, out)


def _read_only(top: Path, keep: Path) -> None:
    """Take write permission off everything under `top` but `keep` (and what is under it)."""
    for path in sorted(top.rglob("*"), reverse=True):
        if path == keep or keep in path.parents:
            continue
        mode = path.stat().st_mode
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    top.chmod(top.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def build_image(into: Path) -> Image:
    """The image's file set under `into` (see the module doc)."""
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        unavailable("setpriv (util-linux), to run the image's commands without root's rights")
    found = instructions()
    patterns = ignore_patterns()
    root = into / "image"
    root.mkdir()
    workdir = "/"
    for instruction in found:
        if instruction.keyword == "WORKDIR":
            workdir = posixpath.join(workdir, instruction.arguments)
            (root / workdir.lstrip("/")).mkdir(parents=True, exist_ok=True)
        elif instruction.keyword in {"COPY", "ADD"}:
            _copy(instruction, workdir, root, patterns)
    last = {i.keyword: i for i in found}
    image = Image(
        root=root,
        workdir=workdir,
        env=env_of(found),
        entrypoint=last["ENTRYPOINT"].json_list(),
        cmd=last["CMD"].json_list(),
    )
    image.data.mkdir(parents=True)  # the RUN that creates it for the image's user
    _read_only(root, keep=image.data)
    return image
