"""Multi-node SGLang logs rendered from the simulator's pure schedules, with no process or clock.

``node_log(tp, nnodes, k)`` is what node ``k`` writes (``python -m tui.sim --nnodes N
--node-rank k`` prints the same lines, paced in real time); each line is paired with the
simulated second it is written at, so a test can feed several nodes in time order on a fake
clock. ``skew`` shifts one host's log clock.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from tui.engine.cluster.cluster_engine import ClusterEngine, ClusterUpdate
from tui.sim.config import SimConfig
from tui.sim.sglang_startup import build_sglang
from tui.sim.timeline import Log, Raw

T0 = 1_780_000_000.0
READY_LINE = "The server is fired up and ready to roll!"
WARMUP_SECONDS = 20.0
Timed = tuple[float, bytes]


def dummy_line(port: int = 30000) -> str:
    return f"Dummy health check server started in background thread at 127.0.0.1:{port}"


def node_log(
    tp: int,
    nnodes: int,
    node_rank: int,
    scenario: str = "ok",
    fail_rank: int | None = None,
    skew: float = 0.0,
) -> list[Timed]:
    """Node ``node_rank``'s whole log as (simulated second, bytes), ending with its ready line
    (node 0) or its dummy health line (other nodes) when the start succeeds."""
    config = SimConfig(tp_size=tp, nnodes=nnodes, node_rank=node_rank, scenario=scenario,
                       fail_rank=fail_rank, time_scale=1.0)  # fmt: skip
    timeline = build_sglang(config)
    out: list[Timed] = []
    for step in timeline.steps:
        action = step.action
        if isinstance(action, Log):
            out.append((step.at, _line(step.at, skew, action.who, action.msg)))
        elif isinstance(action, Raw):
            out.append((step.at, action.text.encode()))
    if timeline.ready:
        last = timeline.end
        if node_rank == 0:
            out.append(
                (last + WARMUP_SECONDS, _line(last + WARMUP_SECONDS, skew, None, READY_LINE))
            )
        else:
            out.append((last + 0.5, _line(last + 0.5, skew, None, dummy_line())))
    return out


def _line(at: float, skew: float, who: str | None, msg: str) -> bytes:
    """SGLang's ``[date time TAGS] msg`` (as ``tui.sim.logfmt`` writes it, but in UTC so that
    screenshots do not depend on the machine's time zone)."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(T0 + skew + at))
    tags = f" {who}" if who else ""
    return f"[{stamp}{tags}] {msg}\n".encode()


class FakeClock:
    """The monitor's clock: set by the test, read by the engine."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def play(
    engine: ClusterEngine,
    clock: FakeClock,
    logs: Sequence[Sequence[Timed]],
    until: float,
    since: float = -1.0,
) -> list[ClusterUpdate]:
    """Feed every node's lines written in ``(since, until]``, in time order, each received at
    the second it was written (the monitor's clock follows the simulated one)."""
    steps = sorted(
        (
            (at, node, data)
            for node, log in enumerate(logs)
            for at, data in log
            if since < at <= until
        ),
        key=lambda step: (step[0], step[1]),
    )
    updates = []
    for at, node, data in steps:
        clock.now = at
        updates.append(engine.feed(node, data))
    clock.now = until
    return updates


def end_of(logs: Sequence[Sequence[Timed]]) -> float:
    return max(log[-1][0] for log in logs if log)
