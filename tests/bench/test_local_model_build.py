"""How the local model's server is built (bench/local_model.py): for the instruction sets the CPU
lists, never for AMX, which a virtual machine may not enable (the server then dies of a general
protection fault on its first request); and its help names the variables `--serve` prints."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.local_model import MODELS, cmake_args, main, querybot_settings

XEON = "avx avx2 fma f16c avx512f avx512vbmi avx512_vnni avx512_bf16 avx_vnni amx_tile amx_int8"


def options(text: str, tmp_path: Path) -> dict[str, str]:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(text, encoding="utf-8")
    pairs = (arg.removeprefix("-D").split("=") for arg in cmake_args(cpuinfo).split())
    return dict(pairs)


def test_what_the_cpu_lists_is_used_and_amx_never(tmp_path: Path) -> None:
    built = options(f"processor\t: 0\nflags\t\t: fpu sse2 {XEON}\n", tmp_path)
    assert built["GGML_NATIVE"] == "OFF"
    assert built["GGML_AVX512"] == built["GGML_AVX512_VNNI"] == built["GGML_AVX2"] == "ON"
    assert built["GGML_AMX_TILE"] == built["GGML_AMX_INT8"] == "OFF"


def test_a_cpu_without_avx512_is_built_without_it(tmp_path: Path) -> None:
    built = options("flags\t\t: fpu sse2 avx avx2 fma f16c\n", tmp_path)
    assert built["GGML_AVX2"] == "ON"
    assert built["GGML_AVX512"] == built["GGML_AVX_VNNI"] == "OFF"


def test_no_cpuinfo_builds_with_no_extension(tmp_path: Path) -> None:
    built = cmake_args(tmp_path / "missing")
    assert "=ON" not in built and "-DGGML_NATIVE=OFF" in built


def test_help_names_every_variable_serve_prints(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    said = " ".join(capsys.readouterr().out.split())
    printed = querybot_settings(MODELS["1.5b"], "http://127.0.0.1:8080/v1")
    assert list(printed) == ["QUERYBOT_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"]
    assert "prints the three variables" in said
    assert all(f"`{name}" in said for name in printed)
    readme = " ".join((Path(__file__).parents[2] / "README.md").read_text().split())
    assert "prints the three variables to set (`QUERYBOT_MODEL`, `OPENAI_BASE_URL`, " in readme
