"""Official mode reads the tool's saved result from a temporary directory it then removes, and
asks for no dataset that needs a download."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tui.config import BenchConfig
from tui.engine.bench.level_fields import level_fields
from tui.engine.bench.official_bench import OfficialRun, official_argv
from tui.engine.bench.official_result import result_fields
from tui.io.bench.official_run import OfficialSetup, official_level
from tui.io.transport.host_session import HostSession

RESULT = {
    "date": "20260101-000000", "completed": 7, "failed": 1, "duration": 2.0,
    "request_throughput": 3.5, "output_throughput": 321.25, "median_ttft_ms": 45.5,
    "mean_e2el_ms": 900.0, "ttfts": [0.1, 0.2], "model_id": "m",
}  # fmt: skip


def _stand_in_vllm(venv: Path, seen: Path) -> None:
    """``vllm`` that writes its result where ``--result-dir``/``--result-filename`` say and
    prints no summary table, and notes the directory it was given."""
    (venv / "bin").mkdir(parents=True)
    tool = venv / "bin" / "vllm"
    tool.write_text(
        "#!/bin/sh\n"
        "while [ $# -gt 0 ]; do case $1 in --result-dir) d=$2;; --result-filename) f=$2;; "
        "--dataset-name) n=$2;; esac; shift; done\n"
        f'echo "$d $n" > {seen}\n'
        f"cat > \"$d/$f\" <<'EOF'\n{json.dumps(RESULT)}\nEOF\n"
    )
    tool.chmod(0o755)


async def test_vllm_result_file_is_read_and_its_directory_removed(
    session: HostSession, tmp_path: Path
) -> None:
    venv, seen = tmp_path / "venv", tmp_path / "seen.txt"
    _stand_in_vllm(venv, seen)
    setup = OfficialSetup(session, "vllm", 8000, "m", venv=str(venv))
    figures = await official_level(setup, BenchConfig(num_prompts=8), 4)
    fields = level_fields(figures)
    assert (fields["completed"], fields["failed"], fields["output_throughput"]) == (7, 1, 321.25)
    assert (fields["median_ttft_ms"], fields["mean_e2el_ms"]) == (45.5, 900.0)
    assert figures.source == "official vllm"
    result_dir, dataset = (await asyncio.to_thread(seen.read_text)).split()
    assert dataset == "random"
    assert not await asyncio.to_thread(Path(result_dir).exists)


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
