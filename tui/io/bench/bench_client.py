"""The benchmark client: streams requests to a server and times every chunk.

One shared ``httpx.AsyncClient`` with a connection per concurrent request. A closed-loop level
has ``concurrency`` workers pull prompts from one queue, so exactly that many requests are in
flight; an open-loop level sends each request at its arrival time (``load_plan``), optionally
capped by ``max_concurrency``. The run starts with its warm-up requests, full length, once. Each
level runs ``trials`` times; its result pools the trials' requests (percentiles within them) and
keeps each trial's figures for the confidence intervals. Every chunk
is stamped with ``time.perf_counter`` as its line arrives; JSON is decoded once per line. The
send is also stamped on the wall clock, so that where the server reports when it admitted the
request (the simulator's ``sim_admitted_at``) the record holds the admission delay. The
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
    Slo,
    TokenChunk,
    summarize,
)
from tui.engine.bench.bench_stream import (
    ENDPOINT_PATHS,
    Prompt,
    StreamReader,
    accept_length_between,
    acceptance_rates_between,
    position_counters,
    request_body,
    server_accept_length,
    spec_counters,
)
from tui.engine.bench.level_figures import LevelFigures, ServerSpec, figures_of
from tui.engine.bench.load_plan import LoadLevel, arrival_times, prompts_for
from tui.engine.bench.trial_figures import trial_spreads
from tui.engine.logs.sanitize import sanitize_text
from tui.io.transport.deadline import within

NOOP_PATH = "/v1/models"
HOLD_SECONDS = 10.0
ROUND_TRIP_ROUNDS = 3


def clean(text: str, limit: int = 200) -> str:
    """Server text made safe for a terminal on one line: escapes stripped, length capped."""
    return " ".join(sanitize_text(text[: limit * 4]).splitlines())[:limit]


@dataclass(frozen=True, slots=True)
class Workload:
    """What to send: prompts, lengths, levels and the endpoint.

    ``prompts`` is the pool each level takes its first ``num_prompts`` from (cycled);
    ``levels`` replaces the closed-loop ``concurrency`` levels when given.
    """

    prompts: tuple[Prompt, ...]
    output_len: int = 256
    concurrency: tuple[int, ...] = (1,)
    warmup_requests: int = 1
    ignore_eos: bool = True
    endpoint: str = "generate"
    model: str | None = None
    timeout: float = 600.0
    levels: tuple[LoadLevel, ...] = ()
    num_prompts: int | None = None
    trials: int = 1
    slo: Slo | None = None
    api_key: str | None = None
    seed: int = 0
    per_level_default: bool = False
    """Without ``num_prompts``: each level's default count (else the whole pool)."""

    @property
    def load_levels(self) -> tuple[LoadLevel, ...]:
        return self.levels or tuple(LoadLevel(c) for c in self.concurrency)

    def count_of(self, level: LoadLevel) -> int:
        if self.num_prompts is None and not self.per_level_default:
            return max(len(self.prompts), 1)
        return prompts_for(level, self.num_prompts)

    def prompts_of(self, level: LoadLevel) -> tuple[Prompt, ...]:
        """The level's prompts: the pool's first ones, cycled when the pool is shorter."""
        pool = self.prompts or ("",)
        return tuple(pool[index % len(pool)] for index in range(self.count_of(level)))

    @property
    def pool_size(self) -> int:
        """How many prompts the largest level takes."""
        return max(self.count_of(level) for level in self.load_levels)


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
    level: LoadLevel = field(default_factory=LoadLevel)
    trials: tuple[LevelResult, ...] = ()
    """Each trial's own result (one trial: the result itself)."""


def level_figures(report: LevelReport) -> LevelFigures:
    """The client's result plus the server's own accept-length figures around the level, with
    the level's records (so that more trials can pool their percentiles with them).

    ``avg_accept_before``/``_after`` are SGLang's lifetime averages (they include every earlier
    request); ``acceptance_length`` is vLLM's ``1 + accepted/drafts`` over this level's counter
    differences; ``median_round_trip_ms`` is the median time of the level's no-op requests.
    """
    trips = Distribution.of(report.round_trips)
    rates = acceptance_rates_between(report.before.spec_counters, report.after.spec_counters)
    level = report.level
    server = ServerSpec(
        avg_accept_before=report.before.avg_spec_accept_length,
        avg_accept_after=report.after.avg_spec_accept_length,
        acceptance_length=accept_length_between(
            report.before.spec_counters, report.after.spec_counters
        ),
        median_round_trip_ms=None if trips.median is None else trips.median * 1000.0,
        acceptance_rate=rates[0],
        acceptance_rates_per_pos=rates[1],
    )
    spreads = trial_spreads([figures_of(trial) for trial in report.trials])
    return replace(
        figures_of(report.result), server=server, request_rate=level.request_rate,
        burstiness=None if level.request_rate is None else level.burstiness,
        num_prompts=len(report.records) // max(len(report.trials), 1), trials=spreads,
        records=report.records,
    )  # fmt: skip


def _burst_width(level: LoadLevel, count: int) -> int:
    """Requests that arrive together: the level's round trip is timed that many at a time.

    Closed loop: its concurrency; an infinite rate: every request (at most the cap, or 64); a
    finite rate: one, since arrivals are spread out.
    """
    rate = level.request_rate
    if rate is None:
        return max(1, level.concurrency)
    if rate == float("inf"):
        return level.slots or min(count, 64)
    return 1


class AccessDenied(Exception):
    """The server answered 401: no API key, or not the one it wants."""


def auth_headers(api_key: str | None) -> dict[str, str]:
    """The bearer token both engines check with ``--api-key``."""
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def denied_text(api_key: str | None) -> str:
    if api_key:
        return "the server refused the API key (HTTP 401)"
    return (
        "the server wants an API key (HTTP 401): give --api-key, set $OPENAI_API_KEY, "
        "or name the variable in the profile's api_key_env"
    )


async def detect_endpoint(base_url: str, api_key: str | None = None) -> str:
    """``generate`` when the server answers SGLang's ``/server_info``, else ``completions``."""
    async with httpx.AsyncClient(
        base_url=base_url.rstrip("/"), timeout=10.0, headers=auth_headers(api_key)
    ) as http:
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
        widest = max(level.slots or workload.count_of(level) for level in workload.load_levels)
        connections = max(widest, workload.warmup_requests, 1)
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            timeout=httpx.Timeout(workload.timeout, connect=10.0),
            limits=httpx.Limits(max_connections=connections + 2, max_keepalive_connections=None),
            headers=auth_headers(workload.api_key),
        )

    async def __aenter__(self) -> BenchClient:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self._http.aclose()

    async def resolve_model(self) -> str:
        """The served model's name (``/v1/models``' first) unless the workload names one.

        ``AccessDenied`` when the server answers 401, before anything is measured.
        """
        try:
            response = await self._http.get("/v1/models", timeout=10.0)
            found = response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            response, found = None, None
        if response is not None and response.status_code == 401:
            raise AccessDenied(denied_text(self.workload.api_key))
        data = found.get("data") if isinstance(found, dict) else None
        first = data[0] if isinstance(data, list) and data else None
        served = first.get("id") if isinstance(first, dict) else None
        if self.workload.model is None and isinstance(served, str):
            self.model = clean(served)
        return self.model

    async def run(self) -> list[LevelReport]:
        """The warm-up once, then every level in turn."""
        await self.resolve_model()
        await self.warm_up()
        return [await self.run_level(level) for level in self.workload.load_levels]

    async def warm_up(self) -> None:
        """``warmup_requests`` full-length requests, not measured, once per run."""
        count = self.workload.warmup_requests
        if count > 0:
            pool = self.workload.prompts or ("",)
            warmups = [pool[index % len(pool)] for index in range(count)]
            await self._send_all(warmups, LoadLevel(count), self.workload.output_len)

    async def run_level(self, level: LoadLevel | int) -> LevelReport:
        """The level's ``trials`` runs, pooled; each trial after its no-op round trips."""
        if isinstance(level, int):
            level = LoadLevel(level)
        width = _burst_width(level, len(self.workload.prompts_of(level)))
        await self.round_trips(width)
        trips: list[float] = []
        for _ in range(ROUND_TRIP_ROUNDS):
            trips.extend(await self.round_trips(width))
        prompts = self.workload.prompts_of(level)
        before = await self.server_view()
        records: list[RequestRecord] = []
        trials: list[LevelResult] = []
        total = 0.0
        for trial in range(max(1, self.workload.trials)):
            arrivals = arrival_times(len(prompts), level, self.workload.seed + trial)
            started = time.perf_counter()
            found = await self._send_all(prompts, level, None, arrivals)
            duration = time.perf_counter() - started
            total += duration
            records.extend(found)
            trials.append(summarize(found, level.concurrency, duration, self.workload.slo))
        after = await self.server_view()
        result = summarize(records, level.concurrency, total, self.workload.slo)
        return LevelReport(
            result, tuple(records), before, after, tuple(trips), level, tuple(trials)
        )

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
        self,
        prompts: Sequence[Prompt],
        level: LoadLevel,
        output_len: int | None,
        arrivals: Sequence[float] = (),
    ) -> list[RequestRecord]:
        records: list[RequestRecord | None] = [None] * len(prompts)
        if level.request_rate is None:
            queue: Iterator[tuple[int, Prompt]] = iter(enumerate(prompts))

            async def worker() -> None:
                for index, prompt in queue:
                    records[index] = await self.send(prompt, output_len)

            await asyncio.gather(*(worker() for _ in range(max(1, level.concurrency))))
        else:
            await self._open_loop(prompts, level, output_len, arrivals, records)
        return [record for record in records if record is not None]

    async def _open_loop(
        self,
        prompts: Sequence[Prompt],
        level: LoadLevel,
        output_len: int | None,
        arrivals: Sequence[float],
        records: list[RequestRecord | None],
    ) -> None:
        """Each request at its arrival time; beyond ``max_concurrency`` it waits for a slot."""
        slots = asyncio.Semaphore(level.slots) if level.slots else None
        start = time.perf_counter()

        async def one(index: int, prompt: Prompt, at: float) -> None:
            delay = start + at - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            if slots is None:
                records[index] = await self.send(prompt, output_len)
                return
            async with slots:
                records[index] = await self.send(prompt, output_len)

        times = list(arrivals) or [0.0] * len(prompts)
        await asyncio.gather(
            *(one(i, p, at) for i, (p, at) in enumerate(zip(prompts, times, strict=True)))
        )

    async def send(self, prompt: Prompt, output_len: int | None = None) -> RequestRecord:
        """One streamed request; failures become a failed record, never an exception."""
        endpoint = self.workload.endpoint
        length = self.workload.output_len if output_len is None else output_len
        body = request_body(endpoint, prompt, length, self.workload.ignore_eos, self.model)
        reader = StreamReader(endpoint)
        chunks: list[TokenChunk] = []
        sent_wall, sent_at = time.time(), time.perf_counter()
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
            sent_wall=sent_wall,
            admitted_at=reader.admitted_at,
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
            if response.status_code == 401:
                return denied_text(self.workload.api_key)
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
        text = response.text[:10_000_000]
        return ServerView(spec_counters=spec_counters(text) | position_counters(text))

    async def _get_json(self, path: str) -> object:
        try:
            response = await self._http.get(path, timeout=10.0)
            return response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            return None
