"""Alarms on the serving figures: the drafter stopped helping, the server stalled, the KV cache
filled up or requests waited too long for their first token.

Each alarm names its figure, the window it was measured over and the threshold it crossed. An
alarm is raised once when its condition starts and again only after the condition cleared.

- ``accept-floor``: accept length over the last interval below ``accept_floor``;
- ``accept-drop``: accept length over the last interval more than ``accept_drop`` under the
  mean of the first ``accept_baseline_s`` seconds of speculative serving;
- ``stall``: no token generated while requests were queued, for ``stall_s`` seconds or more;
- ``kv-full``: KV-cache use over the last interval above ``kv_ceiling``;
- ``preempting``: requests were preempted in the last interval;
- ``ttft-slo``: the server's p99 time to first token over the last 10 s above
  ``ttft_p99_slo_s`` (off when it is zero).

The accept-length alarms apply only to a server that speculates: one that reported drafts, or
whose accept length was once above 1.05.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tui.engine.metrics.figures import ServingFigures
from tui.engine.metrics.metrics_window import WindowedFigures

SPECULATING = 1.05


@dataclass(frozen=True, slots=True)
class AlarmThresholds:
    """Where each alarm starts (``[profiles.X.serving]`` in the configuration)."""

    accept_floor: float = 1.5
    accept_drop: float = 0.30
    accept_baseline_s: float = 120.0
    stall_s: float = 30.0
    kv_ceiling: float = 0.95
    ttft_p99_slo_s: float = 0.0


@dataclass(frozen=True, slots=True)
class ServingAlarm:
    """One alarm: which, the figure's value, the window it covers and the threshold."""

    kind: str
    figure: str
    value: float
    window: str
    threshold: str

    @property
    def text(self) -> str:
        return f"{self.figure} {self.value:.2f} over the {self.window} ({self.threshold})"


@dataclass(slots=True)
class _Baseline:
    started: float | None = None
    total: float = 0.0
    count: int = 0
    done: bool = False

    @property
    def mean(self) -> float | None:
        return self.total / self.count if self.done and self.count else None


@dataclass(slots=True)
class AlarmWatch:
    """Follows the figures scrape after scrape and says which alarms start."""

    thresholds: AlarmThresholds = field(default_factory=AlarmThresholds)
    active: dict[str, ServingAlarm] = field(default_factory=dict)
    speculating: bool = False
    stalled_since: float | None = None
    baseline: _Baseline = field(default_factory=_Baseline)

    def update(self, at: float, figures: WindowedFigures) -> list[ServingAlarm]:
        """The alarms that start with this scrape (taken at ``at``); ``active`` holds every
        alarm whose condition holds now."""
        found = {alarm.kind: alarm for alarm in self._check(at, figures)}
        started = [alarm for kind, alarm in found.items() if kind not in self.active]
        self.active = found
        return started

    def _check(self, at: float, figures: WindowedFigures) -> list[ServingAlarm]:
        now = figures.interval
        limits = self.thresholds
        window = f"last {now.seconds:.0f} s"
        alarms = self._accept(at, now, window)
        stall = self._stall(at, now)
        if stall is not None:
            alarms.append(stall)
        if now.kv_usage is not None and now.kv_usage > limits.kv_ceiling:
            alarms.append(
                ServingAlarm(
                    "kv-full",
                    "KV cache use",
                    now.kv_usage,
                    window,
                    f"above {limits.kv_ceiling:.0%}",
                )
            )
        if now.preemptions:
            alarms.append(
                ServingAlarm("preempting", "preemptions", now.preemptions, window, "rising")
            )
        ttft = figures.short.ttft_p99
        if limits.ttft_p99_slo_s > 0 and ttft is not None and ttft > limits.ttft_p99_slo_s:
            alarms.append(
                ServingAlarm(
                    "ttft-slo",
                    "server p99 TTFT (s)",
                    ttft,
                    f"last {figures.short.window_s:.0f} s",
                    f"SLO {limits.ttft_p99_slo_s:g} s",
                )
            )
        return alarms

    def _accept(self, at: float, now: ServingFigures, window: str) -> list[ServingAlarm]:
        length = now.accept_length
        if length is None or not now.generated:
            return []
        self.speculating = (
            self.speculating or length > SPECULATING or now.acceptance_rate is not None
        )
        if not self.speculating:
            return []
        self._learn(at, length)
        limits = self.thresholds
        alarms: list[ServingAlarm] = []
        if length < limits.accept_floor:
            alarms.append(
                ServingAlarm(
                    "accept-floor",
                    "accept length",
                    length,
                    window,
                    f"below the floor {limits.accept_floor:g}",
                )
            )
        baseline = self.baseline.mean
        if baseline is not None and length < baseline * (1 - limits.accept_drop):
            alarms.append(
                ServingAlarm(
                    "accept-drop",
                    "accept length",
                    length,
                    window,
                    f"more than {limits.accept_drop:.0%} under its baseline {baseline:.2f}",
                )
            )
        return alarms

    def _learn(self, at: float, length: float) -> None:
        baseline = self.baseline
        if baseline.done:
            return
        if baseline.started is None:
            baseline.started = at
        baseline.total += length
        baseline.count += 1
        baseline.done = at - baseline.started >= self.thresholds.accept_baseline_s

    def _stall(self, at: float, now: ServingFigures) -> ServingAlarm | None:
        if now.generated is None and now.tok_s is None:
            return None
        flowing = bool(now.generated) if now.generated is not None else bool(now.tok_s)
        if flowing or not now.queued:
            self.stalled_since = None
            return None
        if self.stalled_since is None:
            self.stalled_since = at - now.seconds
        stalled = at - self.stalled_since
        if stalled < self.thresholds.stall_s:
            return None
        return ServingAlarm(
            "stall",
            "tokens/s",
            0.0,
            f"last {stalled:.0f} s",
            f"{now.queued:.0f} queued, stalled for more than {self.thresholds.stall_s:g} s",
        )
