"""``d``: dump one rank's Python stacks with ``py-spy dump`` into the log view.

The rank is the focused one, or, when the verdict is STALLED and no rank is focused, the stalled
one. Its process is looked for in the process group of the run bringup launched (the launch
record that the launch actions poll), on the node that runs the rank, through that node's
session: nothing new is opened. The dump (``tui.io.stacks.stack_dump.dump_rank_stacks``) runs
in a worker of :class:`StackActions`, which hears of it with :class:`StacksDumped`; its text,
sanitized, is added to the log ring under the rank, so the log view shows it next to the rank's
own lines as plain text, never as markup. Every way it can fail (no launch record, the run
ended, py-spy missing, the process not found, the link down) ends in a notification.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual import on
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widget import Widget

from tui.app.monitor.monitor_state import MonitorState
from tui.app.monitor.view_model import MonitorView
from tui.app.screens.log_view import LogScreen
from tui.engine.launch.launch_record import RunState, RunStatus
from tui.engine.logs.log_line import LogLine
from tui.engine.startup.vocabulary import Verdict
from tui.io.stacks.stack_dump import StackDump, dump_rank_stacks
from tui.io.transport.host_session import HostSession

STACK_ACTIONS = frozenset({"dump_stacks"})
STACK_BINDINGS: list[BindingType] = [
    Binding("d", "dump_stacks", "Stacks", id="dump-stacks"),
]
NO_RECORD = (
    "no launch record: this server was not launched by bringup (L), so the process group of "
    "its ranks is unknown"
)


def stack_target(view: MonitorView | None, focused: str | None) -> str | None:
    """The rank to dump: the focused one, else the first stalled one while STALLED."""
    if focused is not None:
        return focused
    if view is not None and view.verdict is Verdict.STALLED and view.stalled:
        return sorted(view.stalled)[0]
    return None


def rank_node(view: MonitorView | None, tag: str) -> int:
    """The node that runs rank ``tag`` (node 0 when the rank is not known)."""
    ranks = () if view is None else view.snapshot.ranks
    return next((rank.node for rank in ranks if rank.tag == tag), 0)


def process_group(statuses: Sequence[RunStatus], node: int) -> tuple[int | None, str]:
    """The launched run's process group on ``node``, or None and the reason there is none."""
    found = next((s for s in statuses if s.record is not None and s.record.node_rank == node), None)
    if found is None or found.record is None or found.record.pgid is None:
        return None, NO_RECORD
    if found.state is RunState.ENDED:
        return None, f"the launched run {found.run_id} has ended ({found.describe()})"
    return found.record.pgid, ""


def dump_lines(tag: str, group: int, dump: StackDump) -> list[LogLine]:
    """Log-ring lines for a dump: a heading, then the stacks, all under the rank."""
    heading = f"── py-spy dump of {tag} (process group {group}) ──"
    return [LogLine(tag, text, False) for text in (heading, *dump.text.splitlines())]


class StacksDumped(Message):
    """A dump of ``tag``'s stacks (process group ``group``) finished, well or not."""

    def __init__(self, tag: str, group: int, dump: StackDump) -> None:
        super().__init__()
        self.tag = tag
        self.group = group
        self.dump = dump


class StackActions(Widget):
    """Dumps stacks through ``sessions`` (one per node, node 0 first); shows nothing itself."""

    DEFAULT_CSS = "StackActions { display: none; }"

    def __init__(
        self,
        state: MonitorState,
        sessions: Sequence[HostSession],
        statuses: Callable[[], Sequence[RunStatus]],
    ) -> None:
        super().__init__()
        self.state = state
        self.sessions = tuple(sessions)
        self.statuses = statuses
        self.py_spy = "py-spy"
        self.busy = False

    def check(self, action: str) -> bool | None:
        """For ``check_action``: gone without a session, greyed out while a dump runs."""
        if action not in STACK_ACTIONS:
            return True
        if not self.sessions:
            return False
        return None if self.busy else True

    def dump(self, view: MonitorView | None, focused: str | None) -> None:
        """The ``d`` key: start the dump in a worker, or say why it cannot start."""
        tag = stack_target(view, focused)
        if tag is None:
            self._warn("no rank to dump: focus one (1-9, 0) first")
            return
        node = rank_node(view, tag)
        group, reason = process_group(self.statuses(), node)
        if group is None:
            self._warn(f"cannot dump the stacks of {tag}: {reason}")
            return
        if node >= len(self.sessions):
            self._warn(f"cannot dump the stacks of {tag}: no connection to node {node}")
            return
        engine = "auto" if view is None else view.snapshot.server.engine or "auto"
        self._set_busy(True)
        work = self._dump(self.sessions[node], group, engine, tag)
        self.run_worker(work, group="stacks", exit_on_error=False)

    async def _dump(self, session: HostSession, group: int, engine: str, tag: str) -> None:
        try:
            dump = await dump_rank_stacks(
                session, process_group=group, engine=engine, tag=tag, py_spy=self.py_spy
            )
        finally:
            self._set_busy(False)
        self.post_message(StacksDumped(tag, group, dump))

    @on(StacksDumped)
    def _dumped(self, message: StacksDumped) -> None:
        """Put a dump in the log ring and open the rank's log; a failure is a notification."""
        tag, dump = message.tag, message.dump
        if not dump.ok:
            self._warn(dump.message)
            return
        self.state.log.extend(dump_lines(tag, message.group, dump))
        self.state.touch()
        self.notify(f"{dump.message}: shown in the log", title="Stacks", markup=False)
        if not isinstance(self.app.screen, LogScreen):
            self.app.push_screen(LogScreen(self.state.log, tag), self._log_closed)

    def _log_closed(self, _: None) -> None:
        self.state.touch()

    def _set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.app.refresh_bindings()

    def _warn(self, text: str) -> None:
        self.notify(text, title="Stacks", markup=False, severity="warning", timeout=10)
