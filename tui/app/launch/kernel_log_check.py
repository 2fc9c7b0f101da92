"""When a rank stalls or the server fails, read the GPU host's kernel log for NVIDIA faults.

The read (``tui.io.kernel_log.kernel_log_read.check_kernel_log``) goes over the session already
open to the node that runs the stalled or failed rank, once per verdict and rank, in a worker
of :class:`KernelLogCheck`, which hears of it with :class:`KernelLogChecked`. The result is
shown with the failure (a line of the failure panel) and, for a stall, as a notification; a
kernel log the user may not read says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual import on
from textual.message import Message
from textual.notifications import SeverityLevel
from textual.widget import Widget

from tui.app.monitor.view_model import MonitorView
from tui.app.widgets.failure_panel import FailurePanel
from tui.config.config_model import KERNEL_LOG_COMMANDS
from tui.engine.startup.vocabulary import Verdict
from tui.io.kernel_log.kernel_log_read import KernelLogReport, check_kernel_log
from tui.io.transport.host_session import HostSession

CHECKED_VERDICTS = frozenset({Verdict.STALLED, Verdict.FAILED})


class KernelLogChecked(Message):
    """The kernel log of node ``node`` was read (or could not be) after ``verdict``."""

    def __init__(self, node: int, verdict: Verdict, report: KernelLogReport) -> None:
        super().__init__()
        self.node = node
        self.verdict = verdict
        self.report = report


def _culprit(view: MonitorView) -> tuple[str | None, int]:
    """The failed or first stalled rank and the node that runs it."""
    snapshot = view.snapshot
    tag = snapshot.failure.rank if snapshot.failure is not None else None
    if tag is None and view.stalled:
        tag = sorted(view.stalled)[0]
    node = next((rank.node for rank in snapshot.ranks if rank.tag == tag), 0)
    return tag, node


class KernelLogCheck(Widget):
    """Reads kernel logs through ``sessions`` (one per node, node 0 first); shows nothing itself."""

    DEFAULT_CSS = "KernelLogCheck { display: none; }"

    def __init__(self, sessions: Sequence[HostSession]) -> None:
        super().__init__()
        self.sessions = tuple(sessions)
        self.commands: tuple[tuple[str, ...], ...] = KERNEL_LOG_COMMANDS
        """The commands tried in turn (the profile's ``kernel_log``)."""
        self.report: KernelLogReport | None = None
        self._checked: set[tuple[Verdict, str | None, int, int]] = set()

    def saw(self, view: MonitorView) -> None:
        """A new view: start a read when a rank has just stalled or the server failed."""
        if view.verdict not in CHECKED_VERDICTS or not self.sessions:
            return
        tag, node = _culprit(view)
        key = (view.verdict, tag, node, view.snapshot.runs_before)
        if key in self._checked or node >= len(self.sessions):
            return
        self._checked.add(key)
        self.run_worker(self._read(node, view.verdict), group="kernel-log", exit_on_error=False)

    async def _read(self, node: int, verdict: Verdict) -> None:
        report = await check_kernel_log(self.sessions[node], self.commands)
        self.post_message(KernelLogChecked(node, verdict, report))

    @on(KernelLogChecked)
    def _checked_log(self, message: KernelLogChecked) -> None:
        self.report = report = message.report
        for panel in self.app.screen.query(FailurePanel):
            panel.show_hardware(report.summary)
        if message.verdict is Verdict.STALLED or report.faults:
            severity: SeverityLevel = (
                "warning" if report.faults or not report.permitted else "information"
            )
            self.notify(report.summary, title="Kernel log", markup=False, severity=severity,
                        timeout=15)  # fmt: skip
