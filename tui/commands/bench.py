"""``bringup bench``: benchmark a running server and print a table or JSON.

Without workload flags it runs a quick check (the ``[bench]`` defaults: a few requests at
concurrency 1, 256 output tokens); ``--profile`` takes the workload from the configuration and
flags override single settings. Results are kept in the run history unless ``--no-save``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

from tui.commands.bench_table import BenchHeader, render_table
from tui.config import BenchConfig, ConfigError, Profile, load_config
from tui.data.prompts import PromptFileError, workload_prompts
from tui.engine.bench.level_fields import level_fields
from tui.engine.bench.level_figures import LevelFigures
from tui.io.bench.bench_client import BenchClient, Workload, detect_endpoint, level_figures
from tui.io.store.run_store import RunStore, StoreError


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


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "bench",
        help="benchmark a running server",
        description="Benchmark a running server and print a table or JSON.",
    )
    add = parser.add_argument
    add("--url", help="server address, e.g. http://127.0.0.1:30000 (default: the local profile's)")
    add("--config", type=Path, help="configuration file (default: $BRINGUP_CONFIG or XDG)")
    add("--profile", help="take the workload (and the local port) from this profile")
    add("--num-prompts", type=_positive, help="requests per concurrency level")
    add("--concurrency", type=_levels, help="comma-separated levels, e.g. 1,4,16")
    add("--input-len", type=_positive, help="prompt length in words (about one token each)")
    add("--output-len", type=_positive, help="tokens to generate per request")
    add("--endpoint", choices=("generate", "completions", "chat"), help="API to benchmark")
    add("--model", help="model name for OpenAI-style endpoints (default: the server's)")
    add("--warmup", type=int, help="warm-up requests before each level")
    add("--seed", type=int, help="seed for choosing prompts")
    add("--prompts", type=Path, help="JSONL file of prompts ({'prompt': ...} per line)")
    add("--json", action="store_true", help="print JSON instead of a table")
    add("--no-save", action="store_true", help="do not keep the results in the run history")
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
    }
    return dataclasses.replace(bench, **{k: v for k, v in overrides.items() if v is not None})


def _profile(args: argparse.Namespace) -> Profile | None:
    if args.profile is None and args.config is None:
        return None
    return load_config(args.config).profile(args.profile)


def _url(args: argparse.Namespace, profile: Profile | None) -> str:
    if args.url:
        return str(args.url)
    if profile is not None and not profile.hosts:
        return f"http://127.0.0.1:{profile.port_for()}"
    raise ValueError("give --url (the server address); only a local profile implies one")


async def _measure(
    url: str, settings: BenchConfig, engine: str, model: str | None
) -> tuple[Workload, str, list[LevelFigures]]:
    endpoint = settings.endpoint
    if endpoint is None:
        endpoint = settings.endpoint_for(engine) if engine != "auto" else await detect_endpoint(url)
    prompts = workload_prompts(
        settings.num_prompts, settings.input_len, settings.seed, settings.prompts
    )
    workload = Workload(
        prompts=tuple(prompts),
        output_len=settings.output_len,
        concurrency=settings.concurrency,
        warmup_requests=settings.warmup_requests,
        ignore_eos=settings.ignore_eos,
        endpoint=endpoint,
        model=model,
    )
    async with BenchClient(url, workload) as client:
        levels = await client.run()
        return workload, client.model, [level_figures(level) for level in levels]


def run(args: argparse.Namespace) -> int:
    try:
        profile = _profile(args)
        url = _url(args, profile)
    except (ConfigError, ValueError) as exc:
        print(f"bringup bench: {exc}", file=sys.stderr)
        return 2
    settings = _settings(args, profile.bench if profile else BenchConfig())
    engine = profile.engine if profile else "auto"
    started = time.time()
    try:
        workload, model, levels = asyncio.run(_measure(url, settings, engine, args.model))
    except PromptFileError as exc:
        print(f"bringup bench: {exc}", file=sys.stderr)
        return 2
    meta = _meta(url, workload, model, settings, started)
    if not args.no_save:
        _save(levels, meta, profile.name if profile else None)
    print(json.dumps(_report(meta, levels), indent=2) if args.json else render_table(meta, levels))
    return 0 if all(level.completed for level in levels) else 1


def _meta(
    url: str, workload: Workload, model: str, settings: BenchConfig, started: float
) -> BenchHeader:
    return BenchHeader(
        url=url,
        endpoint=workload.endpoint,
        model_id=model,
        num_prompts=settings.num_prompts,
        input_len=settings.input_len,
        output_len=settings.output_len,
        warmup_requests=settings.warmup_requests,
        ignore_eos=settings.ignore_eos,
        seed=settings.seed,
        date=time.strftime("%Y%m%d-%H%M%S", time.localtime(started)),
        started_at=started,
    )


def _report(meta: BenchHeader, levels: list[LevelFigures]) -> dict[str, Any]:
    """What ``--json`` prints: the run's settings, then the one level or every level."""
    head = dataclasses.asdict(meta)
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
