"""What load each level puts on the server: closed-loop concurrency or open-loop arrivals.

A closed-loop level keeps ``concurrency`` requests in flight (a new one starts when one ends). An
open-loop level sends requests at ``request_rate`` per second whatever the server does, with
inter-arrival times drawn as vLLM draws them (``vllm/benchmarks/serve.py``, ``get_request``): a
gamma distribution of shape ``burstiness`` and scale ``1 / (request_rate * burstiness)``, so the
mean gap is ``1 / request_rate``; ``burstiness`` 1 is a Poisson process, lower is burstier,
higher is more even. ``inf`` sends every request at once. ``max_concurrency`` optionally caps
the requests in flight (arrivals beyond it wait for a slot, as vLLM's semaphore does).

Prompts per level default to ``max(5 x concurrency, 16)`` (SGLang's guidance of at least five
prompts per concurrent request), and for an open-loop level to ten seconds of arrivals
(``max(10 x rate, 16)``), or ``max(5 x max_concurrency, 16)`` at an infinite rate.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

PROMPTS_PER_SLOT = 5
LEAST_PROMPTS = 16
OPEN_LOOP_SECONDS = 10.0
UNCAPPED_INF_PROMPTS = 64


@dataclass(frozen=True, slots=True)
class LoadLevel:
    """One level: closed loop (``request_rate`` None) or open loop at ``request_rate``."""

    concurrency: int = 1
    """In flight for closed loop; the cap for open loop (0: uncapped)."""
    request_rate: float | None = None
    burstiness: float = 1.0

    @property
    def label(self) -> str:
        if self.request_rate is None:
            return f"c={self.concurrency}"
        rate = "inf" if math.isinf(self.request_rate) else f"{self.request_rate:g}"
        return f"r={rate}" + (f" c<={self.concurrency}" if self.concurrency else "")

    @property
    def slots(self) -> int | None:
        """Requests allowed in flight at once (None: as many as arrive)."""
        if self.request_rate is None:
            return max(1, self.concurrency)
        return self.concurrency or None


def default_prompts(level: LoadLevel) -> int:
    """Prompts for the level when the configuration does not fix the number."""
    if level.request_rate is None:
        return max(PROMPTS_PER_SLOT * level.concurrency, LEAST_PROMPTS)
    if math.isinf(level.request_rate):
        if level.concurrency:
            return max(PROMPTS_PER_SLOT * level.concurrency, LEAST_PROMPTS)
        return UNCAPPED_INF_PROMPTS
    return max(math.ceil(OPEN_LOOP_SECONDS * level.request_rate), LEAST_PROMPTS)


def prompts_for(level: LoadLevel, configured: int | None) -> int:
    return configured if configured is not None else default_prompts(level)


def arrival_times(count: int, level: LoadLevel, seed: int) -> list[float]:
    """Seconds after the level's start at which each request is sent (all 0 for closed loop)."""
    rate = level.request_rate
    if rate is None or math.isinf(rate) or count <= 0:
        return [0.0] * max(count, 0)
    rng = random.Random(seed)
    shape = level.burstiness
    scale = 1.0 / (rate * shape)
    times, now = [], 0.0
    for _ in range(count):
        times.append(now)
        now += rng.gammavariate(shape, scale)
    return times


def levels_of(
    concurrency: tuple[int, ...],
    request_rates: tuple[float, ...],
    burstiness: float,
    max_concurrency: int | None,
) -> tuple[LoadLevel, ...]:
    """Open-loop levels when rates are given, else the closed-loop ones."""
    if request_rates:
        cap = max_concurrency or 0
        return tuple(LoadLevel(cap, rate, burstiness) for rate in request_rates)
    return tuple(LoadLevel(c) for c in concurrency)
