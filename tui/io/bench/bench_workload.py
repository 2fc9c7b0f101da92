"""The workload of a ``[bench]`` table: levels, prompts of the chosen dataset, SLOs, the key.

``random`` prompts are token ids drawn with the seed from ids the server's own tokenizer gave
for the shipped filler words (``POST /tokenize``, served by vLLM and by the simulator); a server
without that route gets ids from a range every common vocabulary holds. Prompts of exact token
length go as ``input_ids`` to ``/generate`` or as the token list of ``/v1/completions``; the chat
endpoint takes text only. Nothing is downloaded.
"""

from __future__ import annotations

import os
import random
from collections.abc import Mapping

import httpx

from tui.config import BenchConfig, Profile
from tui.data.prompts import PromptFileError, builtin_prompts, workload_prompts
from tui.data.sharegpt import sharegpt_prompts
from tui.engine.bench.bench_math import Slo
from tui.engine.bench.bench_stream import Prompt
from tui.engine.bench.load_plan import levels_of, prompts_for
from tui.io.bench.bench_client import Workload, auth_headers

FALLBACK_IDS = range(1000, 9000)
"""Token ids when the server has no ``/tokenize``: inside every common vocabulary."""


def api_key_of(
    given: str | None, profile: Profile | None, env: Mapping[str, str] | None = None
) -> str | None:
    """``--api-key``, else the profile's ``api_key_env`` variable, else ``$OPENAI_API_KEY``."""
    env = os.environ if env is None else env
    if given:
        return given
    if profile is not None and profile.api_key_env:
        return env.get(profile.api_key_env) or None
    return env.get("OPENAI_API_KEY") or None


def slo_of(settings: BenchConfig) -> Slo | None:
    if not settings.goodput:
        return None
    limits = dict(settings.goodput)
    return Slo(limits.get("ttft"), limits.get("tpot"), limits.get("e2el"))


async def token_pool(base_url: str, api_key: str | None) -> tuple[int, ...]:
    """Distinct token ids of the shipped prompts, from the server's ``/tokenize``."""
    text = " ".join(builtin_prompts())
    try:
        async with httpx.AsyncClient(
            base_url=base_url.rstrip("/"), timeout=10.0, headers=auth_headers(api_key)
        ) as http:
            response = await http.post("/tokenize", json={"prompt": text})
            tokens = response.json().get("tokens") if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError):
        tokens = None
    if isinstance(tokens, list):
        found = sorted({t for t in tokens if isinstance(t, int) and not isinstance(t, bool)})
        if len(found) >= 16:
            return tuple(found)
    return tuple(FALLBACK_IDS)


def random_prompts(pool: tuple[int, ...], count: int, length: int, seed: int) -> list[Prompt]:
    rng = random.Random(seed)
    return [tuple(rng.choices(pool, k=length)) for _ in range(count)]


async def build_workload(
    settings: BenchConfig,
    endpoint: str,
    base_url: str,
    api_key: str | None = None,
    model: str | None = None,
) -> Workload:
    """The workload (``PromptFileError`` for a bad prompt file or an impossible dataset)."""
    levels = levels_of(
        settings.concurrency, settings.request_rate, settings.burstiness, settings.max_concurrency
    )
    count = max(prompts_for(level, settings.num_prompts) for level in levels)
    prompts: list[Prompt]
    if settings.dataset == "random":
        if endpoint == "chat":
            raise PromptFileError("the random dataset needs the generate or completions endpoint")
        pool = await token_pool(base_url, api_key)
        prompts = random_prompts(pool, count, settings.input_len, settings.seed)
    elif settings.dataset == "sharegpt":
        if settings.dataset_path is None:
            raise PromptFileError("the sharegpt dataset needs dataset_path (a local JSON file)")
        prompts = list(sharegpt_prompts(settings.dataset_path, count, settings.seed))
    else:
        prompts = list(workload_prompts(count, settings.input_len, settings.seed, settings.prompts))
    return Workload(
        prompts=tuple(prompts),
        output_len=settings.output_len,
        concurrency=settings.concurrency,
        warmup_requests=settings.warmup_requests,
        ignore_eos=settings.ignore_eos,
        endpoint=endpoint,
        model=model,
        levels=levels,
        num_prompts=settings.num_prompts,
        trials=settings.trials,
        slo=slo_of(settings),
        api_key=api_key,
        seed=settings.seed,
        per_level_default=settings.num_prompts is None,
    )
