"""Plain data the widgets render: connection and health readings and the monitor view.

Nothing here imports Textual, so the rules below are tested without an app.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from tui.engine.gpu.gpu_map import RankGpu
from tui.engine.gpu.gpu_state import GpuSnapshot
from tui.engine.judge.health import HealthState
from tui.engine.judge.scheduled_job import ScheduledJob
from tui.engine.judge.stall import RankHealth, RankStatus
from tui.engine.startup.snapshot import Snapshot
from tui.engine.startup.vocabulary import Verdict
from tui.engine.timing.estimate import Eta, Expectations

EXPECTED_STARTUP_SECONDS = 600.0


class ConnectionState(str, Enum):
    """The link to the host, as the header shows it."""

    CONNECTING = "connecting"
    CONNECTED = "connected"
    RECONNECTING = "reconnecting"
    LOST = "lost"
    REFUSED = "refused"
    CLOSED = "closed"


@dataclass(frozen=True, slots=True)
class HealthReading:
    """One health poll: classification, HTTP status, latency and the generation probe."""

    state: HealthState = HealthState.UNKNOWN
    status: int | None = None
    latency_ms: float | None = None
    endpoint: str = ""
    generation_ok: bool | None = None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Target:
    """What is being watched, as shown in the header."""

    profile: str = ""
    host: str = ""
    log_path: str = ""


@dataclass(frozen=True, slots=True)
class MonitorView:
    """Everything the main screen shows at one instant."""

    target: Target
    snapshot: Snapshot
    verdict: Verdict
    connection: ConnectionState
    eta: Eta
    plan: Expectations
    connection_detail: str = ""
    health: HealthReading = field(default_factory=HealthReading)
    disagreements: tuple[str, ...] = ()
    statuses: tuple[RankStatus, ...] = ()
    now: float = 0.0
    markers: tuple[str, ...] = ()
    gpu: GpuSnapshot | None = None
    """The latest GPU telemetry of every host, as one (for totals); None when the monitor
    reads none."""
    placements: tuple[RankGpu, ...] = ()
    """Which GPU each rank is on (empty without telemetry)."""
    node_gpus: tuple[tuple[int, GpuSnapshot], ...] = ()
    """Each node's latest GPU telemetry (the snapshot of the host it runs on)."""
    reason: str = ""
    """The judge's one sentence on why the verdict is what it is."""
    job: ScheduledJob | None = None
    """The scheduler's job the server runs in (its queued time current); None without one."""
    job_lines: tuple[str, ...] = ()
    """Once the job ended: the last lines of the rank that failed or fell silent first."""

    def node_gpu(self, node: int) -> GpuSnapshot | None:
        """The GPU telemetry of the host running ``node`` (one host: every rank is node 0's)."""
        return next((snapshot for number, snapshot in self.node_gpus if number == node), None)

    def status(self, tag: str) -> RankStatus | None:
        return next((status for status in self.statuses if status.tag == tag), None)

    @property
    def flagged(self) -> frozenset[str]:
        """Ranks that lag the others or are stalled."""
        return frozenset(status.tag for status in self.statuses if status.flagged)

    @property
    def stalled(self) -> frozenset[str]:
        return frozenset(s.tag for s in self.statuses if s.health is RankHealth.STALLED)

    @property
    def fraction(self) -> float:
        return 1.0 if self.verdict.serving else self.eta.fraction
