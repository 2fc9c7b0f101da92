"""The monitor's state between flushes: the engine, the link, health and the log ring.

Handlers change it as messages arrive; the app's flush timer asks it for a ``MonitorView``.
No Textual import: the rules are tested without an app.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from tui.app.feed.cluster_link import NamedHosts, NodeFeed, NodeLinks
from tui.app.feed.engine_link import EngineLink
from tui.app.feed.logbook import LogBook
from tui.app.monitor.view_model import (
    EXPECTED_STARTUP_SECONDS,
    ConnectionState,
    HealthReading,
    MonitorView,
    Target,
)
from tui.engine.gpu.gpu_map import RankGpu, map_ranks, rank_numbers
from tui.engine.gpu.gpu_state import GpuSnapshot, merged
from tui.engine.judge.degraded import DEFAULT_HEALTH_GRACE, ServingMemory
from tui.engine.judge.judge import Signals
from tui.engine.judge.scheduled_job import ScheduledJob, blamed_rank
from tui.engine.judge.stall import StallPolicy
from tui.engine.launch.launch_record import RunStatus
from tui.engine.startup.snapshot import Snapshot
from tui.engine.startup.vocabulary import Verdict
from tui.engine.timing.estimate import (
    Eta,
    Expectations,
    default_expectations,
    estimate,
    startup_ranks,
)
from tui.engine.timing.spread import Spread

Planner = Callable[[Snapshot], Expectations]


def _nothing(lazy: bool = False) -> None:
    return None


MAX_MARKERS = 3
JOB_LINES = 8
"""Lines of the blamed rank shown once a job ended."""


class MonitorState:
    """Owns everything received so far; ``dirty`` says a repaint is due."""

    def __init__(
        self,
        link: EngineLink,
        target: Target,
        clock: Callable[[], float],
        expected_seconds: float = EXPECTED_STARTUP_SECONDS,
        log_capacity: int | None = None,
        planner: Planner | None = None,
        stall_policy: StallPolicy | None = None,
    ) -> None:
        self.link = link
        self.target = target
        self.clock = clock
        self.expected_seconds = expected_seconds
        self._plan: tuple[tuple[float, bool], Expectations] | None = None
        self.planner = planner or self._default_plan
        self.stall_policy = stall_policy or StallPolicy()
        self.health_grace = DEFAULT_HEALTH_GRACE
        """Seconds a READY server's port may fail (DEGRADED) before the verdict is FAILED."""
        self.serving: ServingMemory | None = None
        """What the last judgement remembered of a READY run, for the next one."""
        self.process_ended: Verdict | None = None
        """How the launched run ended (FAILED or STOPPED) once the launcher saw it end."""
        self.log = LogBook() if log_capacity is None else LogBook(log_capacity)
        self.connection = ConnectionState.CONNECTING
        self.connection_detail = ""
        self.health = HealthReading()
        self.markers: tuple[str, ...] = ()
        self.gpu_hosts: dict[tuple[int, ...], GpuSnapshot] = {}
        """Each host's latest GPU telemetry, under the nodes that host runs."""
        self.started_at = clock()
        self.job: ScheduledJob | None = None
        self._job_seen_at = 0.0
        self._job_lines: tuple[int, tuple[str, ...]] | None = None
        self.received = False
        self._dirty = True
        self.on_change: Callable[[bool], None] = _nothing
        """Told of each change; ``True`` for a reading on a timer (GPUs, ``/metrics``) that may
        wait for the next frame of a quiet serving screen."""

    @property
    def dirty(self) -> bool:
        """Something changed since the last ``view``."""
        return self._dirty

    def touch(self, lazy: bool = False) -> None:
        """Note a change (the clock moved, data arrived) and tell whoever repaints; ``lazy``
        for a periodic reading that can be shown with the next one."""
        self._dirty = True
        self.on_change(lazy)

    def age(self) -> None:
        """Note that the clock moved, for a caller that repaints at once (nobody is told)."""
        self._dirty = True

    def feed(self, data: bytes, node: int = 0) -> None:
        """Hand a chunk of node ``node``'s log to the engine; keep its lines for the log view."""
        shown = self.log.extend(self._reader(node).feed(data))
        if not self.received:
            self.received = True
            started = self.link.snapshot.started_at
            self.started_at = started if started is not None else self.started_at
        self.touch(lazy=not shown)  # the monitor's own access lines can wait for the frame

    def finish(self, node: int = 0) -> None:
        """The stream ended: flush the engine's partial last line."""
        self.log.extend(self._reader(node).finish())
        self.touch()

    def mark(self, text: str, new_run: bool = False, node: int = 0) -> None:
        """Remember a stream marker (gap, rotation, truncation) to show in the header; a new
        file (truncated, rotated, replaced) starts a new run in the engine."""
        shown = f"node {node}: {text}" if node else text
        self.markers = (*self.markers, shown)[-MAX_MARKERS:]
        if new_run:
            self.log.extend(self._reader(node).new_run(text))
        self.touch()

    def _reader(self, node: int) -> NodeFeed:
        """Node 0's log goes to the link itself; other nodes' to a link that knows nodes."""
        if node and isinstance(self.link, NodeLinks):
            return self.link.node(node)
        return self.link

    def set_connection(self, state: ConnectionState, detail: str = "") -> None:
        self.connection = state
        self.connection_detail = detail
        self.touch()

    def set_job(self, job: ScheduledJob) -> None:
        """Keep the scheduler's latest word on the job; the start-up timer starts when the job
        starts running (its queue time is shown apart), and each node is named once placed."""
        if self.job is not None and job.job_id != self.job.job_id:
            self.received, self._job_lines = False, None  # another job: a new start-up
        self.job, self._job_seen_at = job, self.clock()
        if job.running_seconds is not None and not self.received:
            self.started_at = self._job_seen_at - job.running_seconds
        if job.nodes and isinstance(self.link, NamedHosts):
            self.link.name_hosts(job.nodes)
        self.touch()

    def _job_now(self, now: float) -> ScheduledJob | None:
        """The job with its queued time brought up to ``now``."""
        job = self.job
        if job is None or not job.queued or job.queued_seconds is None:
            return job
        return replace(job, queued_seconds=job.queued_seconds + now - self._job_seen_at)

    def _last_lines(self, snapshot: Snapshot) -> tuple[str, ...]:
        """The blamed rank's last lines once the job ended (kept until more lines arrive)."""
        if self.job is None or not self.job.ended:
            return ()
        if self._job_lines is None or self._job_lines[0] != self.log.total:
            rank = blamed_rank(snapshot)
            lines = self.log.last(rank.tag, JOB_LINES) if rank is not None else ()
            self._job_lines = (self.log.total, tuple(line.text for line in lines))
        return self._job_lines[1]

    def set_health(self, reading: HealthReading) -> None:
        if reading != self.health:
            self.health = reading
            self.touch()

    def set_runs(self, statuses: Sequence[RunStatus]) -> None:
        """The launched run's status on each node: once one ended, how (a failure first)."""
        endings = {status.verdict for status in statuses} - {None}
        ended = Verdict.FAILED if Verdict.FAILED in endings else next(iter(endings), None)
        if ended is not self.process_ended:
            self.process_ended = ended
            self.touch()

    def set_gpu(self, snapshot: GpuSnapshot, nodes: tuple[int, ...] = (0,)) -> None:
        """Keep the latest GPU telemetry of the host running ``nodes`` (with the reason when
        there is none)."""
        self.gpu_hosts[nodes] = snapshot
        self.touch(lazy=True)

    @property
    def gpus(self) -> dict[int, GpuSnapshot]:
        """Each node's latest GPU telemetry: the snapshot of the host it runs on."""
        return {node: snapshot for nodes, snapshot in self.gpu_hosts.items() for node in nodes}

    @property
    def gpu(self) -> GpuSnapshot | None:
        """Every host's latest GPU telemetry as one snapshot; None when none is read."""
        hosts = [(min(nodes), snapshot) for nodes, snapshot in self.gpu_hosts.items()]
        return merged(sorted(hosts, key=lambda host: host[0])) if hosts else None

    def _placements(self, snapshot: Snapshot) -> tuple[RankGpu, ...]:
        """Each rank's GPU among those of its node's host (one host: every rank is node 0's);
        the ranks of a node whose host has not reported yet have none."""
        gpus = self.gpus
        if not gpus:
            return ()
        ranks = startup_ranks(snapshot)
        tp_size = 1 + max((rank_numbers(rank.tag).get("TP", 0) for rank in ranks), default=0)
        nnodes = 1 + max((rank.node for rank in ranks), default=0)
        placed: dict[str, RankGpu] = {}
        for node, host in gpus.items():
            tags = [rank.tag for rank in ranks if rank.node == node]
            samples = [gpu.sample for gpu in host.gpus]
            for found in map_ranks(tags, gpus=samples, tp_size=tp_size, nnodes=nnodes):
                placed[found.rank] = replace(found, node=node)
        return tuple(placed[rank.tag] for rank in ranks if rank.tag in placed)

    def _default_plan(self, snapshot: Snapshot) -> Expectations:
        """The default split of the expected time, made once per set of inputs, not per view."""
        key = (self.expected_seconds, snapshot.server.drafter is not None)
        if self._plan is None or self._plan[0] != key:
            self._plan = (key, default_expectations(key[0], speculative=key[1]))
        return self._plan[1]

    def view(self) -> MonitorView:
        """The view at the clock's current time; clears ``dirty``."""
        self._dirty = False
        now = self.clock()
        snapshot = self.link.snapshot
        plan = self.planner(snapshot)
        job = self._job_now(now)
        judgement = self.link.judge(self._signals(job), plan, now, self.stall_policy)
        self.serving = judgement.serving
        return MonitorView(
            target=self.target,
            snapshot=snapshot,
            verdict=judgement.verdict,
            connection=self.connection,
            eta=self._eta(snapshot, plan, self._timer_end(now)),
            plan=plan,
            connection_detail=self.connection_detail,
            health=self.health,
            disagreements=judgement.disagreements,
            statuses=judgement.statuses,
            now=now,
            markers=self.markers,
            gpu=self.gpu,
            placements=self._placements(snapshot),
            node_gpus=tuple(sorted(self.gpus.items())),
            reason=judgement.reason,
            job=job,
            job_lines=self._last_lines(snapshot),
        )

    def _signals(self, job: ScheduledJob | None = None) -> Signals:
        """What the judge hears besides the log: the link, the latest health poll and the
        scheduler's job."""
        return Signals(
            connected=self.connection is ConnectionState.CONNECTED or self.received,
            health=self.health.state,
            generation_ok=self.health.generation_ok,
            job=job,
            health_detail=self.health.detail,
            serving=self.serving,
            health_grace=self.health_grace,
            process_ended=self.process_ended,
        )

    def _timer_end(self, now: float) -> float:
        """Where the start-up timer stops: when the run was first judged READY (a later
        DEGRADED spell does not start it again), else it runs with the clock."""
        return now if self.serving is None else min(now, self.serving.ready_at)

    def _eta(self, snapshot: Snapshot, plan: Expectations, now: float) -> Eta:
        if snapshot.started_at is not None:
            return estimate(snapshot, plan, now)
        waited = max(0.0, now - self.started_at)
        left = max(plan.total.median - waited, 0.0)
        return Eta(waited, Spread(left, left, left), 0.0, plan.basis_label)
