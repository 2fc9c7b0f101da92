"""The header: what is watched, the link, the verdict, the start-up timer, progress and health."""

from __future__ import annotations

from functools import partial

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Static

from tui.app.monitor.view_model import ConnectionState, MonitorView
from tui.app.widgets import cell_format as fmt
from tui.app.widgets.content_line import ContentLine
from tui.app.widgets.gpu_widgets import GpuSummary
from tui.app.widgets.health_badge import HealthBadge, VerdictBadge
from tui.app.widgets.node_rows import traffic_note
from tui.engine.logs.sanitize import printable
from tui.engine.servers import registry
from tui.engine.startup.snapshot import ServerInfo
from tui.engine.startup.vocabulary import Verdict

_LINK_STYLE = {
    ConnectionState.CONNECTED: "$health-ok",
    ConnectionState.CONNECTING: "$health-starting",
    ConnectionState.RECONNECTING: "$health-starting",
    ConnectionState.LOST: "$health-down",
    ConnectionState.REFUSED: "$health-down",
    ConnectionState.CLOSED: "$text-muted",
}


def identity_line(view: MonitorView) -> Content:
    """``profile · host · sglang 0.5.23 TP8 · model · drafter`` and the link state."""
    server = view.snapshot.server
    parts: list[str | tuple[str, str]] = [("bringup", "bold $primary")]
    for text in (view.target.profile, view.target.host):
        if text:
            parts.extend([" · ", text])
    # The link state comes early so that a narrow pane never cuts it off.
    parts.extend([" ", (f"● {view.connection.value}", _LINK_STYLE[view.connection])])
    if view.connection_detail:
        parts.append((f" ({view.connection_detail})", "$text-muted"))
    if _engine(server):
        parts.extend([" · ", _engine(server)])
    if traffic_note(view.snapshot):
        parts.extend([" · ", (traffic_note(view.snapshot), "$text-muted")])
    if server.model:
        parts.extend([" · ", (server.served_model_name or server.model, "bold")])
    if server.drafter:
        algorithm = server.speculative_algorithm or "draft"
        parts.extend([" · ", (f"{algorithm} ", "$text-muted"), server.drafter])
    return Content.assemble(*(_clean(part) for part in parts))


def identity_inputs(view: MonitorView) -> tuple[object, ...]:
    """Everything ``identity_line`` reads: the line is rebuilt only when one of them changed."""
    snapshot = view.snapshot
    return (view.target, view.connection, view.connection_detail, snapshot.server,
            traffic_note(snapshot))  # fmt: skip


def _clean(part: str | tuple[str, str]) -> str | tuple[str, str]:
    if isinstance(part, tuple):
        return printable(part[0]), part[1]
    return printable(part)


def _engine(server: ServerInfo) -> str:
    if server.engine == registry.UNKNOWN:
        return ""
    text = server.engine if server.version is None else f"{server.engine} {server.version}"
    sizes = [(server.tp_size, "TP"), (server.dp_size, "DP"), (server.ep_size, "EP")]
    sizes += [(server.pp_size, "PP"), (server.nnodes, "nodes ")]
    extra = " ".join(f"{name}{size}" for size, name in sizes if size > 1)
    return f"{text} {extra}".strip()


def timer_line(view: MonitorView, width: int) -> Content:
    """``03:12 / ~10:00 ━━━━──── 53% ETA 05:10-09:30 · history: 4 runs`` (``overdue +01:10``
    past the range); the basis of the expectation is left out when the line is short."""
    eta, total = view.eta, view.plan.total
    if view.verdict is Verdict.QUEUED and view.job is not None:
        return _queued_text(view)
    head = Content(f"{fmt.clock(eta.elapsed)} / ~{fmt.clock(total.median)} ")
    if view.verdict in (Verdict.FAILED, Verdict.STOPPED) and view.job and view.job.ended:
        failed = view.verdict is Verdict.FAILED
        style = "bold $rank-failed" if failed else "$text-muted"
        return head + Content.styled(printable(view.job.summary), style)
    if view.verdict in (Verdict.FAILED, Verdict.STOPPED):
        return head + _ended_text(view)
    percent = Content(f" {view.fraction * 100:3.0f}%")
    tail = _eta_text(view)
    room = min(48, width - head.cell_length - percent.cell_length - tail.cell_length)
    basis = Content.styled(f" · {view.plan.basis_label}", "$text-muted")
    if not view.verdict.serving and room - basis.cell_length >= 12:
        tail, room = tail + basis, room - basis.cell_length
    return Content.assemble(head, fmt.bar(view.fraction, max(4, room)), percent, tail)


def _queued_text(view: MonitorView) -> Content:
    """``queued 01:20 · job 12 PENDING (Resources)``: the start-up timer waits for the job."""
    job = view.job
    assert job is not None
    waited = fmt.clock(job.queued_seconds) if job.queued_seconds is not None else "?"
    reason = f" ({job.reason})" if job.reason else ""
    return Content.assemble(
        (f"queued {waited}", "bold $rank-stalled"),
        (printable(f" · job {job.job_id} {job.state}{reason}"), "$text-muted"),
    )


def _ended_text(view: MonitorView) -> Content:
    snapshot = view.snapshot
    if view.verdict is Verdict.STOPPED:
        return Content.styled("stopped", "$text-muted")
    if snapshot.failure is None and snapshot.ready_line_seen and view.reason:
        return Content.styled(f"failed: {printable(view.reason)}", "bold $rank-failed")
    where = snapshot.failure.stage if snapshot.failure is not None else snapshot.last_stage
    place = f" in {where.label}" if where is not None else ""
    return Content.styled(f"failed{place}", "bold $rank-failed")


def _eta_text(view: MonitorView) -> Content:
    eta, total = view.eta, view.plan.total
    if view.verdict is Verdict.READY:
        return Content.styled(" ready", "$rank-ready")
    if view.verdict is Verdict.DEGRADED:
        return Content.styled(f" degraded: {printable(view.reason)}", "$rank-stalled")
    if view.snapshot.ready_line_seen:
        return Content(" waiting for /health and a generation")
    if eta.elapsed > total.high:
        return Content.styled(f" overdue +{fmt.clock(eta.elapsed - total.high)}", "$rank-stalled")
    low, high = eta.remaining.low, eta.remaining.high
    if round(low) == round(high):
        return Content(f" ETA {fmt.clock(high)}")
    return Content(f" ETA {fmt.clock(low)}-{fmt.clock(high)}")


class TimerLine(ContentLine):
    """The start-up timer, bar and ETA, laid out for the width it really has when drawn."""

    DEFAULT_CSS = "TimerLine { width: 1fr; height: 1; padding: 0 1; }"
    MIN_WIDTH = 20

    def show(self, view: MonitorView) -> None:
        self.show_line(partial(timer_line, view))


class StatusHeader(Vertical):
    """The lines at the top of the main screen: identity, verdict and timer, the GPU total (with
    telemetry), and notes that appear only on disagreement or stream markers."""

    DEFAULT_CSS = """
    StatusHeader {
        height: auto;
        background: $panel;
        & > #identity { height: 1; padding: 0 1; }
        & > Horizontal { height: 1; }
        & > #gpu-total { padding: 0 1; display: none; }
        & > #gpu-total.-shown { display: block; }
        & > #disagreement { height: auto; padding: 0 1; color: $rank-stalled; display: none; }
        & > #disagreement.-shown { display: block; }
    }
    """

    def __init__(self) -> None:
        super().__init__()
        self._identity = Static(Content(""), id="identity")
        self._verdict = VerdictBadge(id="verdict")
        self._timer = TimerLine(id="timer")
        self._health = HealthBadge(id="health")
        self._gpu = GpuSummary(id="gpu-total")
        self._notes = Static(Content(""), id="disagreement")
        self._identity_of: tuple[object, ...] | None = None
        self._notes_of: tuple[tuple[str, ...], tuple[str, ...]] | None = None

    def compose(self) -> ComposeResult:
        yield self._identity
        with Horizontal():
            yield self._verdict
            yield self._timer
            yield self._health
        yield self._gpu
        yield self._notes

    def show(self, view: MonitorView) -> None:
        """Repaint what changed; only the notes line can change the header's height."""
        if (identity := identity_inputs(view)) != self._identity_of:
            self._identity_of = identity
            _update(self._identity, identity_line(view), layout=False)
        self._verdict.show(view.verdict)
        self._health.show(view.health)
        self._timer.show(view)
        if view.gpu is not None:
            self._gpu.set_class(True, "-shown")
            self._gpu.show(view.gpu, view.now)
        if (notes := (view.disagreements, view.markers)) != self._notes_of:
            self._notes_of = notes
            self._show_notes(view)

    def _show_notes(self, view: MonitorView) -> None:
        self._notes.set_class(bool(view.disagreements or view.markers), "-shown")
        lines = [f"⚠ {text}" for text in (*view.disagreements, *view.markers)]
        _update(self._notes, Content("\n".join(lines)), layout=True)


def _update(widget: Static, content: Content, layout: bool) -> None:
    shown = widget.visual
    if not (isinstance(shown, Content) and shown.is_same(content)):
        widget.update(content, layout=layout)
