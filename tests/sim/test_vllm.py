"""``--engine vllm``: vLLM's log layout and process tags, its endpoints, metrics and failures."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import httpx
import pytest

from tests.simserver import FAST, Sim, SimFactory, running_sim
from tui.engine.logs.log_engine import LogEngine
from tui.engine.startup.vocabulary import FailureKind, Outcome

READY = "INFO:     Application startup complete."
SPEC = '{"method": "eagle3", "model": "d/eagle3", "num_speculative_tokens": 3}'
FLAGS = [
    "--engine",
    "vllm",
    "serve",
    "Qwen/Qwen3-8B",
    "-tp",
    "2",
    "--speculative-config",
    SPEC,
    "--time-scale",
    FAST,
    "--decode-tok-s",
    "1500",
    "--accept-len",
    "2.5",
]
LINE = re.compile(
    r"^\((?P<proc>APIServer|EngineCore_DP0|Worker_TP[01]|Worker) pid=(?P<pid>\d+)\) "
    r"(?:(?:INFO|WARNING|ERROR) \d\d-\d\d \d\d:\d\d:\d\d \[[\w.]+:\d+\] |INFO:     |\r|$)"
)


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    with running_sim(
        tmp_path_factory.mktemp("vllm"), FLAGS, env={"VLLM_LOG_STATS_INTERVAL": "0.2"}, ready=READY
    ) as server:
        yield server


def test_every_line_carries_a_vllm_process_prefix(sim: Sim) -> None:
    text = sim.text()
    lines = [line for line in text.split("\n") if line]
    for line in lines:
        assert LINE.match(line), line
    procs = {match["proc"] for match in map(LINE.match, lines) if match}
    assert procs == {"APIServer", "EngineCore_DP0", "Worker_TP0", "Worker"}
    assert "vLLM server version 0.33.0, serving model Qwen/Qwen3-8B" in text
    assert "Loading drafter model..." in text
    assert "Uvicorn running on" not in text
    assert text.index("Starting vLLM server on") < text.index(READY)


def test_endpoints_answer_like_vllm(sim: Sim) -> None:
    with httpx.Client(base_url=sim.url, timeout=30) as client:
        assert client.get("/health").status_code == 200
        assert client.get("/version").json() == {"version": "0.33.0"}
        models = client.get("/v1/models").json()["data"]
        assert [(m["id"], m["owned_by"]) for m in models] == [("Qwen/Qwen3-8B", "vllm")]
        body = {
            "model": "Qwen/Qwen3-8B",
            "max_tokens": 30,
            "stream": True,
            "messages": [{"role": "user", "content": "hello"}],
            "stream_options": {"include_usage": True},
        }
        with client.stream("POST", "/v1/chat/completions", json=body) as response:
            events = [
                json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: {")
            ]
        assert events[0]["id"].startswith("chatcmpl-")
        assert events[-1]["usage"]["completion_tokens"] == 30


def test_spec_decode_metrics_give_the_accept_length(sim: Sim) -> None:
    with httpx.Client(base_url=sim.url, timeout=60) as client:
        before = _metrics(client)
        client.post("/v1/completions", json={"prompt": "x", "max_tokens": 600}).raise_for_status()
        after = _metrics(client)
    drafts = (
        after["vllm:spec_decode_num_drafts_total"] - before["vllm:spec_decode_num_drafts_total"]
    )
    accepted = (
        after["vllm:spec_decode_num_accepted_tokens_total"]
        - before["vllm:spec_decode_num_accepted_tokens_total"]
    )
    proposed = (
        after["vllm:spec_decode_num_draft_tokens_total"]
        - before["vllm:spec_decode_num_draft_tokens_total"]
    )
    generated = after["vllm:generation_tokens_total"] - before["vllm:generation_tokens_total"]
    assert generated == 600
    assert proposed == 3 * drafts
    assert 1 + accepted / drafts == pytest.approx(2.5, rel=0.03)
    assert after["vllm:prompt_tokens_total"] > before["vllm:prompt_tokens_total"]
    text = sim.wait_for("SpecDecoding metrics: Mean acceptance length: ")
    assert "Engine 000: Avg prompt throughput: " in text


def _metrics(client: httpx.Client) -> dict[str, float]:
    values: dict[str, float] = {}
    for line in client.get("/metrics").text.splitlines():
        if line and not line.startswith("#") and "position=" not in line:
            name, _, value = line.rpartition(" ")
            values[name.split("{")[0]] = float(value)
    return values


def test_the_log_reads_as_a_ready_vllm_server(sim: Sim) -> None:
    engine = LogEngine(engine="auto")
    engine.feed(sim.log.read_bytes())
    snap = engine.finish().snapshot
    assert snap.server.engine == "vllm"
    assert snap.outcome is Outcome.READY
    assert snap.failure is None


def test_sigterm_shuts_down_cleanly(start_sim: SimFactory) -> None:
    other = start_sim(["--engine", "vllm", "--time-scale", FAST])
    other.wait_for(READY)
    assert other.terminate() == 0
    text = other.text()
    assert "Shutting down FastAPI HTTP server." in text
    assert "INFO:     Application shutdown complete." in text


@pytest.mark.parametrize(
    ("scenario", "needles", "kind"),
    [
        (
            "oom-kv-cache",
            [
                "EngineCore failed to start.",
                "No available memory for the cache blocks.",
                "Engine core initialization failed. See root cause above.",
            ],
            FailureKind.OOM,
        ),
        ("rank-crash", ["WorkerProc failed to start.", "EngineCore failed to start."], None),
        ("port-in-use", ["OSError: [Errno 98] Address already in use"], FailureKind.PORT_IN_USE),
    ],
)
def test_failures_exit_one_with_vllm_text(
    start_sim: SimFactory, scenario: str, needles: list[str], kind: FailureKind | None
) -> None:
    failed = start_sim(
        ["--engine", "vllm", "--tp", "2", "--time-scale", FAST, "--scenario", scenario]
    )
    assert failed.wait_exit() == 1
    text = failed.text()
    for needle in needles:
        assert needle in text
    engine = LogEngine(engine="auto")
    engine.feed(failed.log.read_bytes())
    snap = engine.finish().snapshot
    assert snap.outcome is Outcome.FAILED
    if kind is not None:
        assert snap.failure is not None
        assert snap.failure.kind is kind


def test_bench_reads_vllm_acceptance_rates(sim: Sim, capsys: pytest.CaptureFixture[str]) -> None:
    import json as json_module

    from tui.cli import main

    args = ["bench", "--url", sim.url, "--endpoint", "completions", "--num-prompts", "4",
            "--output-len", "200", "--no-save", "--json"]  # fmt: skip
    assert main(args) == 0
    report = json_module.loads(capsys.readouterr().out)
    length = report["spec_decode_acceptance_length"]
    rate = report["spec_decode_acceptance_rate"]
    per_pos = report["spec_decode_per_position_acceptance_rates"]
    assert length == pytest.approx(2.5, rel=0.05)
    # Three draft tokens per step: accepted / proposed = (length - 1) / 3.
    assert rate == pytest.approx((length - 1) / 3 * 100, rel=1e-6)
    assert len(per_pos) == 3
    assert sum(per_pos) == pytest.approx(rate * 3, rel=1e-6)
