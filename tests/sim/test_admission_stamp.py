"""The simulator says when it admitted each request, so the benchmark can take the time before
its TTFT clock started out of the TTFT; a server that does not say so gives no delay at all."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.simserver import FAST, Sim, SimFactory
from tui.engine.bench.bench_math import RequestRecord, TokenChunk
from tui.engine.bench.bench_stream import ADMITTED_FIELD, StreamReader, request_body
from tui.engine.bench.load_plan import LoadLevel
from tui.io.bench.bench_client import BenchClient, Workload
from tui.sim.tokens import ADMITTED_FIELD as SIM_ADMITTED_FIELD

READY = "The server is fired up and ready to roll!"
TTFT_MS = 60
FLAGS = [
    "--time-scale", FAST, "--speculative-algorithm", "EAGLE3",
    "--speculative-draft-model-path", "d/eagle3", "--decode-tok-s", "2000",
    "--ttft-ms", str(TTFT_MS), "--accept-len", "2.5",
]  # fmt: skip


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    factory = SimFactory(tmp_path_factory.mktemp("admission"))
    server = factory(FLAGS)
    try:
        server.wait_for(READY)
        yield server
    finally:
        factory.close()


def test_the_client_and_the_simulator_use_one_field_name() -> None:
    assert ADMITTED_FIELD == SIM_ADMITTED_FIELD == "sim_admitted_at"


@pytest.mark.parametrize("endpoint", ["generate", "completions", "chat"])
async def test_each_request_carries_its_admission_within_its_ttft(sim: Sim, endpoint: str) -> None:
    workload = Workload(
        ("hello world",), output_len=24, levels=(LoadLevel(4),), num_prompts=8, endpoint=endpoint
    )
    async with BenchClient(sim.url, workload) as client:
        await client.resolve_model()
        report = await client.run_level(LoadLevel(4))
    assert len(report.records) == 8
    for record in report.records:
        assert record.success, record.error
        delay, ttft = record.admission_delay, record.ttft
        assert delay is not None
        assert ttft is not None
        assert 0 <= delay <= ttft
        # The sim's clock starts at admission, so what is left of the TTFT is at least its own.
        assert ttft - delay >= TTFT_MS / 1000 * 0.99


def _sglang_events(sim: Sim) -> list[Any]:
    body = request_body("generate", "hello world", 12, True, "default")
    with (
        httpx.Client(base_url=sim.url, timeout=30) as http,
        http.stream("POST", "/generate", json=body) as response,
    ):
        assert response.status_code == 200
        lines = [line[5:].strip() for line in response.iter_lines() if line.startswith("data:")]
    return [json.loads(line) for line in lines if line != "[DONE]"]


def test_a_server_without_the_stamp_gives_no_delay(sim: Sim) -> None:
    events = _sglang_events(sim)
    assert ADMITTED_FIELD in events[-1]["meta_info"]
    for event in events:
        event["meta_info"].pop(ADMITTED_FIELD, None)
    reader, chunks = StreamReader("generate"), []
    sent_wall, sent_at = time.time(), time.perf_counter()
    for event in events:
        tokens = reader.feed(event)
        if tokens:
            chunks.append(TokenChunk(time.perf_counter(), tokens))
    record = RequestRecord(
        sent_at=sent_at,
        ended_at=time.perf_counter(),
        chunks=tuple(chunks),
        server_tokens=reader.server_tokens,
        sent_wall=sent_wall,
        admitted_at=reader.admitted_at,
    )
    assert reader.admitted_at is None
    assert record.output_tokens == 12
    assert record.admission_delay is None


@pytest.mark.parametrize("stamp", [True, "soon", -1.0, float("nan"), None])
def test_a_stamp_that_is_not_a_wall_clock_second_is_ignored(stamp: object) -> None:
    reader = StreamReader("completions")
    reader.feed({"choices": [{"text": "hi "}], ADMITTED_FIELD: stamp})
    assert reader.admitted_at is None


def test_an_answer_that_does_not_stream_carries_its_admission_too(sim: Sim) -> None:
    body = {"model": "default", "prompt": "hello world", "max_tokens": 4, "stream": False}
    before = time.time()
    with httpx.Client(base_url=sim.url, timeout=30) as http:
        response = http.post("/v1/completions", json=body)
    after = time.time()
    assert response.status_code == 200, response.text
    stamp = response.json()[ADMITTED_FIELD]
    assert before <= stamp <= after - TTFT_MS / 1000
