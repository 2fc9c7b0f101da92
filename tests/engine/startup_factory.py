"""Synthetic start-ups for the estimate and stall tests: ranks walking stages on a fake clock."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tui.engine.startup.snapshot import RankState, ServerInfo, Snapshot, StageSpan
from tui.engine.startup.vocabulary import Outcome, Stage
from tui.engine.timing.estimate import RunRecord, run_record
from tui.engine.timing.fingerprint import Fingerprint

STARTUP: tuple[Stage, ...] = (
    Stage.PROCESS_START,
    Stage.ARGS,
    Stage.DISTRIBUTED_INIT,
    Stage.MODEL_CONFIG,
    Stage.WEIGHT_LOADING,
    Stage.KV_CACHE,
    Stage.CUDA_GRAPH,
    Stage.WARMUP,
)
# A ten-minute start: seconds per stage (sums to 600).
USUAL: Mapping[Stage, float] = {
    Stage.PROCESS_START: 10.0,
    Stage.ARGS: 5.0,
    Stage.DISTRIBUTED_INIT: 25.0,
    Stage.MODEL_CONFIG: 10.0,
    Stage.WEIGHT_LOADING: 300.0,
    Stage.KV_CACHE: 20.0,
    Stage.CUDA_GRAPH: 150.0,
    Stage.WARMUP: 80.0,
}
FP = Fingerprint(engine="sglang", version="0.5.21", model="Kimi-K2.5", tp=2, gpu="H200")
TAGS = ("TP0", "TP1")


def rank_at(
    now: float,
    durations: Mapping[Stage, float] = USUAL,
    *,
    tag: str = "TP0",
    scale: float = 1.0,
    hang: Stage | None = None,
    chatty: bool = False,
    stretch: Mapping[Stage, float] | None = None,
) -> RankState:
    """Where a rank that started at 0 and takes ``durations * scale`` per stage is at ``now``.

    ``stretch`` multiplies single stages further. A rank that ``hang``s enters that stage and
    never leaves it; a ``chatty`` rank prints a line every second, a quiet one only when it
    enters a stage.
    """
    spans: list[StageSpan] = []
    clock = 0.0
    for stage in (*STARTUP, Stage.READY):
        seconds = durations.get(stage, 0.0) * scale * (stretch or {}).get(stage, 1.0)
        current = stage is Stage.READY or stage is hang or clock + seconds > now
        spans.append(StageSpan(stage, False, None, None, clock, None if current else seconds))
        if current:
            break
        clock += seconds
    last = spans[-1]
    seen = max(now - 1.0, last.started_at) if chatty else last.started_at
    return RankState(
        tag=tag,
        stage=last.stage,
        stage_started_at=last.started_at,
        last_seen_at=seen,
        history=tuple(spans),
    )


def snapshot_of(ranks: Sequence[RankState], *, ready_at: float | None = None) -> Snapshot:
    ready = all(rank.stage is Stage.READY for rank in ranks)
    return Snapshot(
        server=ServerInfo(engine="sglang", model=FP.model, tp_size=len(ranks)),
        ranks=tuple(ranks),
        outcome=Outcome.READY if ready else Outcome.INCOMPLETE,
        started_at=0.0,
        ready_at=ready_at if ready else None,
    )


def finished_run(
    scale: float = 1.0,
    *,
    fingerprint: Fingerprint = FP,
    recorded_at: float = 0.0,
    durations: Mapping[Stage, float] = USUAL,
) -> RunRecord:
    """The record of a healthy run whose every stage took ``durations * scale``."""
    total = sum(durations.values()) * scale
    ranks = [rank_at(total + 1, durations, tag=tag, scale=scale) for tag in TAGS]
    snapshot = snapshot_of(ranks, ready_at=total)
    return run_record(fingerprint, snapshot, recorded_at=recorded_at)
