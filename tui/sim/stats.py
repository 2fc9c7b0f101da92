"""Counters of what the simulated GPU really generated, and the log lines built from them.

SGLang's TP0 prints ``Prefill batch`` when a request is admitted and ``Decode batch`` every
40 forward passes. Requests here run on their own exact clocks, so a forward pass is counted
as one verify step of every running request: each step adds ``1 / running`` of a pass.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from tui.sim.tokens import Activity, GenRequest

DECODE_LOG_INTERVAL = 40
TTFT_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
ITL_BUCKETS = (0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5)
E2E_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)

Emit = Callable[[str], None]
COLLAPSE_LINE = "Simulator: the accept length collapsed to 1.0 (--scenario accept-collapse)"
Clock = Callable[[], float]


@dataclass(slots=True)
class Histogram:
    """A cumulative Prometheus histogram."""

    bounds: tuple[float, ...]
    counts: list[int] = field(default_factory=list)
    total: float = 0.0
    n: int = 0

    def observe(self, value: float, times: int = 1) -> None:
        if not self.counts:
            self.counts = [0] * len(self.bounds)
        for index, bound in enumerate(self.bounds):
            if value <= bound:
                self.counts[index] += times
        self.total += value * times
        self.n += times


@dataclass(slots=True)
class Window:
    """What happened since the last Decode (or Prefill) batch line."""

    passes: float = 0.0
    tokens: int = 0
    steps: int = 0
    step_tokens: int = 0
    started: float = 0.0


@dataclass(slots=True)
class Totals:
    """Server-lifetime counters (what ``/metrics`` and ``/server_info`` report)."""

    requests: int = 0
    prompt_tokens: int = 0
    generation_tokens: int = 0
    verify_steps: int = 0
    verify_tokens: int = 0
    accepted_drafts: int = 0
    per_position: list[int] = field(default_factory=list)
    decode_lines: int = 0
    last_gen_throughput: float = 0.0
    last_accept_len: float = 0.0
    ttft: Histogram = field(default_factory=lambda: Histogram(TTFT_BUCKETS))
    e2e: Histogram = field(default_factory=lambda: Histogram(E2E_BUCKETS))
    itl: Histogram = field(default_factory=lambda: Histogram(ITL_BUCKETS))


class ServerStats(Activity):
    """Follows every request through the token engine and logs as SGLang's TP0 does."""

    def __init__(
        self, clock: Clock, emit: Emit, capacity: int, speculative: bool, draft_tokens: int
    ) -> None:
        self.clock = clock
        self.emit = emit
        self.capacity = max(capacity, 1)
        self.speculative = speculative
        self.draft_tokens = max(draft_tokens, 2)
        self.totals = Totals(per_position=[0] * max(draft_tokens - 1, 1))
        self.running: dict[str, int] = {}
        self.waiting = 0
        self.window = Window(started=clock())
        self.prefill = Window(started=clock())
        self._arrived: dict[str, float] = {}
        self._last_token: dict[str, float] = {}
        self.note: Emit = emit
        """Where the simulator's own notes go (every engine's log, where ``emit`` is only
        SGLang's)."""
        self.collapsed_at: float | None = None
        """Unix time the accept length collapsed (``--scenario accept-collapse``)."""

    @property
    def tokens_in_use(self) -> int:
        return sum(self.running.values())

    @property
    def avg_accept_length(self) -> float | None:
        """Server-lifetime mean tokens per verify step, once a Decode line was logged."""
        totals = self.totals
        if not self.speculative or totals.decode_lines == 0 or totals.verify_steps == 0:
            return None
        return totals.verify_tokens / totals.verify_steps

    def queued(self, req: GenRequest) -> None:
        self.waiting += 1
        self._arrived[req.rid] = self.clock()

    def admitted(self, req: GenRequest) -> None:
        self.waiting -= 1
        if req.log_metrics:
            self.totals.requests += 1
            self.totals.prompt_tokens += req.prompt_tokens
        now = self.clock()
        gap = max(now - self.prefill.started, 1e-6)
        usage = (self.tokens_in_use + req.prompt_tokens) / self.capacity
        self.emit(
            f"Prefill batch, #new-seq: 1, #new-token: {req.prompt_tokens}, #cached-token: 0, "
            f"token usage: {usage:.2f}, #running-req: {len(self.running)}, "
            f"#queue-req: {self.waiting}, #pending-token: 0, cuda graph: False, "
            f"input throughput (token/s): {req.prompt_tokens / gap:.2f}"
        )
        self.prefill = Window(started=now)
        self.running[req.rid] = req.prompt_tokens

    def first_token(self, req: GenRequest, wait_s: float) -> None:
        arrived = self._arrived.get(req.rid, self.clock())
        if req.log_metrics:
            self.totals.ttft.observe(self.clock() - arrived)
        self._last_token[req.rid] = self.clock()
        if req.max_new_tokens > 0:
            self._add_tokens(req, 1)

    def collapsed(self) -> None:
        """Say when the accept length fell, on the Unix clock, so that a test can measure how
        soon a monitor saw it (the line is the simulator's, not the engine's)."""
        self.collapsed_at = time.time()
        self.note(f"{COLLAPSE_LINE} at {self.collapsed_at:.3f}")

    def stepped(self, req: GenRequest, count: int) -> None:
        now = self.clock()
        last = self._last_token.get(req.rid, now)
        if req.log_metrics:
            self.totals.itl.observe((now - last) / max(count, 1), count)
        self._last_token[req.rid] = now
        self._add_tokens(req, count)
        totals, window = self.totals, self.window
        totals.verify_steps += 1
        totals.verify_tokens += count
        totals.accepted_drafts += count - 1
        for position in range(min(count - 1, len(totals.per_position))):
            totals.per_position[position] += 1
        window.steps += 1
        window.step_tokens += count
        window.passes += 1 / max(len(self.running), 1)
        if window.passes >= DECODE_LOG_INTERVAL - 1e-9:
            self._log_decode()

    def finished(self, req: GenRequest, count: int, admitted: bool) -> None:
        arrived = self._arrived.pop(req.rid, self.clock())
        self._last_token.pop(req.rid, None)
        if not admitted:
            self.waiting -= 1
            return
        self.running.pop(req.rid, None)
        if req.log_metrics:
            self.totals.e2e.observe(self.clock() - arrived)

    def _add_tokens(self, req: GenRequest, count: int) -> None:
        if req.log_metrics:
            self.totals.generation_tokens += count
        self.window.tokens += count
        if req.rid in self.running:
            self.running[req.rid] += count

    def _log_decode(self) -> None:
        now, window, totals = self.clock(), self.window, self.totals
        throughput = window.tokens / max(now - window.started, 1e-6)
        accept = window.step_tokens / max(window.steps, 1)
        spec = ""
        if self.speculative:
            rate = (accept - 1) / (self.draft_tokens - 1)
            spec = f"accept len: {accept:.2f}, accept rate: {rate:.2f}, "
            totals.last_accept_len = accept
        self.emit(
            f"Decode batch, #running-req: {len(self.running)}, #token: {self.tokens_in_use}, "
            f"token usage: {self.tokens_in_use / self.capacity:.2f}, {spec}cuda graph: True, "
            f"gen throughput (token/s): {throughput:.2f}, #queue-req: {self.waiting}"
        )
        totals.decode_lines += 1
        totals.last_gen_throughput = throughput
        self.window = Window(started=now)
