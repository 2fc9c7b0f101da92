"""Benchmark arithmetic: per-request records in, one result per concurrency level out.

The definitions are the published ones of ``sglang.bench_serving`` and ``vllm bench serve``:

- TTFT: send time to the first chunk that carried tokens.
- TPOT: ``(latency - ttft) / (output_tokens - 1)``, only for requests with more than one token.
- ITL (vLLM ``vllm/benchmarks/lib/endpoint_request_func.py``): for each chunk after the first,
  the gap since the previous chunk, one value per chunk whatever the tokens it carried.
- Token gap (ours, a name neither tool uses): the same gap divided by the tokens of the chunk,
  counted once per token (a chunk of 3 tokens after 30 ms gives three 10 ms values).
- E2E latency: send time to the last chunk that carried a token (the end of the response when
  none did).
- Throughput: completed requests, output tokens, and input plus output tokens
  (``total_token_throughput``) divided by the level's wall-clock duration.
- Goodput (vLLM ``--goodput``): completed requests that met every given SLO (TTFT, TPOT with 0
  for one-token requests, E2E latency; milliseconds, ``<=``) per second.
- Decode speed: per request, the tokens after the first chunk divided by the time from the first
  chunk to the last one (the server's generation rate; unlike TPOT it leaves out the time the
  stream takes to close after its last token).
- Accept length: ``completion_tokens / spec_verify_ct`` per request (the bonus token included);
  the level's figure is the token-weighted ``sum(completion_tokens) / sum(spec_verify_ct)``.

Requests that produced no token count as completed but add no TTFT, TPOT or ITL value. Output
tokens are the server's count (``usage`` or ``meta_info``) when it sent one, else the client's.
Percentiles interpolate linearly between closest ranks, like numpy's default.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TokenChunk:
    """One streamed chunk that carried ``tokens`` new tokens, stamped on arrival."""

    at: float
    tokens: int


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """What the client saw of one request. Times are ``time.perf_counter`` seconds."""

    sent_at: float
    ended_at: float
    chunks: tuple[TokenChunk, ...] = ()
    success: bool = True
    server_tokens: int | None = None
    prompt_tokens: int | None = None
    spec_verify_ct: int | None = None
    error: str = ""
    server_latency: float | None = None
    """The server's own end-to-end time for the request (SGLang ``meta_info.e2e_latency``)."""
    sent_wall: float | None = None
    """``time.time()`` when the request was sent (``sent_at`` on the wall clock)."""
    admitted_at: float | None = None
    """``time.time()`` when the server admitted it, where it says so (the simulator does)."""

    @property
    def admission_delay(self) -> float | None:
        """Seconds from sending to the server's admission; None when it sent no stamp.

        Ours, a name neither tool uses: the part of the TTFT before the server's own clock
        started (sending, transport, HTTP handling, the wait behind a burst's other requests).
        """
        if self.admitted_at is None or self.sent_wall is None:
            return None
        return self.admitted_at - self.sent_wall

    @property
    def client_tokens(self) -> int:
        """Tokens counted by the client over the chunks it received."""
        return sum(chunk.tokens for chunk in self.chunks if chunk.tokens > 0)

    @property
    def output_tokens(self) -> int:
        return self.server_tokens if self.server_tokens is not None else self.client_tokens

    @property
    def latency(self) -> float:
        """Send to the last chunk that carried a token, as both tools define it (vLLM
        ``output.latency = most_recent_timestamp - st``, SGLang's ``latency`` of its last
        chunk): the stream's ``[DONE]`` and its closing after the last token are left out.
        Without a token, send to the end of the response."""
        last = next((chunk.at for chunk in reversed(self.chunks) if chunk.tokens > 0), None)
        return (self.ended_at if last is None else last) - self.sent_at

    @property
    def ttft(self) -> float | None:
        first = next((chunk for chunk in self.chunks if chunk.tokens > 0), None)
        return None if first is None else first.at - self.sent_at

    @property
    def tpot(self) -> float | None:
        ttft = self.ttft
        if ttft is None or self.output_tokens <= 1:
            return None
        return (self.latency - ttft) / (self.output_tokens - 1)

    @property
    def itl(self) -> list[float]:
        """vLLM's inter-token latencies: one gap per chunk after the first."""
        timed = [chunk.at for chunk in self.chunks if chunk.tokens > 0]
        return [b - a for a, b in itertools.pairwise(timed)]

    @property
    def token_gaps(self) -> list[float]:
        """Each chunk's gap spread over its tokens, once per token."""
        values: list[float] = []
        previous: float | None = None
        for chunk in self.chunks:
            if chunk.tokens <= 0:
                continue
            if previous is not None:
                values.extend([(chunk.at - previous) / chunk.tokens] * chunk.tokens)
            previous = chunk.at
        return values

    @property
    def decode_speed(self) -> float | None:
        """Tokens per second from the first chunk with tokens to the last one."""
        timed = [chunk for chunk in self.chunks if chunk.tokens > 0]
        if len(timed) < 2 or timed[-1].at <= timed[0].at:
            return None
        after_first = self.output_tokens - timed[0].tokens
        return after_first / (timed[-1].at - timed[0].at) if after_first > 0 else None

    @property
    def accept_length(self) -> float | None:
        if not self.spec_verify_ct or self.server_tokens is None:
            return None
        return self.server_tokens / self.spec_verify_ct


def percentile(values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (0-100) with linear interpolation between closest ranks."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    position = (len(ordered) - 1) * p / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (position - low) * (ordered[high] - ordered[low])


@dataclass(frozen=True, slots=True)
class Distribution:
    """Summary of a list of values; every figure is None when there were none."""

    count: int = 0
    mean: float | None = None
    median: float | None = None
    std: float | None = None
    p90: float | None = None
    p95: float | None = None
    p99: float | None = None
    max: float | None = None

    @classmethod
    def of(cls, values: Sequence[float]) -> Distribution:
        if not values:
            return cls()
        mean = math.fsum(values) / len(values)
        variance = math.fsum((value - mean) ** 2 for value in values) / len(values)
        return cls(
            count=len(values),
            mean=mean,
            median=percentile(values, 50),
            std=math.sqrt(variance),
            p90=percentile(values, 90),
            p95=percentile(values, 95),
            p99=percentile(values, 99),
            max=max(values),
        )


@dataclass(frozen=True, slots=True)
class Slo:
    """Service-level objectives for goodput, in milliseconds (None: not checked)."""

    ttft_ms: float | None = None
    tpot_ms: float | None = None
    e2el_ms: float | None = None

    def met_by(self, record: RequestRecord) -> bool:
        ttft = record.ttft
        checks = (
            (self.ttft_ms, None if ttft is None else ttft * 1000.0),
            (self.tpot_ms, (record.tpot or 0.0) * 1000.0),
            (self.e2el_ms, record.latency * 1000.0),
        )
        return all(limit is None or (v is not None and v <= limit) for limit, v in checks)


@dataclass(frozen=True, slots=True)
class LevelResult:
    """The benchmark at one concurrency level. Times in seconds, speeds per second."""

    concurrency: int
    completed: int
    failed: int
    duration: float
    total_input_tokens: int
    total_output_tokens: int
    request_throughput: float
    output_throughput: float
    ttft: Distribution
    tpot: Distribution
    itl: Distribution
    e2el: Distribution
    decode_speed: Distribution
    accept_length: float | None
    accept_lengths: Distribution
    token_mismatches: int
    errors: tuple[str, ...] = ()
    token_gap: Distribution = Distribution()
    total_token_throughput: float = 0.0
    request_goodput: float | None = None


def summarize(
    records: Sequence[RequestRecord],
    concurrency: int,
    duration: float | None = None,
    slo: Slo | None = None,
) -> LevelResult:
    """The level's result; ``duration`` defaults to first send to last end."""
    done = [record for record in records if record.success]
    if duration is None:
        duration = _span(records)
    output_tokens = sum(record.output_tokens for record in done)
    input_tokens = sum(record.prompt_tokens or 0 for record in done)
    good = None if slo is None else sum(1 for record in done if slo.met_by(record))
    return LevelResult(
        concurrency=concurrency,
        completed=len(done),
        failed=len(records) - len(done),
        duration=duration,
        total_input_tokens=input_tokens,
        total_output_tokens=output_tokens,
        request_throughput=_per_second(len(done), duration),
        output_throughput=_per_second(output_tokens, duration),
        ttft=Distribution.of([t for r in done if (t := r.ttft) is not None]),
        tpot=Distribution.of([t for r in done if (t := r.tpot) is not None]),
        itl=Distribution.of([gap for record in done for gap in record.itl]),
        e2el=Distribution.of([record.latency for record in done]),
        decode_speed=Distribution.of([v for r in done if (v := r.decode_speed) is not None]),
        accept_length=_accept_length(done),
        accept_lengths=Distribution.of([a for r in done if (a := r.accept_length) is not None]),
        token_mismatches=sum(1 for record in done if _mismatch(record)),
        errors=_distinct_errors(records),
        token_gap=Distribution.of([gap for record in done for gap in record.token_gaps]),
        total_token_throughput=_per_second(input_tokens + output_tokens, duration),
        request_goodput=None if good is None else _per_second(good, duration),
    )


def _per_second(amount: int, duration: float) -> float:
    return amount / duration if duration > 0 else 0.0


def _span(records: Sequence[RequestRecord]) -> float:
    if not records:
        return 0.0
    return max(r.ended_at for r in records) - min(r.sent_at for r in records)


def _accept_length(done: Sequence[RequestRecord]) -> float | None:
    counted = [r for r in done if r.spec_verify_ct and r.server_tokens is not None]
    verify = sum(r.spec_verify_ct or 0 for r in counted)
    return sum(r.server_tokens or 0 for r in counted) / verify if verify else None


def _mismatch(record: RequestRecord) -> bool:
    return record.server_tokens is not None and record.server_tokens != record.client_tokens


def _distinct_errors(records: Sequence[RequestRecord], limit: int = 5) -> tuple[str, ...]:
    errors: list[str] = []
    for record in records:
        if not record.success and record.error not in errors:
            errors.append(record.error)
    return tuple(errors[:limit])
