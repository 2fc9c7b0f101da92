"""Putting the monitor together: session, log tail, health poll, engine and app (one host here;
``cluster_build`` gives the parts for several)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from tui.app.feed.engine_link import EngineAdapter, EngineLink
from tui.app.feed.feed_sources import FeedSource
from tui.app.feed.health_source import HealthSource
from tui.app.feed.session_source import SessionSource
from tui.app.launch.launch_actions import LauncherOpener
from tui.app.monitor.alerts import NOTIFY_MODES, NotifyMode
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.themes import DEFAULT_THEME
from tui.app.monitor.view_model import EXPECTED_STARTUP_SECONDS, Target
from tui.config import MonitorConfig, ServingConfig
from tui.config.config_model import KERNEL_LOG_COMMANDS
from tui.engine.judge.stall import StallPolicy
from tui.io.bench.bench_setup import BenchOptions, BenchSetup
from tui.io.gpu.gpu_telemetry import GpuFeed, TelemetryChannel, TelemetrySettings
from tui.io.metrics.metrics_scrape import ScrapeOptions
from tui.io.metrics.metrics_setup import MetricsSetup
from tui.io.store.history_store import StartupHistory
from tui.io.store.run_store import database_file
from tui.io.transport.host_session import HostSession


def _no_keys() -> Mapping[str, str]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class WatchSettings:
    """Everything the monitor needs besides the session: what to tail and how to show it."""

    target: Target
    log_path: str
    port: int | None = None
    engine: str = "auto"
    theme: str = DEFAULT_THEME
    keys: Mapping[str, str] = field(default_factory=_no_keys)
    notify: str = "auto"
    expected_seconds: float = EXPECTED_STARTUP_SECONDS
    stall: StallPolicy = field(default_factory=StallPolicy)
    bench: BenchOptions = field(default_factory=BenchOptions)
    telemetry: TelemetrySettings | None = None
    """How to read the host's GPUs; None reads none (and hides the GPU lines)."""
    history: bool = False
    """Expect the start-up from the history file's past runs (else the profile's default)."""
    serving: ServingConfig = field(default_factory=ServingConfig)
    """Whether and how to scrape the engine's ``/metrics`` once it serves."""
    kernel_log: tuple[tuple[str, ...], ...] = KERNEL_LOG_COMMANDS
    """The commands tried in turn for a GPU host's kernel log."""
    monitor: MonitorConfig = field(default_factory=MonitorConfig)
    """How often to poll health while starting and once READY."""


def notify_mode(text: str) -> NotifyMode:
    """The configured notification mode, ``auto`` when unknown."""
    return next((mode for mode in NOTIFY_MODES if mode == text), "auto")


def build_app(
    session: HostSession,
    settings: WatchSettings,
    clock: Callable[[], float] = time.monotonic,
    launcher: LauncherOpener | None = None,
) -> MonitorApp:
    """The app watching ``settings.log_path`` (and the health port) through ``session``."""
    source = SessionSource(session, settings.log_path)
    return assemble_app(
        AppParts(
            link=EngineAdapter(settings.engine, clock),
            source=source,
            reconnect=source.reconnect,
            sessions=(session,),
            api_host=settings.target.host or None,
            telemetry=gpu_feeds([session], settings.telemetry),
        ),
        settings,
        clock,
        launcher,
    )


@dataclass(frozen=True, slots=True)
class AppParts:
    """What differs between a one-host and a several-host monitor: the engine link, the log
    source, the sessions (node 0's first: it serves the API) and the GPU reader."""

    link: EngineLink
    source: FeedSource
    reconnect: Callable[[], Awaitable[None]]
    sessions: Sequence[HostSession]
    api_host: str | None
    telemetry: tuple[GpuFeed, ...] = ()
    """One GPU reader per host, with the nodes it runs."""


def assemble_app(
    parts: AppParts,
    settings: WatchSettings,
    clock: Callable[[], float] = time.monotonic,
    launcher: LauncherOpener | None = None,
) -> MonitorApp:
    """The monitor over ``parts``: health and benchmark through the first session, the
    settings' looks and keys, the stall policy and, when asked, the start-up history."""
    api = parts.sessions[0]
    health = bench = metrics = None
    if settings.port is not None:
        monitor = settings.monitor
        health = HealthSource(
            api, settings.port, settings.engine, monitor.health_interval,
            settings.bench.api_key, monitor.health_interval_serving,
        )  # fmt: skip
        bench = BenchSetup(api, settings.port, settings.engine, settings.bench, parts.api_host)
        metrics = metrics_setup(api, settings)
    app = MonitorApp(
        link=parts.link,
        source=parts.source,
        target=settings.target,
        health=health,
        clock=clock,
        theme=settings.theme,
        keymap=settings.keys,
        notify_mode=notify_mode(settings.notify),
        expected_seconds=settings.expected_seconds,
        reconnect=parts.reconnect,
        launcher=launcher,
        bench=bench,
        telemetry=parts.telemetry,
        hosts=parts.sessions,
        metrics=metrics,
    )
    app.state.stall_policy = settings.stall
    app.state.health_grace = settings.serving.health_grace
    app.kernel_check.commands = settings.kernel_log
    if settings.history:
        app.state.planner = startup_history(settings, parts.api_host).expectations
    return app


def metrics_setup(session: HostSession, settings: WatchSettings) -> MetricsSetup | None:
    """Scraping ``/metrics`` of the server behind ``session`` (None when it is turned off)."""
    serving = settings.serving
    if settings.port is None or not serving.metrics:
        return None
    options = ScrapeOptions(
        interval=serving.interval,
        idle_interval=serving.idle_interval,
        engine=settings.engine,
        thresholds=serving.alarms,
    )
    return MetricsSetup(session, settings.port, options)


def startup_history(settings: WatchSettings, host: str | None) -> StartupHistory:
    """Past runs in the history file the benchmark control records into, under the host that
    serves the API (the key the benchmark records under), so each recorded start-up, ready or
    failed, sharpens the next one's ETA."""
    return StartupHistory(
        database_file(configured=settings.bench.data_dir),
        profile=settings.bench.profile,
        expected_startup=settings.expected_seconds,
        host=host,
    )


def gpu_feeds(
    sessions: Sequence[HostSession], settings: TelemetrySettings | None
) -> tuple[GpuFeed, ...]:
    """One GPU reader per host for the nodes ``sessions[k]`` runs (none when ``settings`` is
    None); nodes that share a host share its reader."""
    if settings is None:
        return ()
    nodes: dict[HostSession, list[int]] = {}
    for node, session in enumerate(sessions):
        nodes.setdefault(session, []).append(node)
    return tuple(
        GpuFeed(tuple(numbers), TelemetryChannel(session, settings))
        for session, numbers in nodes.items()
    )
