"""``d``: dump one rank's Python stacks with ``py-spy dump`` into the log view.

The rank is the focused one, or, when the verdict is STALLED and no rank is focused, the stalled
one. Its process is looked for in the process group of the run bringup launched (the launch
record that the launch control polls), on the node that runs the rank, through that node's
session: nothing new is opened. The dump runs in a worker; its text (sanitized by
:mod:`tui.io.stacks.stack_dump`) is added to the log ring under the rank, so the log view shows it
next to
the rank's own lines as plain text, never as markup. Every way it can fail (no launch record, the
run ended, py-spy missing, the process not found, the link down) ends in a notification.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from textual.app import App
from textual.binding import Binding, BindingType

from tui.app.monitor.monitor_state import MonitorState
from tui.app.monitor.view_model import MonitorView
from tui.app.screens.log_view import LogScreen
from tui.engine.launch.launch_record import RunState, RunStatus
from tui.engine.logs.log_line import LogLine
from tui.engine.logs.sanitize import sanitize_line
from tui.engine.startup.vocabulary import Verdict
from tui.io.stacks.stack_dump import StackDump, dump_stacks
from tui.io.transport.deadline import within
from tui.io.transport.host_session import HostSession
from tui.io.transport.transport import TransportError

STACK_ACTIONS = frozenset({"dump_stacks"})
STACK_BINDINGS: list[BindingType] = [
    Binding("d", "dump_stacks", "Stacks", id="dump-stacks"),
]
LINK_TIMEOUT_SECONDS = 15.0
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


class StackControl:
    """Dumps stacks for ``app`` through ``sessions`` (one per node, node 0 first)."""

    def __init__(
        self,
        app: App[Any],
        state: MonitorState,
        sessions: Sequence[HostSession],
        statuses: Callable[[], Sequence[RunStatus]],
        open_log: Callable[[str], None],
    ) -> None:
        self.app = app
        self.state = state
        self.sessions = tuple(sessions)
        self.statuses = statuses
        self.open_log = open_log
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
        self.app.run_worker(work, group="stacks", exit_on_error=False)

    async def _dump(self, session: HostSession, group: int, engine: str, tag: str) -> None:
        try:
            transport = await within(session.transport(), LINK_TIMEOUT_SECONDS)
            dump = await dump_stacks(
                transport, process_group=group, engine=engine, tag=tag, py_spy=self.py_spy
            )
        except (TransportError, OSError, ValueError, asyncio.TimeoutError) as exc:
            detail = sanitize_line(str(exc)) or type(exc).__name__
            dump = StackDump(False, "", f"cannot dump the stacks of {tag}: {detail}")
        finally:
            self._set_busy(False)
        self.show(tag, group, dump)

    def show(self, tag: str, group: int, dump: StackDump) -> None:
        """Put a dump in the log ring and open the rank's log; a failure is a notification."""
        if not dump.ok:
            self._warn(dump.message)
            return
        self.state.log.extend(dump_lines(tag, group, dump))
        self.state.touch()
        self.app.notify(f"{dump.message}: shown in the log", title="Stacks", markup=False)
        if not isinstance(self.app.screen, LogScreen):
            self.open_log(tag)

    def _set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.app.refresh_bindings()

    def _warn(self, text: str) -> None:
        self.app.notify(text, title="Stacks", markup=False, severity="warning", timeout=10)
