"""How the local model's server is built (bench/local_model.py): for the instruction sets the CPU
lists, never for AMX, which a virtual machine may not enable (the server then dies of a general
protection fault on its first request)."""

from __future__ import annotations

from pathlib import Path

from bench.local_model import cmake_args

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
