"""The engine's ``/metrics`` scraped every few seconds through a forward, parsed, windowed and
checked for alarms; each scrape is reported as ``MetricsScraped`` or ``MetricsMissing``.

The request goes through ``httpcore``'s connection pool (one connection, kept alive), given a
network backend when the server is reached another way than by this machine's sockets: the
app's is :class:`~tui.io.transport.session_network.SessionNetwork`, SSH channels from the host's
side, with no port forward in between.

The interval doubles (up to ``max_interval``) while the server takes more than half of it to
answer or does not answer at all, and comes back once it answers quickly again. An engine that
serves no ``/metrics`` (SGLang without ``--enable-metrics``) answers 404: that is reported once,
and asked again only every ``max_interval``.

After ``idle_scrapes`` scrapes in a row that found the server idle (see
:mod:`~tui.engine.metrics.idleness`) the scrapes are ``idle_interval`` apart (or further, while
the server is slow), until one finds it at work again or :meth:`MetricsScraper.wake` is called:
then the next scrape is at once and the interval is back to what the server's answers allow.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field

import httpcore

from tui.engine.logs.sanitize import printable
from tui.engine.metrics.alarms import AlarmThresholds, AlarmWatch, ServingAlarm
from tui.engine.metrics.idleness import idle_between
from tui.engine.metrics.metrics_window import MetricsWindow, WindowedFigures
from tui.engine.metrics.reading import engine_names, read_scrape
from tui.engine.servers import registry
from tui.engine.servers.monitor_traffic import USER_AGENT, monitor_path
from tui.io.metrics.exposition import MAX_BYTES, ExpositionError, ExpositionReader, series_names
from tui.io.transport.deadline import within
from tui.io.transport.transport import TransportError

UrlSource = Callable[[], Awaitable[str]]
Clock = Callable[[], float]
PATH = "/metrics"
_MONITOR = (("User-Agent", USER_AGENT),)
"""The scrape is the monitor's own traffic, marked as its health polls are."""
_HTTP_ERRORS = (
    httpcore.TimeoutException,
    httpcore.NetworkError,
    httpcore.ProtocolError,
    httpcore.UnsupportedProtocol,
)


@dataclass(frozen=True, slots=True)
class MetricsScraped:
    """One scrape read: the figures over each window, the alarms that started with it and
    every alarm that holds now."""

    at: float
    engine: str
    figures: WindowedFigures
    started: tuple[ServingAlarm, ...]
    active: tuple[ServingAlarm, ...]
    latency_ms: float
    interval: float
    """The time until the next scrape (longer than asked while the server is slow or idle)."""
    idle: bool = False
    """The server was idle long enough that the scrapes are ``idle_interval`` apart."""


@dataclass(frozen=True, slots=True)
class MetricsMissing:
    """The scrape got no figures; ``absent`` when the server has no ``/metrics`` at all."""

    reason: str
    absent: bool = False


@dataclass(frozen=True, slots=True)
class ScrapeOptions:
    """How often and how patiently to scrape."""

    interval: float = 2.0
    timeout: float = 5.0
    max_interval: float = 30.0
    idle_interval: float = 30.0
    """The time between scrapes of a server found idle ``idle_scrapes`` times in a row (never
    less than ``interval``)."""
    idle_scrapes: int = 3
    """Scrapes in a row that must find the server idle before the next ones are spaced out."""
    engine: str = registry.AUTO
    api_key: str | None = None
    thresholds: AlarmThresholds = field(default_factory=AlarmThresholds)


class MetricsScraper:
    """Scrapes one server; ``scrapes`` yields a report per scrape, until cancelled."""

    def __init__(
        self,
        url: UrlSource,
        options: ScrapeOptions | None = None,
        clock: Clock = time.monotonic,
        network: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        self._url = url
        self.options = options or ScrapeOptions()
        self._network = network
        key = self.options.api_key
        auth = (("Authorization", f"Bearer {key}"),) if key else ()
        self._headers = (*_MONITOR, *auth)
        self._clock = clock
        self.window = MetricsWindow()
        self.watch = AlarmWatch(self.options.thresholds)
        self.interval = self.options.interval
        """The time until the next scrape."""
        self._paced = self.options.interval
        """The interval the server's answers allow: doubled while it is slow."""
        self.idle_count = 0
        """Scrapes in a row that found the server idle."""
        self._woken = asyncio.Event()
        self._engine = self.options.engine if registry.find(self.options.engine) else None
        dialects = registry.dialects()
        if self._engine is not None:
            dialects = (registry.or_default(self._engine),)
        wanted = series_names(n for d in dialects for n in d.metric_names.names())
        self.reader = ExpositionReader(wanted)
        """Reads only the series a figure uses (a real engine sends hundreds of others)."""

    def pool(self) -> httpcore.AsyncConnectionPool:
        """The connection pool to scrape with (one connection, reused while it lives)."""
        return httpcore.AsyncConnectionPool(
            max_connections=1, max_keepalive_connections=1, network_backend=self._network
        )

    async def scrapes(self) -> AsyncGenerator[MetricsScraped | MetricsMissing, None]:
        async with self.pool() as pool:
            absent = False
            while True:
                report = await self.scrape(pool)
                if isinstance(report, MetricsMissing) and report.absent:
                    if not absent:
                        yield report
                    absent = True
                else:
                    absent = False
                    yield report
                await self._pause()

    @property
    def idle(self) -> bool:
        """The server was found idle ``idle_scrapes`` times in a row: the scrapes are spaced
        out."""
        return self.idle_count >= self.options.idle_scrapes

    def wake(self) -> None:
        """The server is at work (its log says so): scrape now, and every ``interval`` from
        then on. Does nothing unless the scrapes are spaced out for an idle server."""
        if not self.idle:
            return
        self.idle_count = 0
        self.interval = self._paced
        self._woken.set()

    async def _pause(self) -> None:
        """Wait ``interval`` seconds, or until :meth:`wake` is called."""
        woken = self._woken
        with contextlib.suppress(asyncio.TimeoutError):
            await within(woken.wait(), self.interval)
        woken.clear()

    async def scrape(self, pool: httpcore.AsyncConnectionPool) -> MetricsScraped | MetricsMissing:
        """One scrape; sets ``interval`` for the next."""
        started = time.perf_counter()
        fetched = await self._fetch(pool)
        took = time.perf_counter() - started
        self._pace(took, fetched)
        report = fetched if isinstance(fetched, MetricsMissing) else self._read(fetched, took)
        if isinstance(report, MetricsMissing):
            self._count_idle(False)
        return report

    def _pace(self, took: float, fetched: str | MetricsMissing) -> None:
        """Double the interval while the server is slow or does not answer, back to the one
        asked once it answers quickly; every ``max_interval`` while it has no ``/metrics``."""
        if isinstance(fetched, MetricsMissing) and fetched.absent:
            self._paced = self.options.max_interval
        elif took > self._paced / 2 or isinstance(fetched, MetricsMissing):
            self._paced = min(self._paced * 2, self.options.max_interval)
        else:
            self._paced = self.options.interval

    def _count_idle(self, idle: bool) -> None:
        """Count the scrapes in a row that found the server idle, and set ``interval``."""
        self.idle_count = self.idle_count + 1 if idle else 0
        spaced = max(self.options.idle_interval, self._paced)
        self.interval = spaced if self.idle else self._paced

    async def _fetch(self, pool: httpcore.AsyncConnectionPool) -> str | MetricsMissing:
        timeout = self.options.timeout
        try:
            base = await within(self._url(), timeout)
            url = f"{base}{monitor_path(PATH)}"
            answer = await within(pool.request("GET", url, headers=self._headers), timeout)
        except (TransportError, OSError, asyncio.TimeoutError, *_HTTP_ERRORS) as exc:
            why = printable(str(exc), 120) or type(exc).__name__
            return MetricsMissing(f"{PATH} did not answer: {why}")
        if answer.status == 404:
            return MetricsMissing(f"{PATH} answered 404: the server exports no metrics", True)
        if answer.status != 200:
            return MetricsMissing(f"{PATH} answered {answer.status}")
        if len(answer.content) > MAX_BYTES:
            return MetricsMissing(f"{PATH} answered more than {MAX_BYTES} bytes")
        return answer.content.decode("utf-8", errors="replace")

    def _read(self, text: str, took: float) -> MetricsScraped | MetricsMissing:
        at = self._clock()
        try:
            scrape = self.reader.read(text, at)
        except ExpositionError as exc:
            return MetricsMissing(printable(str(exc), 200))
        if self._engine is None:
            found = engine_names(scrape, ((d.name, d.metric_names) for d in registry.dialects()))
            if found is None:
                return MetricsMissing(f"{PATH} holds none of the engines' serving metrics")
            self._engine = found
        names = registry.or_default(self._engine).metric_names
        reading, before = read_scrape(scrape, names), self.window.latest
        figures = self.window.add(reading)
        self._count_idle(idle_between(before, reading))
        started = self.watch.update(at, figures)
        return MetricsScraped(
            at,
            self._engine,
            figures,
            tuple(started),
            tuple(self.watch.active.values()),
            took * 1000,
            self.interval,
            self.idle,
        )
