"""The engine's own benchmark tool, run on the host through the host session.

``python -m sglang.bench_serving`` or ``vllm bench serve`` runs once per level (closed loop
``--max-concurrency C``; open loop ``--request-rate R``, with ``--burstiness B`` where the tool
has it and ``--max-concurrency`` when the level caps it: ``official_load``), writing its
machine-readable result (``--output-file`` / ``--save-result --result-dir``) into a temporary
directory that the wrapper prints after a marker and removes, whatever the tool's exit. The
result file's figures are read into the same fields as the built-in client's; the printed
summary table is the fallback when a version writes no file. The rate, cap and burstiness the
tool reports are checked against the level's, and every difference is one of its problems.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from tui.config import BenchConfig
from tui.engine.bench.level_fields import level_from_fields
from tui.engine.bench.level_figures import AcceptBasis, AcceptFigures, LevelFigures, ServerSpec
from tui.engine.bench.load_plan import LoadLevel, levels_of, prompts_for
from tui.engine.bench.official_bench import (
    OfficialRun,
    OfficialSummary,
    official_argv,
    parse_summary,
)
from tui.engine.bench.official_load import load_notes, read_back_problems
from tui.engine.bench.official_result import RESULT_MARK, result_fields, split_output
from tui.engine.logs.sanitize import sanitize_line
from tui.engine.servers import registry
from tui.io.launch.remote_scripts import script
from tui.io.transport.host_session import HostSession

OFFICIAL_TIMEOUT_SECONDS = 3600.0
OfficialDone = Callable[[LoadLevel, LevelFigures], Awaitable[None]]
"""Awaited with (the level, the tool's figures) when a level ends."""

# Runs the tool inside the profile's virtual environment or conda environment, if any.
OFFICIAL_SCRIPT = r"""
venv=$1 conda=$2 format=$3 mark=$4
shift 4
out=$(mktemp -d "${TMPDIR:-/tmp}/bringup-bench.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT
case $format in
  vllm) set -- "$@" --save-result --result-dir "$out" --result-filename result.json ;;
  sglang) set -- "$@" --output-file "$out/result.json" ;;
esac
if [ -n "$venv" ]; then
  [ -d "$venv/bin" ] || { echo "no virtual environment at $venv" >&2; exit 127; }
  PATH=$venv/bin:$PATH VIRTUAL_ENV=$venv
  export PATH VIRTUAL_ENV
fi
if [ -n "$conda" ]; then
  case $conda in */*) which=-p ;; *) which=-n ;; esac
  conda run --no-capture-output "$which" "$conda" "$@"
else
  "$@"
fi
status=$?
if [ -s "$out/result.json" ]; then
  printf '\n%s\n' "$mark"
  cat "$out/result.json"
fi
exit $status
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
    host: str = "127.0.0.1"
    """Where the host reaches the server (a Slurm job's node 0 from its login host)."""


class OfficialRunFailed(Exception):
    """The tool did not print a summary; the message has the tail of what it said instead."""


def official_command(setup: OfficialSetup, settings: BenchConfig, level: LoadLevel) -> list[str]:
    """The argv (``sh -c`` wrapper included) that runs one level with the engine's tool."""
    run = OfficialRun(
        engine=setup.engine, port=setup.port, concurrency=level.concurrency,
        request_rate=level.request_rate, burstiness=level.burstiness,
        num_prompts=prompts_for(level, settings.num_prompts),
        input_len=settings.input_len,
        output_len=settings.output_len, seed=settings.seed,
        warmup_requests=settings.warmup_requests, ignore_eos=settings.ignore_eos,
        model=setup.model,
        host=setup.host,
        dataset_path=_host_dataset(settings),
    )  # fmt: skip
    tool = registry.or_default(setup.engine).bench_tool
    head = [setup.venv, setup.conda_env, tool.result_format, RESULT_MARK]
    return script("official-bench", OFFICIAL_SCRIPT, [*head, *official_argv(run)])


def _host_dataset(settings: BenchConfig) -> str | None:
    """The ShareGPT file the profile names (a path on the host), else None: no download."""
    if settings.dataset == "sharegpt" and settings.dataset_path is not None:
        return str(settings.dataset_path)
    return None


def _tail(data: bytes, lines: int = 3) -> str:
    text = data.decode("utf-8", "replace").strip().splitlines()[-lines:]
    return " | ".join(sanitize_line(line)[:200] for line in text)


async def official_level(
    setup: OfficialSetup, settings: BenchConfig, level: LoadLevel
) -> LevelFigures:
    """One level run by the engine's tool on the host, as figures."""
    requests = prompts_for(level, settings.num_prompts)
    argv = official_command(setup, settings, level)
    result = await setup.session.run(argv, timeout=setup.timeout)
    printed, saved = split_output(result.stdout.decode("utf-8", "replace"))
    tool = registry.or_default(setup.engine).bench_tool
    fields = None if saved is None else result_fields(saved, tool.result_format)
    try:
        summary = parse_summary(printed)
    except ValueError as exc:
        if fields is None:
            said = _tail(result.stderr) or _tail(result.stdout) or "no output"
            raise OfficialRunFailed(
                f"exit status {result.status}: {exc}; it said: {said}"
            ) from None
        summary = OfficialSummary(fields={}, tool=tool.backend, complete=False)
    if fields is not None:
        summary = replace(summary, fields=summary.fields | fields)
    notes = load_notes(level, tool.backend, tool.title)
    return summary_figures(replace(summary, problems=summary.problems + notes), requests, level)


def summary_figures(summary: OfficialSummary, requests: int, level: LoadLevel) -> LevelFigures:
    """The figures of a tool's summary table: what it printed, the failed requests it did not
    count, the level's load (what the tool reported of it differing is a problem), and the
    server's accept length with its basis."""
    figures = level_from_fields(summary.fields, level.concurrency)
    failed = figures.failed
    if failed is None and figures.completed is not None:
        failed = max(requests - figures.completed, 0)
    spec = figures.server or ServerSpec()
    server, basis = spec.acceptance_length, AcceptBasis.DIFFERENCED
    if server is None and spec.avg_accept_after is not None:
        server, basis = spec.avg_accept_after, AcceptBasis.LIFETIME
    accepts = None if server is None else AcceptFigures(server, basis)
    open_loop = level.request_rate is not None
    return replace(
        figures, concurrency=level.concurrency, failed=failed,
        source=f"official {summary.tool}", accepts=accepts,
        problems=summary.problems + read_back_problems(summary.fields, level),
        request_rate=level.request_rate, burstiness=level.burstiness if open_loop else None,
        num_prompts=requests,
    )  # fmt: skip


async def run_official(
    setup: OfficialSetup, settings: BenchConfig, level_done: OfficialDone
) -> list[LevelFigures]:
    """Every level of the profile (closed or open loop) with the engine's tool, in turn."""
    levels = levels_of(
        settings.concurrency, settings.request_rate, settings.burstiness, settings.max_concurrency
    )
    results = []
    for level in levels:
        figures = await official_level(setup, settings, level)
        await level_done(level, figures)
        results.append(figures)
    return results
