"""The benchmark client against a small real server (Starlette on uvicorn, on loopback)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from tui.io.bench.bench_client import BenchClient, Workload

CHUNK_TOKENS = (1, 3, 2, 1, 3)  # tokens per streamed chunk after the first
STATE: dict[str, float] = {"accepted": 100.0, "drafts": 50.0}


def _sizes(total: int) -> list[int]:
    sizes, index = [1], 0
    while sum(sizes) < total:
        sizes.append(min(CHUNK_TOKENS[index % len(CHUNK_TOKENS)], total - sum(sizes)))
        index += 1
    return sizes if total else []


async def _events(body: dict[str, Any], native: bool) -> AsyncIterator[bytes]:
    prompt = body.get("text") or body.get("prompt") or body["messages"][0]["content"]
    total = body["sampling_params"]["max_new_tokens"] if native else body["max_tokens"]
    if "FLOOD" in prompt:
        total *= 10
    sent = 0
    sizes = _sizes(total)
    for verify, size in enumerate(sizes, start=1):
        await asyncio.sleep(0.001)
        sent += size
        yield _event(native, body, sent, size, verify=verify, prompt=prompt)
    if not native:
        usage = {"prompt_tokens": len(prompt.split()), "completion_tokens": sent}
        yield b"data: " + json.dumps({"choices": [], "usage": usage}).encode() + b"\n\n"
    STATE["accepted"] += sent
    STATE["drafts"] += len(sizes)
    yield b"data: [DONE]\n\n"


def _event(native: bool, body: dict[str, Any], sent: int, size: int, **meta: Any) -> bytes:
    if native:
        info = {"completion_tokens": sent, "prompt_tokens": len(meta["prompt"].split())}
        info["spec_verify_ct"] = meta["verify"]
        event: dict[str, Any] = {"text": "tok " * sent, "meta_info": info}
    elif "messages" in body:
        event = {"choices": [{"index": 0, "delta": {"content": "tok " * size}}]}
    else:
        event = {"choices": [{"index": 0, "text": "tok " * size}]}
    return b"data: " + json.dumps(event).encode() + b"\n\n"


async def generate(request: Request) -> Response:
    body = await request.json()
    prompt = str(body.get("text") or body.get("prompt") or "")
    if "FAIL" in prompt:
        return PlainTextResponse("boom \x1b]0;owned\x07 \x1b[31mred", status_code=500)
    native = request.url.path == "/generate"
    return StreamingResponse(_events(body, native), media_type="text/event-stream")


async def server_info(_request: Request) -> Response:
    return JSONResponse({"internal_states": [{"avg_spec_accept_length": 2.75}]})


async def metrics(_request: Request) -> Response:
    text = (
        "# TYPE vllm:spec_decode_num_drafts_total counter\n"
        f'vllm:spec_decode_num_drafts_total{{engine="0"}} {STATE["drafts"]}\n'
        f'vllm:spec_decode_num_accepted_tokens_total{{engine="0"}} {STATE["accepted"]}\n'
        'vllm:spec_decode_num_accepted_tokens_per_pos_total{position="0"} 5.0\n'
    )
    return PlainTextResponse(text)


async def models(_request: Request) -> Response:
    return JSONResponse({"data": [{"id": "tiny-model", "object": "model"}]})


def _app(sglang: bool) -> Starlette:
    routes = [
        Route("/generate", generate, methods=["POST"]),
        Route("/v1/completions", generate, methods=["POST"]),
        Route("/v1/chat/completions", generate, methods=["POST"]),
        Route("/v1/models", models),
        Route("/metrics", metrics),
    ]
    if sglang:
        routes.append(Route("/server_info", server_info))
    return Starlette(routes=routes)


@pytest.fixture(params=[True, False], ids=["sglang", "vllm"])
def server_url(request: pytest.FixtureRequest) -> Iterator[str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(_app(request.param), log_level="error", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(500):
        if server.started:
            break
        threading.Event().wait(0.01)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    server.should_exit = True
    thread.join(timeout=10)
    sock.close()


PROMPTS = tuple(f"prompt number {i}" for i in range(6))


async def test_generate_counts_tokens_and_accept_length(server_url: str) -> None:
    workload = Workload(PROMPTS, output_len=20, concurrency=(1, 3), endpoint="generate")
    async with BenchClient(server_url, workload) as client:
        levels = await client.run()
    assert [level.result.concurrency for level in levels] == [1, 3]
    for level in levels:
        result = level.result
        assert (result.completed, result.failed, result.total_output_tokens) == (6, 0, 120)
        assert result.token_mismatches == 0
        assert result.total_input_tokens == 18
        assert result.accept_length == pytest.approx(20 / len(_sizes(20)))
        assert result.token_gap.count == 6 * 19
        # vLLM's ITL: one gap per chunk after the first.
        assert result.itl.count == 6 * (len(_sizes(20)) - 1)
        assert all(record.client_tokens == 20 for record in level.records)


async def test_openai_endpoints_read_usage(server_url: str) -> None:
    for endpoint in ("completions", "chat"):
        workload = Workload(PROMPTS[:3], output_len=10, concurrency=(2,), endpoint=endpoint)
        async with BenchClient(server_url, workload) as client:
            (level,) = await client.run()
            assert client.model == "tiny-model"
        assert level.result.total_output_tokens == 30
        assert level.result.accept_length is None
        # Without per-chunk usage, a multi-token chunk counts as one token on the client.
        assert level.result.token_mismatches == 3
        assert level.records[0].client_tokens == len(_sizes(10))


async def test_server_view_is_read_before_and_after(server_url: str) -> None:
    workload = Workload(PROMPTS[:2], output_len=8, concurrency=(1,), warmup_requests=0)
    async with BenchClient(server_url, workload) as client:
        (level,) = await client.run()
    if level.before.avg_spec_accept_length is not None:
        assert level.after.avg_spec_accept_length == 2.75
        return
    drafts = level.after.spec_counters["drafts"] - level.before.spec_counters["drafts"]
    accepted = level.after.spec_counters["accepted"] - level.before.spec_counters["accepted"]
    assert (drafts, accepted) == (2 * len(_sizes(8)), 16)


async def test_failures_are_recorded_and_cleaned(server_url: str) -> None:
    workload = Workload(("ok one", "FAIL me", "ok two"), output_len=4, warmup_requests=0)
    async with BenchClient(server_url, workload) as client:
        (level,) = await client.run()
    assert (level.result.completed, level.result.failed) == (2, 1)
    (error,) = level.result.errors
    assert error.startswith("HTTP 500: boom")
    assert "\x1b" not in error
    assert "\x07" not in error


async def test_unreachable_server_gives_failed_records() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    workload = Workload(("a", "b"), output_len=4, warmup_requests=0)
    async with BenchClient(f"http://127.0.0.1:{port}", workload) as client:
        (level,) = await client.run()
    assert (level.result.completed, level.result.failed) == (0, 2)
    assert level.result.errors[0].startswith("ConnectError")


async def test_a_server_that_never_stops_is_cut_off(server_url: str) -> None:
    workload = Workload(("FLOOD please",), output_len=5, warmup_requests=0)
    async with BenchClient(server_url, workload) as client:
        (level,) = await client.run()
    assert level.result.failed == 1
    assert "more than 26 tokens" in level.result.errors[0]
