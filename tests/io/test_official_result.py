"""Official mode reads the tool's saved result from a temporary directory it then removes, asks
for no dataset that needs a download, and puts closed- and open-loop levels on the server with
the tools' own options, checking what they report back."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

from tui.config import BenchConfig
from tui.engine.bench.level_fields import level_fields
from tui.engine.bench.load_plan import LoadLevel
from tui.engine.bench.official_bench import OfficialRun, official_argv
from tui.engine.bench.official_result import result_fields
from tui.io.bench.official_run import OfficialSetup, official_level
from tui.io.transport.host_session import HostSession

RESULT = {
    "date": "20260101-000000", "completed": 7, "failed": 1, "duration": 2.0,
    "request_throughput": 3.5, "output_throughput": 321.25, "median_ttft_ms": 45.5,
    "mean_e2el_ms": 900.0, "ttfts": [0.1, 0.2], "model_id": "m",
}  # fmt: skip


def _stand_in(tool: Path, seen: Path, body: str) -> None:
    """An executable shell script at ``tool`` that notes its arguments in ``seen``, one a line,
    then runs ``body``."""
    tool.parent.mkdir(parents=True)
    tool.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {seen}\n{body}")
    tool.chmod(0o755)


def _stand_in_vllm(venv: Path, seen: Path, result: dict[str, object] = RESULT) -> None:
    """``vllm`` that notes its arguments, one a line, writes ``result`` where
    ``--result-dir``/``--result-filename`` say and prints no summary table."""
    _stand_in(venv / "bin" / "vllm", seen,
              "while [ $# -gt 0 ]; do case $1 in --result-dir) d=$2;; --result-filename) f=$2;; "
              "esac; shift; done\n"
              f"cat > \"$d/$f\" <<'EOF'\n{json.dumps(result)}\nEOF\n")  # fmt: skip


def _stand_in_sglang(venv: Path, seen: Path, result: dict[str, object]) -> None:
    """``python3`` (for ``-m sglang.bench_serving``) that notes its arguments and appends
    ``result`` as one JSON line to ``--output-file``, printing no summary table."""
    _stand_in(venv / "bin" / "python3", seen,
              'while [ $# -gt 0 ]; do [ "$1" = --output-file ] && o=$2; shift; done\n'
              f"cat >> \"$o\" <<'EOF'\n{json.dumps(result)}\nEOF\n")  # fmt: skip


async def _argv(seen: Path) -> list[str]:
    return (await asyncio.to_thread(seen.read_text)).splitlines()


def _after(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


async def test_vllm_result_file_is_read_and_its_directory_removed(
    session: HostSession, tmp_path: Path
) -> None:
    venv, seen = tmp_path / "venv", tmp_path / "seen.txt"
    _stand_in_vllm(venv, seen)
    setup = OfficialSetup(session, "vllm", 8000, "m", venv=str(venv))
    figures = await official_level(setup, BenchConfig(num_prompts=8), LoadLevel(4))
    fields = level_fields(figures)
    assert (fields["completed"], fields["failed"], fields["output_throughput"]) == (7, 1, 321.25)
    assert (fields["median_ttft_ms"], fields["mean_e2el_ms"]) == (45.5, 900.0)
    assert figures.source == "official vllm"
    argv = await _argv(seen)
    assert _after(argv, "--dataset-name") == "random"
    assert _after(argv, "--max-concurrency") == "4"
    assert "--request-rate" not in argv
    assert not await asyncio.to_thread(Path(_after(argv, "--result-dir")).exists)


OPEN_RESULT = RESULT | {"request_rate": 8.0, "burstiness": 0.5, "max_concurrency": 16}


async def test_vllm_open_loop_level_is_asked_and_read_back(
    session: HostSession, tmp_path: Path
) -> None:
    venv, seen = tmp_path / "venv", tmp_path / "seen.txt"
    _stand_in_vllm(venv, seen, OPEN_RESULT)
    setup = OfficialSetup(session, "vllm", 8000, "m", venv=str(venv))
    level = LoadLevel(16, 8.0, 0.5)
    figures = await official_level(setup, BenchConfig(num_prompts=8), level)
    argv = await _argv(seen)
    assert _after(argv, "--request-rate") == "8.0"
    assert _after(argv, "--burstiness") == "0.5"
    assert _after(argv, "--max-concurrency") == "16"
    assert (figures.request_rate, figures.burstiness, figures.concurrency) == (8.0, 0.5, 16)
    assert figures.label == level.label == "r=8 c<=16"
    assert (figures.completed, figures.output_throughput) == (7, 321.25)
    assert figures.num_prompts == 8
    assert figures.problems == ()
    fields = level_fields(figures)
    assert (fields["request_rate"], fields["burstiness"], fields["max_concurrency"]) == (
        8.0, 0.5, 16,
    )  # fmt: skip


async def test_an_uncapped_infinite_rate_and_a_rate_the_tool_did_not_keep(
    session: HostSession, tmp_path: Path
) -> None:
    venv, seen = tmp_path / "venv", tmp_path / "seen.txt"
    told = RESULT | {"request_rate": "inf", "burstiness": 1.0, "max_concurrency": None}
    _stand_in_vllm(venv, seen, told)
    setup = OfficialSetup(session, "vllm", 8000, "m", venv=str(venv))
    figures = await official_level(setup, BenchConfig(num_prompts=8), LoadLevel(0, math.inf))
    argv = await _argv(seen)
    assert _after(argv, "--request-rate") == "inf"
    assert "--max-concurrency" not in argv
    assert (figures.request_rate, figures.concurrency, figures.label) == (math.inf, 0, "r=inf")
    assert figures.problems == ()
    # Asked for 4 requests per second, the tool says it ran at infinite rate: a problem.
    slow = await official_level(setup, BenchConfig(num_prompts=8), LoadLevel(0, 4.0))
    assert slow.request_rate == 4.0
    assert slow.problems == ("the tool reports request rate inf, asked 4",)


async def test_sglang_open_loop_level_without_burstiness(
    session: HostSession, tmp_path: Path
) -> None:
    venv, seen = tmp_path / "venv", tmp_path / "seen.txt"
    result = {"backend": "sglang", "request_rate": 2.5, "max_concurrency": None, "completed": 5,
              "duration": 2.0, "output_throughput": 640.0, "mean_e2e_latency_ms": 800.0,
              "accept_length": 2.4}  # fmt: skip
    _stand_in_sglang(venv, seen, result)
    setup = OfficialSetup(session, "sglang", 30000, "m", venv=str(venv))
    level = LoadLevel(0, 2.5, 0.25)
    figures = await official_level(setup, BenchConfig(num_prompts=5), level)
    argv = await _argv(seen)
    assert argv[:2] == ["-m", "sglang.bench_serving"]
    assert _after(argv, "--request-rate") == "2.5"
    assert "--burstiness" not in argv
    assert "--max-concurrency" not in argv
    assert (figures.request_rate, figures.burstiness, figures.label) == (2.5, 0.25, "r=2.5")
    assert (figures.completed, figures.failed, figures.output_throughput) == (5, 0, 640.0)
    assert figures.e2el_ms.mean == 800.0
    assert figures.problems == (
        "sglang.bench_serving has no --burstiness: its arrivals were Poisson (burstiness 1), "
        "ours had burstiness 0.25",
    )


def test_sglang_names_and_datasets_without_download() -> None:
    line = json.dumps({"mean_e2e_latency_ms": 5.0, "accept_length": 2.4, "completed": 3})
    assert result_fields(f"junk\n{line}\n", "sglang") == {
        "mean_e2el_ms": 5.0, "server_avg_spec_accept_length_after": 2.4, "completed": 3,
    }  # fmt: skip
    argv = official_argv(OfficialRun("sglang", 30000, 1, 8, 32, 16))
    assert argv[argv.index("--dataset-name") + 1] == "random-ids"
    named = official_argv(OfficialRun("sglang", 30000, 1, 8, 32, 16, dataset_path="/d/sg.json"))
    assert named[named.index("--dataset-name") + 1 : named.index("--dataset-path") + 2] == [
        "sharegpt", "--dataset-path", "/d/sg.json",
    ]  # fmt: skip
