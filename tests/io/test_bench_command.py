"""``bringup bench`` and ``bringup runs`` end to end against a real loopback server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.io.test_bench_client import server_url  # noqa: F401 (a fixture used below)
from tui.cli import main
from tui.engine.bench.level_fields import level_from_fields
from tui.engine.startup.vocabulary import Outcome, Stage
from tui.engine.timing.estimate import RunRecord, StageSample
from tui.engine.timing.fingerprint import Fingerprint
from tui.io.store.run_store import RunStore, database_file


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "data"
    monkeypatch.setenv("BRINGUP_DATA_DIR", str(folder))
    monkeypatch.delenv("BRINGUP_CONFIG", raising=False)
    return folder


def test_bench_prints_vllm_named_json(
    server_url: str,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["bench", "--url", server_url, "--num-prompts", "3", "--output-len", "8", "--json"]
    assert main([*args, "--endpoint", "completions"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["completed"], report["failed"], report["max_concurrency"]) == (3, 0, 1)
    assert report["total_output_tokens"] == 24
    assert (report["endpoint"], report["model_id"]) == ("completions", "tiny-model")
    names = ("request_throughput", "output_throughput", "mean_ttft_ms", "p99_itl_ms")
    for name in (*names, "median_round_trip_ms"):
        assert isinstance(report[name], float)


def test_bench_levels_go_under_results_and_are_saved(
    server_url: str,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["bench", "--url", server_url, "--num-prompts", "4", "--output-len", "6"]
    assert main([*args, "--concurrency", "1,2", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [level["max_concurrency"] for level in report["results"]] == [1, 2]
    assert main(["runs", "--benchmarks", "--csv"]) == 0
    rows = capsys.readouterr().out.strip().splitlines()
    assert len(rows) == 3
    assert rows[0].startswith("id,run_id,recorded_at")
    assert main(["runs", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["benchmarks"]) == 2


def test_bench_table_and_local_profile(
    server_url: str,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    port = server_url.rsplit(":", 1)[1]
    config = tmp_path / "config.toml"
    config.write_text(
        f"[profiles.local]\nengine = 'sglang'\nport = {port}\n"
        "[profiles.local.bench]\nnum_prompts = 2\noutput_len = 5\nwarmup_requests = 0\n"
    )
    assert main(["bench", "--config", str(config), "--profile", "local", "--no-save"]) == 0
    table = capsys.readouterr().out
    assert "endpoint=generate" in table
    assert "c=1" in table
    assert "2 / 0" in table
    assert "TTFT mean / median / p99 (ms)" in table
    assert "no-op round trip median (ms)" in table


def test_bench_explains_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["bench"]) == 2
    assert "give --url" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["bench", "--url", "http://127.0.0.1:1", "--concurrency", "1,x"])
    bad = tmp_path / "bad.toml"
    bad.write_text("[profiles.a]\nport = 0\n")
    assert main(["bench", "--config", str(bad)]) == 4
    assert "bad.toml:2: profiles.a.port" in capsys.readouterr().err


def test_runs_lists_recorded_start_ups(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs"]) == 0
    assert "no runs recorded" in capsys.readouterr().out
    fingerprint = Fingerprint(engine="sglang", model="Kimi\x1b[31m", tp=8)
    samples = (StageSample("TP0", Stage.WEIGHT_LOADING, False, 30.0),)
    with RunStore(database_file()) as store:
        run_id = store.add_run(RunRecord(fingerprint, Outcome.READY, 95.0, samples, 1e9, "h200"))
        level = level_from_fields({"max_concurrency": 4, "completed": 8})
        store.add_bench(level, recorded_at=1e9, run_id=run_id)
    assert main(["runs", "--profile", "h200"]) == 0
    table = capsys.readouterr().out
    assert "h200" in table
    assert "95s" in table
    assert "\x1b" not in table
    assert main(["runs", "--json"]) == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert (run["tp"], run["stages"][0]["stage"], run["benchmarks"][0]["completed"]) == (
        8,
        "weight_loading",
        8,
    )
    assert main(["runs", "--csv"]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith(f"{run_id},")
