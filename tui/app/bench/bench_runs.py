"""The benchmark the app runs when the server is ready: built-in client or the engine's own tool.

``measure`` streams the configured workload through the port forward with the built-in client,
one concurrency level after another, reporting every finished request. Around each level it
takes the engine's decode summary from the log (so the ``accept len`` values logged during the
level can be shown next to the client's and the server's figures) and, on SGLang, the
``/metrics`` counters (so the server's accept length can be differenced over the level).

``run_official`` runs ``python -m sglang.bench_serving`` or ``vllm bench serve`` on the host
through the host session, once per level, and reads its summary table into the same fields.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tui.config import BenchConfig
from tui.data.prompts import workload_prompts
from tui.engine.bench.bench_math import RequestRecord
from tui.engine.bench.bench_view import (
    LevelExtras,
    accepts_between,
    extra_fields,
    sglang_spec_counters,
)
from tui.engine.bench.official_bench import OfficialRun, official_argv, parse_summary
from tui.engine.logs.sanitize import sanitize_line
from tui.engine.startup.snapshot import DecodeSummary
from tui.io.bench.bench_client import BenchClient, LevelReport, ServerView, Workload, level_fields
from tui.io.launch.remote_scripts import script
from tui.io.transport.host_session import HostSession

SETTLE_SECONDS = 1.0
"""Wait after a level before reading the log's decode figures: its last lines are in transit."""
OFFICIAL_TIMEOUT_SECONDS = 3600.0

Progressed = Callable[[int, int, int], None]
"""Called with (concurrency, requests done, requests failed) after every measured request."""
LevelDone = Callable[[int, dict[str, Any]], Awaitable[None]]
"""Awaited with (concurrency, result fields) when a level ends."""


@dataclass(frozen=True, slots=True)
class BenchOptions:
    """The profile's side of the benchmark: its ``[bench]`` table and where results go."""

    config: BenchConfig = field(default_factory=BenchConfig)
    profile: str | None = None
    data_dir: Path | None = None
    venv: str | None = None
    conda_env: str | None = None


DEMO_BENCH = BenchOptions(
    BenchConfig(num_prompts=4, input_len=64, output_len=64, concurrency=(1, 4))
)
"""The demo's workload: two levels that finish in seconds against the simulated server."""


@dataclass(frozen=True, slots=True)
class BenchSetup:
    """Where the server is: the host session (port forward, commands) and the port on the host."""

    session: HostSession
    port: int
    engine: str = "auto"
    options: BenchOptions = field(default_factory=BenchOptions)
    host: str | None = None


class PaneClient(BenchClient):
    """The benchmark client, counting measured requests and noting the log and server counters
    at the start of each level."""

    def __init__(
        self, base_url: str, workload: Workload, decode: Callable[[], DecodeSummary],
        progressed: Progressed,
    ) -> None:  # fmt: skip
        super().__init__(base_url, workload)
        self.decode = decode
        self.progressed = progressed
        self.level = 0
        self.done = 0
        self.failed = 0
        self.marks: list[tuple[DecodeSummary, dict[str, float] | None]] = []

    async def send(self, prompt: str, output_len: int | None = None) -> RequestRecord:
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

    async def level_fields(self, concurrency: int, settle: float) -> dict[str, Any]:
        """Run one level and return its stored fields, the three accept lengths included."""
        self.level, self.done, self.failed = concurrency, 0, 0
        self.marks.clear()
        report = await self.run_level(concurrency)
        await asyncio.sleep(settle)
        before_log, before_counters = self.marks[0] if self.marks else (self.decode(), None)
        after_counters = self.marks[-1][1] if len(self.marks) > 1 else None
        extras = LevelExtras(
            client_output_tokens=_client_tokens(report),
            log_accepts=accepts_between(before_log, self.decode()),
            sglang_before=before_counters,
            sglang_after=after_counters,
        )
        fields = level_fields(report)
        return fields | extra_fields(extras, fields)


def _client_tokens(report: LevelReport) -> int:
    return sum(record.client_tokens for record in report.records if record.success)


def build_workload(settings: BenchConfig, endpoint: str) -> Workload:
    """The workload of a ``[bench]`` table (``PromptFileError`` for a bad prompt file)."""
    prompts = workload_prompts(
        settings.num_prompts, settings.input_len, settings.seed, settings.prompts
    )
    return Workload(
        prompts=tuple(prompts),
        output_len=settings.output_len,
        concurrency=settings.concurrency,
        warmup_requests=settings.warmup_requests,
        ignore_eos=settings.ignore_eos,
        endpoint=endpoint,
    )


async def measure(
    client: PaneClient, levels: tuple[int, ...], level_done: LevelDone,
    settle: float = SETTLE_SECONDS,
) -> list[dict[str, Any]]:  # fmt: skip
    """Every level in turn (after ``client.resolve_model()``); ``level_done`` hears of each."""
    results = []
    for concurrency in levels:
        fields = await client.level_fields(concurrency, settle)
        await level_done(concurrency, fields)
        results.append(fields)
    return results


# Runs the tool inside the profile's virtual environment or conda environment, if any.
OFFICIAL_SCRIPT = r"""
venv=$1 conda=$2
shift 2
if [ -n "$venv" ]; then
  [ -d "$venv/bin" ] || { echo "no virtual environment at $venv" >&2; exit 127; }
  PATH=$venv/bin:$PATH VIRTUAL_ENV=$venv
  export PATH VIRTUAL_ENV
fi
if [ -n "$conda" ]; then
  case $conda in */*) which=-p ;; *) which=-n ;; esac
  exec conda run --no-capture-output "$which" "$conda" "$@"
fi
exec "$@"
"""


@dataclass(frozen=True, slots=True)
class OfficialSetup:
    """Where and how to run the engine's tool on the host."""

    session: HostSession
    engine: str
    port: int
    model: str | None = None
    venv: str | None = None
    conda_env: str | None = None
    timeout: float = OFFICIAL_TIMEOUT_SECONDS


class OfficialRunFailed(Exception):
    """The tool did not print a summary; the message has the tail of what it said instead."""


def official_command(setup: OfficialSetup, settings: BenchConfig, concurrency: int) -> list[str]:
    """The argv (``sh -c`` wrapper included) that runs one level with the engine's tool."""
    run = OfficialRun(
        engine=setup.engine, port=setup.port, concurrency=concurrency,
        num_prompts=settings.num_prompts, input_len=settings.input_len,
        output_len=settings.output_len, seed=settings.seed,
        warmup_requests=settings.warmup_requests, ignore_eos=settings.ignore_eos,
        model=setup.model,
    )  # fmt: skip
    return script("official-bench", OFFICIAL_SCRIPT, [setup.venv, setup.conda_env,
                                                      *official_argv(run)])  # fmt: skip


def _tail(data: bytes, lines: int = 3) -> str:
    text = data.decode("utf-8", "replace").strip().splitlines()[-lines:]
    return " | ".join(sanitize_line(line)[:200] for line in text)


async def official_level(
    setup: OfficialSetup, settings: BenchConfig, concurrency: int
) -> dict[str, Any]:
    """One level run by the engine's tool on the host, as stored fields."""
    argv = official_command(setup, settings, concurrency)
    result = await setup.session.run(argv, timeout=setup.timeout)
    try:
        summary = parse_summary(result.stdout.decode("utf-8", "replace"))
    except ValueError as exc:
        said = _tail(result.stderr) or _tail(result.stdout) or "no output"
        raise OfficialRunFailed(f"exit status {result.status}: {exc}; it said: {said}") from None
    fields: dict[str, Any] = dict(summary.fields)
    completed = fields.get("completed")
    if "failed" not in fields and isinstance(completed, int):
        fields["failed"] = max(settings.num_prompts - completed, 0)
    fields["max_concurrency"] = concurrency
    fields["source"] = f"official {summary.tool}"
    fields["problems"] = list(summary.problems)
    if summary.fields.get("spec_decode_acceptance_length") is not None:
        fields["server_accept_length"] = summary.fields["spec_decode_acceptance_length"]
        fields["server_accept_basis"] = "differenced"
    elif summary.fields.get("server_avg_spec_accept_length_after") is not None:
        fields["server_accept_length"] = summary.fields["server_avg_spec_accept_length_after"]
        fields["server_accept_basis"] = "lifetime"
    return fields


async def run_official(
    setup: OfficialSetup, settings: BenchConfig, level_done: LevelDone
) -> list[dict[str, Any]]:
    """Every level with the engine's tool, in turn."""
    results = []
    for concurrency in settings.concurrency:
        fields = await official_level(setup, settings, concurrency)
        await level_done(concurrency, fields)
        results.append(fields)
    return results
