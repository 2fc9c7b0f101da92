"""``bringup stats [PROFILE | --url URL] [--interval 2s] [--json]``: the engine's serving figures,
one line (or one JSON object) per scrape of its ``/metrics``, until interrupted.

A profile's server is reached through an SSH forward to its first host (or directly when it
runs here); ``--url`` names the server instead. Each line gives the figures over the last 10 s
and the alarms that started with the scrape.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO

from tui.commands.exit_codes import ExitStatus
from tui.commands.json_time import SCHEMA_VERSION
from tui.commands.ssh_flags import add_ssh_arguments, with_ssh_flags
from tui.config import ConfigError, Profile, load_config
from tui.engine.metrics.figure_text import figures_line
from tui.engine.timing.durations import DurationError, parse_duration
from tui.io.metrics.metrics_scrape import (
    MetricsMissing,
    MetricsScraped,
    MetricsScraper,
    ScrapeOptions,
)
from tui.io.transport.host_session import HostSession, LocalConnector, SshConnector
from tui.io.transport.profile_target import spec_target
from tui.io.transport.ssh import ConnectError

DESCRIPTION = (
    "Print the engine's serving figures from its /metrics (tokens/s, running and queued "
    "requests, KV-cache use, accept length, server-side TTFT and ITL) over the last 10 s, one "
    "line or JSON object per interval, until interrupted; alarms as they start."
)


def _interval(text: str) -> float:
    try:
        seconds = parse_duration(text)
    except DurationError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if seconds < 0.1:
        raise argparse.ArgumentTypeError("must be at least 0.1 s")
    return seconds


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("stats", help="the engine's serving figures", description=DESCRIPTION)
    add = parser.add_argument
    add("profile", nargs="?", help="the profile whose server to read (default: the default one)")
    add("--url", help="server address instead of a profile's, e.g. http://127.0.0.1:30000")
    add("--config", type=Path, help="configuration file (default: $BRINGUP_CONFIG or XDG)")
    add("--interval", type=_interval, help="time between scrapes (default: the profile's, 2s)")
    add("--json", action="store_true", help="print one JSON object per scrape")
    add("--count", type=int, help="stop after this many scrapes")
    add_ssh_arguments(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        loaded = None if args.url else load_config(args.config).profile(args.profile)
        profile = None if loaded is None else with_ssh_flags(args, loaded)
    except ConfigError as exc:
        print(f"bringup stats: {exc}", file=sys.stderr)
        return ExitStatus.CONFIG
    options = _options(args, profile)
    try:
        return asyncio.run(_stats(args, profile, options, sys.stdout))
    except ConnectError as exc:
        print(f"bringup stats: {exc}", file=sys.stderr)
        return ExitStatus.UNREACHABLE


def _options(args: argparse.Namespace, profile: Profile | None) -> ScrapeOptions:
    if profile is None:
        return ScrapeOptions(interval=args.interval or 2.0)
    serving = profile.serving
    return ScrapeOptions(
        interval=args.interval or serving.interval,
        idle_interval=serving.idle_interval,
        engine=profile.engine,
        thresholds=serving.alarms,
    )


async def _stats(
    args: argparse.Namespace, profile: Profile | None, options: ScrapeOptions, out: TextIO
) -> int:
    if profile is None:
        url = str(args.url).rstrip("/")

        async def direct() -> str:
            return url

        return await _print(direct, options, args, out)
    session = _session(profile)
    await session.start()
    port = profile.port_for()

    async def forwarded() -> str:
        return await session.forward(port)

    try:
        return await _print(forwarded, options, args, out)
    finally:
        await session.close()


async def _print(
    url: Callable[[], Awaitable[str]], options: ScrapeOptions, args: argparse.Namespace, out: TextIO
) -> int:
    scraper = MetricsScraper(url, options)
    count = 0
    async for report in scraper.scrapes():
        print(json.dumps(_json(report)) if args.json else _line(report), file=out, flush=True)
        count += 1
        if args.count is not None and count >= args.count:
            break
    return ExitStatus.OK


def _line(report: MetricsScraped | MetricsMissing) -> str:
    stamp = time.strftime("%H:%M:%S")
    if isinstance(report, MetricsMissing):
        return f"{stamp} no metrics: {report.reason}"
    text = f"{stamp} {figures_line(report.figures.short)}"
    alarms = "".join(f"\n{stamp} ALARM {alarm.text}" for alarm in report.started)
    return text + alarms


def _head() -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "t": round(time.time(), 6)}


def _json(report: MetricsScraped | MetricsMissing) -> dict[str, Any]:
    if isinstance(report, MetricsMissing):
        return _head() | {"missing": report.reason, "absent": report.absent}
    return _head() | {
        "engine": report.engine,
        "last_10s": dataclasses.asdict(report.figures.short),
        "interval": dataclasses.asdict(report.figures.interval),
        "alarms": [dataclasses.asdict(alarm) | {"text": alarm.text} for alarm in report.started],
        "active": [alarm.kind for alarm in report.active],
        "scrape_ms": round(report.latency_ms, 1),
        "next_scrape_s": report.interval,
    }


def _session(profile: Profile) -> HostSession:
    if not profile.hosts:
        return HostSession(LocalConnector())
    return HostSession(SshConnector(spec_target(profile, profile.hosts[0])))
