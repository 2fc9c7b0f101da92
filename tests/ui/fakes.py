"""Test doubles for the UI: an engine link whose snapshot and verdict the test sets, and a clock."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from tui.engine.judge.judge import Judgement, Signals, judge
from tui.engine.judge.stall import StallPolicy
from tui.engine.logs.log_line import LogLine
from tui.engine.startup.snapshot import Progress, RankState, ServerInfo, Snapshot
from tui.engine.startup.vocabulary import Stage, Verdict
from tui.engine.timing.estimate import Expectations


@dataclass
class FakeClock:
    """A clock that moves only when the test says so."""

    now: float = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class FakeLink:
    """Feeds split bytes into lines (rank from a ``TPn`` word); everything else is set by hand."""

    snapshot: Snapshot = field(default_factory=Snapshot)
    verdict_value: Verdict = Verdict.STARTING
    disagreements: tuple[str, ...] = ()
    fed: list[bytes] = field(default_factory=list)
    signals_seen: list[Signals] = field(default_factory=list)

    def feed(self, data: bytes) -> list[LogLine]:
        self.fed.append(data)
        text = data.decode("utf-8", "replace")
        return [LogLine(_rank(line), line, "error" in line.lower()) for line in text.splitlines()]

    def finish(self) -> list[LogLine]:
        return []

    def new_run(self, reason: str) -> list[LogLine]:
        return []

    def judge(
        self, signals: Signals, expectations: Expectations, now: float, policy: StallPolicy
    ) -> Judgement:
        """The real judge's rank statuses, with the verdict the test set."""
        self.signals_seen.append(signals)
        judged = judge(self.snapshot, signals, expectations, now, policy)
        if not signals.connected:
            return replace(judged, verdict=Verdict.CONNECTING, disagreements=())
        return replace(judged, verdict=self.verdict_value, disagreements=self.disagreements)


def _rank(line: str) -> str | None:
    return next((word.rstrip("]") for word in line.split() if word.startswith("TP")), None)


def ranks(
    count: int, stage: Stage = Stage.WEIGHT_LOADING, at: float = 900.0
) -> tuple[RankState, ...]:
    """``count`` ranks in ``stage`` since ``at``, TP0 with shard progress."""
    return tuple(
        RankState(
            tag=f"TP{i}",
            node=i // 8,
            stage=stage,
            stage_started_at=at,
            progress=Progress(9, 20, "shards") if i == 0 else None,
            avail_gb=63.1,
            used_gb=15.4,
            kv_tokens=None,
            last_line=f"[2026-01-01 10:00:00 TP{i}] Load weight begin. avail mem=78.52 GB",
            last_seen_at=at + 10,
        )
        for i in range(count)
    )


def server(tp: int = 8) -> ServerInfo:
    return ServerInfo(
        engine="sglang",
        version="0.5.23",
        model="moonshotai/Kimi-K2.5",
        drafter="lightseekorg/kimi-k2.5-eagle3",
        speculative_algorithm="EAGLE3",
        tp_size=tp,
    )
