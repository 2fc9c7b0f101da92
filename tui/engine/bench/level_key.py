"""Which level a result belongs to: closed loop by concurrency, open loop by request rate.

Results of different runs are lined up by this key, so a run's ``c=4`` is compared with another
run's ``c=4`` and its ``r=8`` (8 requests per second, as ``--request-rate`` in ``vllm bench
serve`` and ``sglang.bench_serving``) with the other's ``r=8`` at the same cap. Closed-loop
levels sort before open-loop ones, each by its load.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tui.engine.bench.level_figures import LevelFigures
from tui.engine.bench.load_plan import LoadLevel


@dataclass(frozen=True, slots=True, order=True)
class LevelKey:
    """A level's load: ``open_loop`` with its ``rate`` (``inf`` allowed), and the concurrency
    (closed loop: in flight; open loop: the cap, 0 for none)."""

    open_loop: bool
    rate: float
    concurrency: int

    @classmethod
    def closed(cls, concurrency: int) -> LevelKey:
        return cls(False, 0.0, concurrency)

    @classmethod
    def of(cls, figures: LevelFigures) -> LevelKey:
        rate = figures.request_rate
        if rate is None:
            return cls.closed(figures.concurrency)
        return cls(True, rate, figures.concurrency)

    @classmethod
    def of_load(cls, level: LoadLevel) -> LevelKey:
        if level.request_rate is None:
            return cls.closed(level.concurrency)
        return cls(True, level.request_rate, level.concurrency)

    @property
    def label(self) -> str:
        """``c=4``, ``r=8``, ``r=inf c<=64``: as ``LoadLevel.label``."""
        if not self.open_loop:
            return f"c={self.concurrency}"
        rate = "inf" if math.isinf(self.rate) else f"{self.rate:g}"
        return f"r={rate}" + (f" c<={self.concurrency}" if self.concurrency else "")

    def load(self, burstiness: float = 1.0) -> LoadLevel:
        """The level to run again (open loop with ``burstiness``)."""
        if not self.open_loop:
            return LoadLevel(self.concurrency)
        return LoadLevel(self.concurrency, self.rate, burstiness)
