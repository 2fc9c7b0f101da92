"""``--save-result`` files read with vLLM's field list and definitions, exact random prompts,
and ``bringup bench PROFILE`` through the SSH forward to a simulator that wants an API key.

The field list and the meanings are vLLM's ``vllm/benchmarks/serve.py`` (``benchmark()`` fills
the metrics; ``main()`` adds the run's settings; without ``--save-detailed`` it deletes
``input_lens``, ``output_lens``, ``ttfts``, ``itls``, ``generated_texts`` and ``errors``).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.simserver import FAST, Sim, running_sim
from tests.sshd import TestServer
from tui.cli import main

KEY = "sk-bench-key"
FLAGS = ["--time-scale", FAST, "--speculative-algorithm", "EAGLE3",
         "--speculative-draft-model-path", "d/eagle3", "--accept-len", "2.5",
         "--ttft-ms", "40", "--decode-tok-s", "400", "--served-model-name", "served-name",
         "--api-key", KEY]  # fmt: skip
# vLLM's saved fields and their types (None: may be null).
VLLM_FIELDS: dict[str, tuple[type, ...]] = {
    "date": (str,), "model_id": (str,), "num_prompts": (int,), "request_rate": (str, float),
    "burstiness": (float,), "max_concurrency": (int, type(None)), "duration": (float,),
    "completed": (int,), "failed": (int,), "total_input_tokens": (int,),
    "total_output_tokens": (int,), "request_throughput": (float,),
    "output_throughput": (float,), "total_token_throughput": (float,),
    **{f"{stat}_{m}_ms": (float,) for m in ("ttft", "tpot", "itl", "e2el")
       for stat in ("mean", "median", "std", "p99")},
}  # fmt: skip
DETAILED = ("input_lens", "output_lens", "ttfts", "itls", "errors")


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    with running_sim(tmp_path_factory.mktemp("result"), FLAGS) as server:
        yield server


@pytest.fixture(autouse=True)
def quiet_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRINGUP_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("BRINGUP_CONFIG", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def _numpy_percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    position = (len(ordered) - 1) * p / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (position - low) * (ordered[high] - ordered[low])


def test_saved_result_has_vllm_fields_and_meanings(sim: Sim, tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    args = ["bench", "--url", sim.url, "--api-key", KEY, "--endpoint", "completions",
            "--dataset", "random", "--input-len", "37", "--output-len", "24",
            "--concurrency", "3", "--num-prompts", "9", "--save-result", str(out),
            "--save-detailed", "--goodput", "ttft:100000", "--json"]  # fmt: skip
    assert main(args) == 0
    result = json.loads(out.read_text())
    for name, kinds in VLLM_FIELDS.items():
        assert isinstance(result[name], kinds), name
    assert result["model_id"] == "served-name"
    assert result["request_rate"] == "inf"
    assert (result["max_concurrency"], result["num_prompts"]) == (3, 9)
    ok = [i for i, error in enumerate(result["errors"]) if error == ""]
    assert result["completed"] == len(ok) == 9
    assert result["failed"] == 0
    # Exact prompt and output lengths: random token ids, ignore_eos.
    assert result["input_lens"] == [37] * 9
    assert result["output_lens"] == [24] * 9
    assert result["total_input_tokens"] == sum(result["input_lens"][i] for i in ok)
    assert result["total_output_tokens"] == sum(result["output_lens"][i] for i in ok)
    duration = result["duration"]
    assert result["request_throughput"] == pytest.approx(9 / duration)
    assert result["output_throughput"] == pytest.approx(9 * 24 / duration)
    assert result["total_token_throughput"] == pytest.approx(9 * (37 + 24) / duration)
    assert result["request_goodput"] == pytest.approx(9 / duration)
    ttfts = [result["ttfts"][i] for i in ok]
    assert result["mean_ttft_ms"] == pytest.approx(statistics.fmean(ttfts) * 1000)
    assert result["median_ttft_ms"] == pytest.approx(statistics.median(ttfts) * 1000)
    assert result["std_ttft_ms"] == pytest.approx(statistics.pstdev(ttfts) * 1000)
    assert result["p99_ttft_ms"] == pytest.approx(_numpy_percentile(ttfts, 99) * 1000)
    itls = [gap for i in ok for gap in result["itls"][i]]
    # One gap per streamed chunk: a speculative server sends fewer chunks than tokens.
    assert 9 <= len(itls) < 9 * 23
    assert result["mean_itl_ms"] == pytest.approx(statistics.fmean(itls) * 1000)
    assert result["median_itl_ms"] == pytest.approx(statistics.median(itls) * 1000)
    assert result["p99_itl_ms"] == pytest.approx(_numpy_percentile(itls, 99) * 1000)
    # TPOT leaves out the first token; E2E latency holds TTFT and every token after it.
    assert result["mean_e2el_ms"] > result["mean_ttft_ms"] + 22 * 0.9 * result["mean_tpot_ms"]
    # Our own figures use names vLLM does not write.
    assert result["backend"] == "openai"
    for name in ("accept_length", "generated_texts", "tokenizer_id"):
        assert name not in result


def test_one_file_per_level_and_no_arrays_without_detailed(sim: Sim, tmp_path: Path) -> None:
    out = tmp_path / "levels.json"
    args = ["bench", "--url", sim.url, "--api-key", KEY, "--request-rate", "20,inf",
            "--max-concurrency", "4", "--num-prompts", "4", "--output-len", "8",
            "--save-result", str(out), "--no-save"]  # fmt: skip
    assert main(args) == 0
    slow = json.loads((tmp_path / "levels.r20-c4.json").read_text())
    burst = json.loads((tmp_path / "levels.rinf-c4.json").read_text())
    assert (slow["request_rate"], burst["request_rate"]) == (20.0, "inf")
    assert slow["max_concurrency"] == burst["max_concurrency"] == 4
    assert slow["burstiness"] == 1.0
    assert set(slow) == set(burst)
    # /generate reports verify steps: SGLang's accept length, under a name vLLM does not use.
    assert slow["spec_accept_length"] == pytest.approx(2.5, rel=0.1)
    for name in DETAILED:
        assert name not in slow


def test_without_the_key_the_benchmark_fails_clearly(
    sim: Sim, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "--url", sim.url, "--num-prompts", "2", "--no-save"]) == 3
    assert "wants an API key (HTTP 401): give --api-key" in capsys.readouterr().err
    args = ["bench", "--url", sim.url, "--api-key", "wrong", "--num-prompts", "2", "--no-save"]
    assert main(args) == 3
    assert "refused the API key" in capsys.readouterr().err


def _remote_profile(tmp_path: Path, ssh_server: TestServer, sim: Sim, key_env: bool) -> Path:
    config = tmp_path / "config.toml"
    extra = "api_key_env = 'SIM_BENCH_KEY'\n" if key_env else ""
    config.write_text(
        f"[profiles.remote]\nengine = 'sglang'\nhost = '{ssh_server.alias}'\n"
        f"port = {sim.port}\nssh_config = '{ssh_server.ssh_config}'\n"
        f"known_hosts = '{ssh_server.known_hosts}'\n{extra}"
        "[profiles.remote.bench]\nnum_prompts = 3\noutput_len = 8\n"
    )
    return config


def test_remote_profile_goes_through_the_ssh_forward_with_the_key(
    sim: Sim,
    ssh_server: TestServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = _remote_profile(tmp_path, ssh_server, sim, key_env=False)
    base = ["bench", "--config", str(config), "--profile", "remote", "--no-save"]
    assert main(base) == 3
    assert "wants an API key" in capsys.readouterr().err
    config = _remote_profile(tmp_path, ssh_server, sim, key_env=True)
    monkeypatch.setenv("SIM_BENCH_KEY", KEY)
    assert main([*base, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["completed"], report["failed"]) == (3, 0)
    assert report["url"] == "profile remote"


async def test_health_poll_sends_the_key_for_its_generation(sim: Sim) -> None:
    from tui.engine.judge.health import HealthState
    from tui.io.health.health_poll import HealthOptions, HealthPoller

    async def url() -> str:
        return sim.url

    answers = ((KEY, HealthState.READY, ""), (None, HealthState.HEALTHY, "/generate answered 401"))
    for key, state, detail in answers:
        poller = HealthPoller(url, HealthOptions(timeout=10.0, engine="sglang", api_key=key))
        async with poller.pool() as pool:
            result = await poller.poll(pool)
        assert (result.state, result.detail) == (state, detail)


def test_nothing_but_the_result_when_stderr_is_not_a_terminal(
    sim: Sim, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["bench", "--url", sim.url, "--api-key", KEY, "--num-prompts", "2",
            "--output-len", "4", "--no-save", "--json"]  # fmt: skip
    assert main(args) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert json.loads(captured.out)["completed"] == 2


async def test_progress_bars_count_each_levels_requests(sim: Sim) -> None:
    import io

    from rich.console import Console
    from rich.progress import Progress

    from tui.commands.bench_progress import BenchProgress
    from tui.io.bench.bench_client import Workload

    bars = Progress(console=Console(file=io.StringIO(), force_terminal=True))
    workload = Workload(("a", "b", "c"), output_len=4, concurrency=(1, 2), trials=2,
                        api_key=KEY, warmup_requests=1)  # fmt: skip
    async with BenchProgress(bars).client(sim.url, workload) as client:
        await client.run()
    tasks = bars.tasks
    assert [task.description for task in tasks] == ["c=1", "c=2"]
    assert [(task.completed, task.total) for task in tasks] == [(6, 6), (6, 6)]
