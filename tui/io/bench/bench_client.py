"""The benchmark client: streams requests to a server and times every chunk.

One shared ``httpx.AsyncClient`` with a connection per concurrent request; ``concurrency``
workers pull prompts from one queue, so exactly that many requests are in flight. Every chunk
is stamped with ``time.perf_counter`` as its line arrives; JSON is decoded once per line. The
arithmetic lives in ``tui.engine.bench.bench_math``; this module only measures.

Before each level, after its warm-up, ``concurrency`` no-op requests (``GET /v1/models``) go out
together, in four rounds: the first opens one connection per request the level will have in
flight (so no measured request pays for a TCP connect or, through an SSH forward, a channel
open), the other three are timed. Their median is the level's round trip: the part of every TTFT
that is transport and HTTP handling rather than the server's own time to the first token.

Before and after each level the server's own view of speculative decoding is read: SGLang's
``/server_info`` lifetime ``avg_spec_accept_length`` (reported as is, it includes all earlier
traffic) and vLLM's ``/metrics`` counters (differenced over the level).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

import httpx

from tui.engine.bench.bench_math import (
    Distribution,
    LevelResult,
    RequestRecord,
    TokenChunk,
    summarize,
)
from tui.engine.bench.bench_stream import (
    ENDPOINT_PATHS,
    StreamReader,
    accept_length_between,
    request_body,
    server_accept_length,
    spec_counters,
)
from tui.engine.bench.level_figures import LevelFigures, ServerSpec, figures_of
from tui.engine.logs.sanitize import sanitize_text
from tui.io.transport.deadline import within

WARMUP_OUTPUT_LEN = 32
NOOP_PATH = "/v1/models"
HOLD_SECONDS = 10.0
ROUND_TRIP_ROUNDS = 3


def clean(text: str, limit: int = 200) -> str:
    """Server text made safe for a terminal on one line: escapes stripped, length capped."""
    return " ".join(sanitize_text(text[: limit * 4]).splitlines())[:limit]


@dataclass(frozen=True, slots=True)
class Workload:
    """What to send: prompts, lengths, concurrency levels and the endpoint."""

    prompts: tuple[str, ...]
    output_len: int = 256
    concurrency: tuple[int, ...] = (1,)
    warmup_requests: int = 1
    ignore_eos: bool = True
    endpoint: str = "generate"
    model: str | None = None
    timeout: float = 600.0


@dataclass(frozen=True, slots=True)
class ServerView:
    """The server's speculative-decoding figures at one instant (None: not reported)."""

    avg_spec_accept_length: float | None = None
    spec_counters: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class LevelReport:
    """One concurrency level: the records, their summary and the server's view around it."""

    result: LevelResult
    records: tuple[RequestRecord, ...]
    before: ServerView
    after: ServerView
    round_trips: tuple[float, ...] = ()
    """Seconds each timed no-op request took (rounds of ``concurrency`` sent together)."""


def level_figures(report: LevelReport) -> LevelFigures:
    """The client's result plus the server's own accept-length figures around the level.

    ``avg_accept_before``/``_after`` are SGLang's lifetime averages (they include every earlier
    request); ``acceptance_length`` is vLLM's ``1 + accepted/drafts`` over this level's counter
    differences; ``median_round_trip_ms`` is the median time of the level's no-op requests.
    """
    trips = Distribution.of(report.round_trips)
    server = ServerSpec(
        avg_accept_before=report.before.avg_spec_accept_length,
        avg_accept_after=report.after.avg_spec_accept_length,
        acceptance_length=accept_length_between(
            report.before.spec_counters, report.after.spec_counters
        ),
        median_round_trip_ms=None if trips.median is None else trips.median * 1000.0,
    )
    return replace(figures_of(report.result), server=server)


async def detect_endpoint(base_url: str) -> str:
    """``generate`` when the server answers SGLang's ``/server_info``, else ``completions``."""
    async with httpx.AsyncClient(base_url=base_url.rstrip("/"), timeout=10.0) as http:
        try:
            response = await http.get("/server_info")
            found = response.status_code == 200 and isinstance(response.json(), dict)
        except (httpx.HTTPError, ValueError):
            found = False
    return "generate" if found else "completions"


class _Gate:
    """Holds tasks until ``count`` of them have arrived (``asyncio.Barrier`` needs 3.11)."""

    def __init__(self, count: int) -> None:
        self.left = count
        self._open = asyncio.Event()

    def arrive(self) -> None:
        self.left -= 1
        if self.left <= 0:
            self._open.set()

    async def passed(self, timeout: float) -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await within(self._open.wait(), timeout)


class BenchClient:
    """Streams benchmark requests to the server at ``base_url``."""

    def __init__(self, base_url: str, workload: Workload) -> None:
        self.base_url = base_url.rstrip("/")
        self.workload = workload
        self.model = workload.model or "default"
        connections = max((*workload.concurrency, workload.warmup_requests, 1))
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            timeout=httpx.Timeout(workload.timeout, connect=10.0),
            limits=httpx.Limits(max_connections=connections + 2, max_keepalive_connections=None),
        )

    async def __aenter__(self) -> BenchClient:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self._http.aclose()

    async def resolve_model(self) -> str:
        """The model name for OpenAI-style requests: the workload's, else ``/v1/models``'s first."""
        if self.workload.model is None and self.workload.endpoint != "generate":
            found = await self._get_json("/v1/models")
            data = found.get("data") if isinstance(found, dict) else None
            first = data[0] if isinstance(data, list) and data else None
            if isinstance(first, dict) and isinstance(first.get("id"), str):
                self.model = clean(first["id"])
        return self.model

    async def run(self) -> list[LevelReport]:
        """Every concurrency level in turn, each after its warm-up requests."""
        await self.resolve_model()
        return [await self.run_level(level) for level in self.workload.concurrency]

    async def run_level(self, concurrency: int) -> LevelReport:
        warmups = self.workload.prompts[: self.workload.warmup_requests]
        if warmups:
            await self._send_all(warmups, min(concurrency, len(warmups)), WARMUP_OUTPUT_LEN)
        await self.round_trips(concurrency)
        trips: list[float] = []
        for _ in range(ROUND_TRIP_ROUNDS):
            trips.extend(await self.round_trips(concurrency))
        before = await self.server_view()
        started = time.perf_counter()
        records = await self._send_all(self.workload.prompts, concurrency, None)
        duration = time.perf_counter() - started
        after = await self.server_view()
        result = summarize(records, concurrency, duration)
        return LevelReport(result, tuple(records), before, after, tuple(trips))

    async def round_trips(self, concurrency: int) -> tuple[float, ...]:
        """Times of ``concurrency`` no-op requests sent together, each on its own connection.

        Every request keeps its connection until all have been answered, so the pool ends up
        holding that many open connections. A request that failed is left out.
        """
        gate = _Gate(max(1, concurrency))

        async def one() -> float | None:
            took, arrived = None, False
            started = time.perf_counter()
            try:
                async with self._http.stream("GET", NOOP_PATH, timeout=10.0) as response:
                    await response.aread()
                    took = time.perf_counter() - started
                    gate.arrive()
                    arrived = True
                    await gate.passed(HOLD_SECONDS)
            except (httpx.HTTPError, OSError):
                pass
            if not arrived:
                gate.arrive()
            return took

        found = await asyncio.gather(*(one() for _ in range(gate.left)))
        return tuple(took for took in found if took is not None)

    async def _send_all(
        self, prompts: Sequence[str], concurrency: int, output_len: int | None
    ) -> list[RequestRecord]:
        records: list[RequestRecord | None] = [None] * len(prompts)
        queue: Iterator[tuple[int, str]] = iter(enumerate(prompts))

        async def worker() -> None:
            for index, prompt in queue:
                records[index] = await self.send(prompt, output_len)

        await asyncio.gather(*(worker() for _ in range(max(1, concurrency))))
        return [record for record in records if record is not None]

    async def send(self, prompt: str, output_len: int | None = None) -> RequestRecord:
        """One streamed request; failures become a failed record, never an exception."""
        endpoint = self.workload.endpoint
        length = self.workload.output_len if output_len is None else output_len
        body = request_body(endpoint, prompt, length, self.workload.ignore_eos, self.model)
        reader = StreamReader(endpoint)
        chunks: list[TokenChunk] = []
        sent_at = time.perf_counter()
        try:
            error = await self._stream(ENDPOINT_PATHS[endpoint], body, reader, chunks, length)
        except (httpx.HTTPError, OSError) as exc:
            error = clean(f"{type(exc).__name__}: {exc}")
        return RequestRecord(
            sent_at=sent_at,
            ended_at=time.perf_counter(),
            chunks=tuple(chunks),
            success=error is None and reader.error is None,
            server_tokens=reader.server_tokens,
            prompt_tokens=reader.prompt_tokens,
            spec_verify_ct=reader.spec_verify_ct,
            error=error or clean(reader.error or ""),
            server_latency=reader.server_latency,
        )

    async def _stream(
        self,
        path: str,
        body: dict[str, object],
        reader: StreamReader,
        chunks: list[TokenChunk],
        length: int,
    ) -> str | None:
        received, most = 0, 2 * length + 16
        async with self._http.stream("POST", path, json=body) as response:
            if response.status_code != 200:
                text = (await response.aread())[:300].decode("utf-8", "replace")
                return clean(f"HTTP {response.status_code}: {text}")
            async for line in response.aiter_lines():
                now = time.perf_counter()
                if not line.startswith("data:"):
                    continue
                payload = line[5:].strip()
                if payload == "[DONE]":
                    break
                try:
                    event = json.loads(payload)
                except ValueError:
                    return clean(f"not JSON: {payload[:80]}")
                tokens = reader.feed(event)
                if tokens > 0:
                    chunks.append(TokenChunk(now, tokens))
                    received += tokens
                    if received > most:
                        return f"the server sent more than {most} tokens; stopped reading"
        return None

    async def server_view(self) -> ServerView:
        """SGLang's ``/server_info`` accept length, else vLLM's ``/metrics`` counters."""
        info = await self._get_json("/server_info")
        if isinstance(info, dict):
            return ServerView(avg_spec_accept_length=server_accept_length(info))
        try:
            response = await self._http.get("/metrics", timeout=10.0)
        except httpx.HTTPError:
            return ServerView()
        if response.status_code != 200:
            return ServerView()
        return ServerView(spec_counters=spec_counters(response.text[:10_000_000]))

    async def _get_json(self, path: str) -> object:
        try:
            response = await self._http.get(path, timeout=10.0)
            return response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            return None
