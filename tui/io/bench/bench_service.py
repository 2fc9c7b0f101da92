"""One benchmark of a ready server, start to end: the app runs :func:`run_benchmark` in a worker.

Traffic goes through a port forward of the host session (whose connection also carries the
health poll and the scrape); with ``bench.official`` the engine's own tool then runs on the host
at each level, closed or open loop, so its figures are shown beside ours. Closed-loop
(``concurrency``) and open-loop (``request_rate``) levels run as the profile's ``[bench]`` table
says; :class:`MoreTrials` runs more trials of levels already measured and pools them with the
earlier ones. Each finished level is told to the listener and stored at once against the run's
history id, so nothing measured is lost.
Every failure ends the benchmark with :class:`BenchRunFailed` and a sanitized text.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import httpx

from tui.config import BenchConfig
from tui.data.prompts import PromptFileError
from tui.engine.bench.level_figures import LevelFigures, ServingStats
from tui.engine.bench.level_key import LevelKey
from tui.engine.bench.load_plan import LoadLevel, levels_of, prompts_for
from tui.engine.bench.trial_figures import with_more_trials
from tui.engine.servers import registry
from tui.engine.startup.snapshot import DecodeSummary, Snapshot
from tui.io.bench.bench_client import AccessDenied, Workload, clean, detect_endpoint
from tui.io.bench.bench_setup import BenchSetup
from tui.io.bench.bench_workload import build_workload
from tui.io.bench.builtin_run import SETTLE_SECONDS, LevelClient, measure
from tui.io.bench.official_run import OfficialRunFailed, OfficialSetup, run_official
from tui.io.store.run_records import BenchMeta, save_levels
from tui.io.store.run_store import StoreError
from tui.io.transport.deadline import within
from tui.io.transport.host_session import SessionClosed
from tui.io.transport.transport import TransportError

ServingDuring = Callable[[float, float], ServingStats | None]
FORWARD_TIMEOUT_SECONDS = 15.0
FAILURES = (
    httpx.HTTPError, OSError, TransportError, SessionClosed, asyncio.TimeoutError,
    PromptFileError, OfficialRunFailed, StoreError, AccessDenied,
)  # fmt: skip
"""What a benchmark can fail with; each ends it with :class:`BenchRunFailed`."""


class BenchListener(Protocol):
    """Hears what the benchmark does, as it happens; levels are named by their label (``c=4``,
    ``r=8``)."""

    def started(self, title: str, levels: Sequence[str], per_level: int | None) -> None: ...

    def progressed(self, level: str, done: int, failed: int) -> None: ...

    def level_finished(self, level: str, figures: LevelFigures) -> None: ...


class BenchRunFailed(Exception):
    """The benchmark could not go on; the message says why (and where finished levels went)."""


@dataclass(frozen=True, slots=True)
class BenchRequest:
    """One benchmark: the server, the start-up it follows and where its levels are stored."""

    setup: BenchSetup
    snapshot: Callable[[], Snapshot]
    """The engine's latest snapshot (its decode summary is read around every level)."""
    run_id: int | None
    settle: float = SETTLE_SECONDS
    serving: ServingDuring | None = None
    """The engine's ``/metrics`` figures between two monotonic times (the app's scrape), kept
    with each level."""
    more: MoreTrials | None = None
    """Set to run more trials of levels already measured, instead of the profile's levels."""


@dataclass(frozen=True, slots=True)
class MoreTrials:
    """More trials of levels already measured: each level's earlier figures and how many more
    trials to run; the new trials are pooled with the earlier ones."""

    earlier: tuple[LevelFigures, ...]
    trials: int = 3


def bench_title(settings: BenchConfig, endpoint: str) -> str:
    """What the pane says the benchmark sends: prompts per level, lengths, levels, trials."""
    levels = levels_of(
        settings.concurrency, settings.request_rate, settings.burstiness, settings.max_concurrency
    )
    counts = sorted({prompts_for(level, settings.num_prompts) for level in levels})
    prompts = "/".join(str(count) for count in counts)
    trials = f" · {settings.trials} trials" if settings.trials > 1 else ""
    return (
        f"{endpoint} · {prompts} prompts · ~{settings.input_len} in / "
        f"{settings.output_len} out · {_levels_text(levels)}{trials}"
    )


def _levels_text(levels: Sequence[LoadLevel]) -> str:
    """``c=1,4,16`` or ``r=2,8,inf`` (with `` c<=64`` when capped)."""
    if not levels or levels[0].request_rate is None:
        return "c=" + ",".join(str(level.concurrency) for level in levels)
    rates = ",".join(
        "inf" if math.isinf(level.request_rate or 0.0) else f"{level.request_rate:g}"
        for level in levels
    )
    cap = levels[0].concurrency
    return f"r={rates}" + (f" c<={cap}" if cap else "")


async def run_benchmark(request: BenchRequest, listener: BenchListener) -> str:
    """Benchmark every level; returns where the results were kept (``BenchRunFailed`` else)."""
    run = _Run(request, listener)
    try:
        await run.builtin()
        if request.setup.options.config.official and request.more is None:
            await run.official()
    except FAILURES as exc:
        error = clean(f"{type(exc).__name__}: {exc}", 300)
        raise BenchRunFailed(f"{error} ({run.saved})" if run.saved else error) from None
    return run.saved


class _Run:
    """The state of one benchmark: its stored metadata and what became of the saved levels."""

    def __init__(self, request: BenchRequest, listener: BenchListener) -> None:
        self.request = request
        self.listener = listener
        setup = request.setup
        self.meta = BenchMeta(setup.options.profile, setup.address, "", None, time.time())
        self.saved = ""

    def _engine(self, snapshot: Snapshot) -> str:
        engine = self.request.setup.engine
        return engine if engine != registry.AUTO else snapshot.server.engine

    async def builtin(self) -> None:
        setup, snapshot = self.request.setup, self.request.snapshot()
        settings = setup.options.config
        url = await within(setup.session.forward(setup.port), FORWARD_TIMEOUT_SECONDS)
        key = setup.options.api_key
        endpoint = settings.endpoint
        if endpoint is None:
            engine = self._engine(snapshot)
            known = registry.find(engine) is not None
            endpoint = settings.endpoint_for(engine) if known else await detect_endpoint(url, key)
        workload = await build_workload(settings, endpoint, url, key)
        workload = _more_trials(workload, self.request.more)
        self.meta = replace(self.meta, endpoint=endpoint, model=snapshot.server.model)
        levels = workload.load_levels
        # Progress counts every measured request, over all of a level's trials.
        total = max((len(workload.prompts_of(level)) for level in levels), default=0)
        total *= max(workload.trials, 1)
        title = bench_title(settings, endpoint)
        labels = [level.label for level in levels]
        if self.request.more is not None:
            title = f"{self.request.more.trials} more trials of {', '.join(labels)} · {endpoint}"
        elif settings.official:
            tool = registry.or_default(self._engine(snapshot)).bench_tool.title
            title += f" · then official {tool}"
        self.listener.started(title, labels, total or None)
        client = LevelClient(url, workload, self._decode, self.listener.progressed)
        async with client:
            await client.resolve_model()
            self.meta = replace(self.meta, model=snapshot.server.model or client.model)
            await measure(client, levels, self._level_done, self.request.settle)

    async def official(self) -> None:
        """The engine's own tool at each level, after ours (shown beside them)."""
        setup, snapshot = self.request.setup, self.request.snapshot()
        settings = setup.options.config
        self.meta = replace(self.meta, endpoint="official", model=snapshot.server.model)
        engine = self._engine(snapshot)
        official = OfficialSetup(
            setup.session, engine, setup.port, snapshot.server.model,
            setup.options.venv, setup.options.conda_env, host=setup.session.api_host,
        )  # fmt: skip
        await run_official(official, settings, self._official_done)

    async def _official_done(self, level: LoadLevel, figures: LevelFigures) -> None:
        await self._level_done(level.label, figures)

    def _decode(self) -> DecodeSummary:
        return self.request.snapshot().decode

    async def _level_done(self, label: str, figures: LevelFigures) -> None:
        """Tell of a finished level and store it at once, so that nothing measured is lost."""
        serving = self.request.serving
        if serving is not None and figures.duration:
            end = time.monotonic()
            figures = replace(figures, serving=serving(end - figures.duration, end))
        more = self.request.more
        earlier = None if more is None or figures.source else _earlier(more, figures)
        if earlier is not None:
            figures = with_more_trials(earlier, figures)
        self.listener.level_finished(label, figures)
        options, run_id = self.request.setup.options, self.request.run_id
        try:
            await asyncio.to_thread(save_levels, options.data_dir, run_id, [figures], self.meta)
        except StoreError as exc:
            self.saved = f"results not saved: {clean(str(exc))}"
            return
        if not self.saved.startswith("results not saved"):
            run = f"run #{run_id}" if run_id is not None else "no run (not recorded)"
            self.saved = f"saved with {run}"


def _more_trials(workload: Workload, more: MoreTrials | None) -> Workload:
    """The workload of more trials: only the earlier levels, ``more.trials`` times, no warm-up
    (the server is warm)."""
    if more is None:
        return workload
    levels = tuple(LevelKey.of(figures).load(figures.burstiness or 1.0) for figures in more.earlier)
    return replace(workload, levels=levels, trials=more.trials, warmup_requests=0)


def _earlier(more: MoreTrials, figures: LevelFigures) -> LevelFigures | None:
    key = LevelKey.of(figures)
    return next((level for level in more.earlier if LevelKey.of(level) == key), None)
