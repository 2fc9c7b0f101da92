"""The built-in client as the app runs it: one level (closed or open loop) after another, with
the log's and the server's view of speculative decoding around each.

Around each level it takes the engine's decode summary from the log (so the ``accept len``
values logged during the level can be shown next to the client's and the server's figures) and,
on SGLang, the ``/metrics`` counters (so the server's accept length can be differenced over the
level).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace

import httpx

from tui.engine.bench.bench_math import RequestRecord
from tui.engine.bench.bench_stream import Prompt
from tui.engine.bench.bench_view import (
    LevelExtras,
    accept_figures,
    accepts_between,
    sglang_spec_counters,
)
from tui.engine.bench.level_figures import LevelFigures
from tui.engine.bench.load_plan import LoadLevel
from tui.engine.startup.snapshot import DecodeSummary
from tui.io.bench.bench_client import BenchClient, LevelReport, ServerView, Workload, level_figures

SETTLE_SECONDS = 1.0
"""Wait after a level before reading the log's decode figures: its last lines are in transit."""

Progressed = Callable[[str, int, int], None]
"""Called with (the level's label, requests done, requests failed) after every measured
request."""
LevelDone = Callable[[str, LevelFigures], Awaitable[None]]
"""Awaited with (the level's label, its figures) when a level ends."""


class LevelClient(BenchClient):
    """The benchmark client, counting measured requests and noting the log and server counters
    at the start of each level."""

    def __init__(
        self, base_url: str, workload: Workload, decode: Callable[[], DecodeSummary],
        progressed: Progressed,
    ) -> None:  # fmt: skip
        super().__init__(base_url, workload)
        self.decode = decode
        self.progressed = progressed
        self.level = ""
        self.done = 0
        self.failed = 0
        self.marks: list[tuple[DecodeSummary, dict[str, float] | None]] = []

    async def send(self, prompt: Prompt, output_len: int | None = None) -> RequestRecord:
        record = await super().send(prompt, output_len)
        if output_len is None:
            self.done += 1
            self.failed += 0 if record.success else 1
            self.progressed(self.level, self.done, self.failed)
        return record

    async def server_view(self) -> ServerView:
        view = await super().server_view()
        counters = None if view.spec_counters else await self.sglang_counters()
        self.marks.append((self.decode(), counters))
        return view

    async def sglang_counters(self) -> dict[str, float] | None:
        """SGLang's token and verify counters, when the server exports ``/metrics``."""
        try:
            response = await self._http.get("/metrics", timeout=10.0)
        except httpx.HTTPError:
            return None
        if response.status_code != 200:
            return None
        found = sglang_spec_counters(response.text[:10_000_000])
        return found if "verify" in found else None

    async def level_figures(self, level: LoadLevel, settle: float) -> LevelFigures:
        """Run one level and return its figures, the three accept lengths included."""
        self.level, self.done, self.failed = level.label, 0, 0
        self.marks.clear()
        report = await self.run_level(level)
        await asyncio.sleep(settle)
        before_log, before_counters = self.marks[0] if self.marks else (self.decode(), None)
        after_counters = self.marks[-1][1] if len(self.marks) > 1 else None
        extras = LevelExtras(
            client_output_tokens=_client_tokens(report),
            log_accepts=accepts_between(before_log, self.decode()),
            sglang_before=before_counters,
            sglang_after=after_counters,
        )
        figures = level_figures(report)
        return replace(figures, accepts=accept_figures(extras, figures))


def _client_tokens(report: LevelReport) -> int:
    return sum(record.client_tokens for record in report.records if record.success)


async def measure(
    client: LevelClient, levels: tuple[LoadLevel, ...], level_done: LevelDone,
    settle: float = SETTLE_SECONDS,
) -> list[LevelFigures]:  # fmt: skip
    """The warm-up, then every level in turn (after ``client.resolve_model()``);
    ``level_done`` hears of each."""
    await client.warm_up()
    results = []
    for level in levels:
        figures = await client.level_figures(level, settle)
        await level_done(level.label, figures)
        results.append(figures)
    return results
