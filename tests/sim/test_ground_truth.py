"""Ground truth: a plain httpx client measures what the flags say, alone and four at a time.

Per request, decode speed is ``(tokens - 1) / (last chunk - first chunk)`` as a benchmark
client computes it, and accept length is tokens per verify step. The median request must be
within 2 % of ``--decode-tok-s`` and the mean accept length within 2 % of ``--accept-len``.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from tests.simserver import FAST, Sim, running_sim

DECODE, ACCEPT, TOKENS = 200.0, 2.5, 300
FLAGS = [
    "--time-scale",
    FAST,
    "--speculative-algorithm",
    "EAGLE3",
    "--speculative-draft-model-path",
    "d/eagle3",
    "--decode-tok-s",
    str(DECODE),
    "--accept-len",
    str(ACCEPT),
    "--ttft-ms",
    "20",
    "--max-running",
    "4",
]


@dataclass(frozen=True, slots=True)
class Measured:
    tokens: int
    chunks: int
    decode_s: float
    verify_ct: int

    @property
    def decode_tok_s(self) -> float:
        return (self.tokens - 1) / self.decode_s

    @property
    def accept_len(self) -> float:
        return self.tokens / self.verify_ct


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    with running_sim(tmp_path_factory.mktemp("truth"), FLAGS) as server:
        yield server


async def _one(client: httpx.AsyncClient, prompt: str) -> Measured:
    body = {"text": prompt, "sampling_params": {"max_new_tokens": TOKENS}, "stream": True}
    first = last = 0.0
    chunks, meta = 0, {}
    async with client.stream("POST", "/generate", json=body) as response:
        async for line in response.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            now = time.perf_counter()
            chunk = json.loads(line[len("data: ") :])
            chunks += 1
            first = first or now
            last = now
            meta = chunk["meta_info"]
    return Measured(meta["completion_tokens"], chunks, last - first, meta["spec_verify_ct"])


async def _run(url: str, concurrency: int, requests: int) -> list[Measured]:
    limit = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=url, timeout=60, trust_env=False) as client:

        async def bounded(index: int) -> Measured:
            async with limit:
                return await _one(client, f"request number {index}")

        return list(await asyncio.gather(*(bounded(i) for i in range(requests))))


@pytest.mark.parametrize(("concurrency", "requests"), [(1, 3), (4, 8)])
def test_client_measures_the_flags(sim: Sim, concurrency: int, requests: int) -> None:
    results = asyncio.run(_run(sim.url, concurrency, requests))
    assert all(result.tokens == TOKENS for result in results)
    assert all(result.chunks == result.verify_ct + 1 for result in results)
    speed = statistics.median(result.decode_tok_s for result in results)
    accept = statistics.mean(result.accept_len for result in results)
    client_accept = statistics.mean((r.tokens - 1) / (r.chunks - 1) for r in results)
    assert speed == pytest.approx(DECODE, rel=0.02)
    assert accept == pytest.approx(ACCEPT, rel=0.02)
    assert client_accept == pytest.approx(ACCEPT, rel=0.02)
