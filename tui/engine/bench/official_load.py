"""How a level's load is asked of the engines' own tools, and checked in what they report back.

Both tools take the same names for it, from their argument parsers:

- ``--request-rate R``: requests per second, ``inf`` (their default) sending every request at
  once; ``sglang.bench_serving`` draws Poisson arrivals (``python/sglang/bench_serving.py``,
  ``sglang/benchmark/serving.py`` in later releases), ``vllm bench serve`` gamma-distributed
  ones (``vllm/benchmarks/serve.py``, ``get_request``);
- ``--burstiness B``: the gamma shape, only ``vllm bench serve`` has it (SGLang's arrivals are
  always Poisson, burstiness 1);
- ``--max-concurrency C``: the cap on requests in flight, unset by default.

A closed-loop level of ``C`` is ``--max-concurrency C`` at the default infinite rate (the tool
fills ``C`` slots from a queue, as the built-in client does). An open-loop level is
``--request-rate R`` (with ``--burstiness B`` where the tool has it) and ``--max-concurrency``
only when the level caps it. What the tool then reports as its rate, cap and burstiness (its
result file, else its summary table) is checked against what was asked: a difference becomes a
problem of the level, so a tool that ignored an option cannot pass for the level asked.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from tui.engine.bench.load_plan import LoadLevel

BURSTINESS_FLAGS: Mapping[str, str] = {"vllm": "--burstiness"}
"""By the tool's ``--backend`` name, its option for the arrivals' gamma shape."""


def rate_arg(rate: float) -> str:
    """A request rate as the tools' ``type=float`` parsers read it (``inf`` included)."""
    return "inf" if math.isinf(rate) else repr(float(rate))


def load_argv(level: LoadLevel, backend: str) -> list[str]:
    """The options that put ``level``'s load on the server, for the tool named ``backend``."""
    if level.request_rate is None:
        return ["--max-concurrency", str(max(1, level.concurrency))]
    found = ["--request-rate", rate_arg(level.request_rate)]
    flag = BURSTINESS_FLAGS.get(backend)
    if flag is not None:
        found += [flag, repr(float(level.burstiness))]
    if level.concurrency:
        found += ["--max-concurrency", str(level.concurrency)]
    return found


def load_notes(level: LoadLevel, backend: str, title: str) -> tuple[str, ...]:
    """What of ``level`` the tool cannot be asked for (``title`` names it)."""
    rate = level.request_rate
    bursty = rate is not None and not math.isinf(rate) and level.burstiness != 1.0
    if bursty and backend not in BURSTINESS_FLAGS:
        return (
            f"{title} has no --burstiness: its arrivals were Poisson (burstiness 1), "
            f"ours had burstiness {level.burstiness:g}",
        )
    return ()


def _as_rate(value: object) -> float | None:
    if isinstance(value, str):
        return math.inf if value.strip().lower() == "inf" else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _same(a: float, b: float) -> bool:
    return a == b or math.isclose(a, b, rel_tol=1e-6)


def _shown(value: float | None) -> str:
    return "none" if value is None else ("inf" if math.isinf(value) else f"{value:g}")


def read_back_problems(fields: Mapping[str, object], level: LoadLevel) -> tuple[str, ...]:
    """Where the rate, cap or burstiness the tool reports differs from ``level``'s."""
    found = []
    told = _as_rate(fields.get("request_rate"))
    asked = math.inf if level.request_rate is None else level.request_rate
    if told is not None and not _same(told, asked):
        found.append(f"the tool reports request rate {_shown(told)}, asked {_shown(asked)}")
    cap = fields.get("max_concurrency")
    wanted = level.slots
    if isinstance(cap, int) and not isinstance(cap, bool) and cap != wanted:
        found.append(f"the tool reports max concurrency {cap}, asked {wanted or 'none'}")
    burst = _as_rate(fields.get("burstiness"))
    open_finite = level.request_rate is not None and not math.isinf(level.request_rate)
    if open_finite and burst is not None and not _same(burst, level.burstiness):
        found.append(
            f"the tool reports burstiness {_shown(burst)}, asked {_shown(level.burstiness)}"
        )
    return tuple(found)
