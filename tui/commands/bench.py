"""``bringup bench``: benchmark a running server and print a table or JSON.

Without workload flags it runs a quick check (the ``[bench]`` defaults at concurrency 1);
``--profile`` takes the workload from the configuration and flags override single settings. A
remote profile's server is reached through the same SSH port forward the monitor uses. Results
are kept in the run history unless ``--no-save``; ``--save-result`` writes ``vllm bench serve``
result files. Per-level progress goes to stderr when it is a terminal.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import math
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from tui.commands.bench_progress import progress_for
from tui.commands.bench_table import BenchHeader, render_table
from tui.commands.exit_codes import ExitStatus
from tui.commands.json_time import SCHEMA_VERSION
from tui.commands.ssh_flags import add_ssh_arguments, with_ssh_flags
from tui.config import BenchConfig, ConfigError, Profile, load_config
from tui.data.prompts import PromptFileError
from tui.engine.bench.level_fields import level_fields
from tui.engine.bench.level_figures import LevelFigures
from tui.engine.bench.vllm_result import ResultMeta, vllm_result
from tui.io.bench.bench_client import (
    AccessDenied,
    LevelReport,
    Workload,
    detect_endpoint,
    level_figures,
)
from tui.io.bench.bench_workload import api_key_of, build_workload
from tui.io.slurm.slurm_client import SlurmError
from tui.io.store.run_store import RunStore, StoreError
from tui.io.transport.ssh import ConnectError

SLO_NAMES = ("ttft", "tpot", "e2el")


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _levels(text: str) -> tuple[int, ...]:
    try:
        levels = tuple(_positive(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers like 1,4,16, got {text!r}") from None
    if not levels:
        raise argparse.ArgumentTypeError("give at least one concurrency level")
    return levels


def _rates(text: str) -> tuple[float, ...]:
    rates = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        try:
            rate = float(part)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected rates like 2,8,inf, got {text!r}") from None
        if not rate > 0 or math.isnan(rate):
            raise argparse.ArgumentTypeError(f"a request rate must be above 0, got {part}")
        rates.append(rate)
    if not rates:
        raise argparse.ArgumentTypeError("give at least one request rate")
    return tuple(rates)


def _slo(text: str) -> tuple[str, float]:
    name, _, value = text.partition(":")
    try:
        limit = float(value)
    except ValueError:
        limit = -1.0
    if name not in SLO_NAMES or not limit >= 0:
        raise argparse.ArgumentTypeError(
            f"expected METRIC:MS with METRIC one of {', '.join(SLO_NAMES)}, got {text!r}"
        )
    return name, limit


def _burstiness(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be above 0, got {text}")
    return value


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "bench",
        help="benchmark a running server",
        description="Benchmark a running server and print a table or JSON.",
    )
    add = parser.add_argument
    add("--url", help="server address, e.g. http://127.0.0.1:30000 (default: the profile's)")
    add("--config", type=Path, help="configuration file (default: $BRINGUP_CONFIG or XDG)")
    add("profile", nargs="?", metavar="PROFILE",
        help="take the workload and the server (local, over SSH, Slurm job) from it")  # fmt: skip
    add("--profile", dest="profile_option", help=argparse.SUPPRESS)
    add("--num-prompts", type=_positive, help="requests per level (default: max(5 x c, 16))")
    add("--concurrency", type=_levels, help="closed-loop levels, e.g. 1,4,16")
    add("--request-rate", type=_rates, help="open-loop levels in requests/s, e.g. 2,8,inf")
    add("--burstiness", type=_burstiness, help="gamma shape of the arrivals (1: Poisson)")
    add("--max-concurrency", type=_positive, help="cap on open-loop requests in flight")
    add("--dataset", choices=("builtin", "random", "sharegpt"), help="where prompts come from")
    add("--dataset-path", type=Path, help="the ShareGPT JSON file for --dataset sharegpt")
    add("--input-len", type=_positive, help="prompt length in tokens (exact with random)")
    add("--output-len", type=_positive, help="tokens to generate per request")
    add("--ignore-eos", action=argparse.BooleanOptionalAction, default=None,
        help="generate past end-of-sequence: every request yields --output-len")  # fmt: skip
    add("--endpoint", choices=("generate", "completions", "chat"), help="API to benchmark")
    add("--model", help="model name for OpenAI-style endpoints (default: the server's)")
    add("--warmup", type=int, help="full-length warm-up requests, once before the levels")
    add("--seed", type=int, help="seed for prompts and arrivals")
    add("--prompts", type=Path, help="JSONL file of prompts ({'prompt': ...} per line)")
    add("--trials", type=_positive, help="runs of each level (2+: 95 %% intervals)")
    add("--goodput", type=_slo, nargs="+", metavar="METRIC:MS",
        help="SLOs for goodput, e.g. ttft:500 tpot:50 (as vllm bench serve)")  # fmt: skip
    add("--api-key", help="bearer token (default: the profile's api_key_env, $OPENAI_API_KEY)")
    add("--save-result", type=Path, metavar="FILE",
        help="write vllm bench serve result JSON (one file per level, see docs)")  # fmt: skip
    add("--save-detailed", action="store_true", help="add per-request arrays to --save-result")
    add("--json", action="store_true", help="print JSON instead of a table")
    add("--no-save", action="store_true", help="do not keep the results in the run history")
    add_ssh_arguments(parser)
    parser.set_defaults(handler=run)


def _settings(args: argparse.Namespace, bench: BenchConfig) -> BenchConfig:
    overrides = {
        "num_prompts": args.num_prompts,
        "concurrency": args.concurrency,
        "input_len": args.input_len,
        "output_len": args.output_len,
        "endpoint": args.endpoint,
        "warmup_requests": args.warmup,
        "seed": args.seed,
        "prompts": args.prompts,
        "request_rate": args.request_rate,
        "burstiness": args.burstiness,
        "max_concurrency": args.max_concurrency,
        "dataset": args.dataset,
        "dataset_path": args.dataset_path,
        "ignore_eos": args.ignore_eos,
        "trials": args.trials,
        "goodput": tuple(args.goodput) if args.goodput else None,
    }
    return dataclasses.replace(bench, **{k: v for k, v in overrides.items() if v is not None})


def _profile(args: argparse.Namespace) -> Profile | None:
    if args.profile is None and args.config is None:
        return None
    return with_ssh_flags(args, load_config(args.config).profile(args.profile))


@contextlib.asynccontextmanager
async def _reach(url: str | None, profile: Profile | None) -> AsyncIterator[tuple[str, str]]:
    """The server's address and what the run records as its URL: ``--url``, a local profile's
    port, an SSH forward to node 0, or a Slurm job's node 0 through its login host."""
    if url:
        yield url, url
        return
    if profile is None:
        raise ValueError("give --url (the server address) or a PROFILE")
    if profile.scheduler == "slurm":
        async with _job_address(profile) as reached:
            yield reached
        return
    if not profile.hosts:
        yield f"http://127.0.0.1:{profile.port_for()}", f"profile {profile.name}"
        return
    from tui.commands.bench_reach import profile_session

    session = profile_session(profile)
    await session.start()
    try:
        forwarded = await asyncio.wait_for(session.forward(profile.port_for()), 30.0)
        yield forwarded, f"profile {profile.name}"
    finally:
        await session.close()


@contextlib.asynccontextmanager
async def _job_address(profile: Profile) -> AsyncIterator[tuple[str, str]]:
    """A Slurm profile's running job: node 0's address, reached through its login host."""
    from tui.io.slurm.slurm_follow import job_port
    from tui.io.slurm.slurm_profile import login_target
    from tui.io.transport.host_session import HostSession, LocalConnector, SshConnector

    target = login_target(profile)
    session = HostSession(LocalConnector() if target is None else SshConnector(target))
    try:
        port = profile.port_for(profile.engine)
        async with job_port(session, None, profile.log_dir, profile.name, port) as (url, where):
            yield url, where
    finally:
        await session.close()


async def _measure(
    url: str | None, profile: Profile | None, settings: BenchConfig, api_key: str | None,
    model: str | None,
) -> tuple[Workload, str, str, list[LevelReport]]:  # fmt: skip
    async with _reach(url, profile) as (address, recorded):
        engine = profile.engine if profile else "auto"
        endpoint = settings.endpoint
        if endpoint is None:
            if engine != "auto":
                endpoint = settings.endpoint_for(engine)
            else:
                endpoint = await detect_endpoint(address, api_key)
        workload = await build_workload(settings, endpoint, address, api_key, model)
        with progress_for(workload) as progress:
            async with progress.client(address, workload) as client:
                levels = await client.run()
            return workload, client.model, recorded, levels


def run(args: argparse.Namespace) -> int:
    args.profile = args.profile or getattr(args, "profile_option", None)
    try:
        profile = _profile(args)
    except ConfigError as exc:
        print(f"bringup bench: {exc}", file=sys.stderr)
        return ExitStatus.CONFIG
    if args.url is None and profile is None:
        print("bringup bench: give --url (the server address) or a PROFILE", file=sys.stderr)
        return ExitStatus.USAGE
    settings = _settings(args, profile.bench if profile else BenchConfig())
    api_key = api_key_of(args.api_key, profile)
    started = time.time()
    try:
        workload, model, recorded, reports = asyncio.run(
            _measure(args.url, profile, settings, api_key, args.model)
        )
    except PromptFileError as exc:
        print(f"bringup bench: {exc}", file=sys.stderr)
        return ExitStatus.CONFIG
    except ValueError as exc:
        print(f"bringup bench: {exc}", file=sys.stderr)
        return ExitStatus.USAGE
    except SlurmError as exc:
        print(f"bringup bench: {exc}", file=sys.stderr)
        return ExitStatus.FAILED
    except (ConnectError, AccessDenied) as exc:
        print(f"bringup bench: {exc}", file=sys.stderr)
        return ExitStatus.UNREACHABLE
    except OSError as exc:
        print(f"bringup bench: cannot reach the server: {exc}", file=sys.stderr)
        return ExitStatus.UNREACHABLE
    levels = [level_figures(report) for report in reports]
    url = recorded
    meta = _meta(url, workload, model, settings, started)
    if not args.no_save:
        _save(levels, meta, profile.name if profile else None)
    if args.save_result is not None:
        written = save_results(args.save_result, reports, levels, meta, args.save_detailed)
        print(f"bringup bench: wrote {', '.join(map(str, written))}", file=sys.stderr)
    print(json.dumps(_report(meta, levels), indent=2) if args.json else render_table(meta, levels))
    return ExitStatus.OK if all(level.completed for level in levels) else ExitStatus.FAILED


def result_paths(path: Path, labels: list[str]) -> list[Path]:
    """``FILE`` for one level; ``STEM.LABEL.SUFFIX`` per level when there are several
    (``c=4`` becomes ``c4``, ``r=8 c<=16`` becomes ``r8-c16``)."""
    if len(labels) == 1:
        return [path]
    safe = [label.replace("=", "").replace(" c<", "-c").replace(" ", "") for label in labels]
    return [path.with_name(f"{path.stem}.{name}{path.suffix or '.json'}") for name in safe]


def save_results(
    path: Path, reports: list[LevelReport], levels: list[LevelFigures], meta: BenchHeader,
    detailed: bool,
) -> list[Path]:  # fmt: skip
    """One ``vllm bench serve`` result file per level."""
    result_meta = ResultMeta(meta.date, meta.model_id, meta.endpoint)
    paths = result_paths(path, [figures.label for figures in levels])
    for target, report, figures in zip(paths, reports, levels, strict=True):
        body = vllm_result(figures, result_meta, report.records, detailed)
        target.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    return paths


def _meta(
    url: str, workload: Workload, model: str, settings: BenchConfig, started: float
) -> BenchHeader:
    return BenchHeader(
        url=url,
        endpoint=workload.endpoint,
        model_id=model,
        num_prompts=workload.pool_size,
        input_len=settings.input_len,
        output_len=settings.output_len,
        warmup_requests=settings.warmup_requests,
        ignore_eos=settings.ignore_eos,
        seed=settings.seed,
        date=time.strftime("%Y%m%d-%H%M%S", time.localtime(started)),
        started_at=started,
        trials=settings.trials,
        dataset=settings.dataset,
    )


def _report(meta: BenchHeader, levels: list[LevelFigures]) -> dict[str, Any]:
    """What ``--json`` prints: the run's settings, then the one level or every level."""
    head = {"schema_version": SCHEMA_VERSION, "t": round(time.time(), 6)}
    head |= dataclasses.asdict(meta)
    results = [level_fields(level) for level in levels]
    if len(results) == 1:
        return head | results[0]
    return head | {"results": results}


def _save(levels: list[LevelFigures], meta: BenchHeader, profile: str | None) -> None:
    try:
        with RunStore.open_default() as store:
            for figures in levels:
                store.add_bench(
                    figures,
                    recorded_at=meta.started_at,
                    profile=profile,
                    url=meta.url,
                    endpoint=meta.endpoint,
                    model=meta.model_id,
                )
    except StoreError as exc:
        print(f"bringup bench: results not saved: {exc}", file=sys.stderr)
