"""Launch (``L``), kill (``K``) and restart (``R``) from the monitor app.

:class:`LaunchActions` is a widget without looks that owns the feature: whether each key
applies right now (for ``check_action``, so the footer greys out or removes them), the
confirmation before anything is stopped (default answer No), the workers that call the launcher
(``tui.io.launch.launcher``) and a status poll that notices when the server ends on its own.
The workers report with :class:`LaunchReported` and :class:`RunStatusChanged`, which the widget
handles itself. Without a launcher (a server watched read-only, or started outside
bringup) or with ``read_only`` the three keys are removed entirely.

Text that came from a host is shown as plain content: it is sanitized and never parsed as markup.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Protocol, runtime_checkable

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Static

from tui.engine.launch.launch_record import HowEnded, RunState, RunStatus
from tui.engine.logs.sanitize import sanitize_line
from tui.io.launch.launch_profile import kill_lines, launch_lines
from tui.io.launch.launcher import LAUNCH_FAILURES, Launcher, LaunchResult


class JobOutcome(Protocol):
    """What a scheduler launcher did, in sentences; ``refused`` when only ``force`` would do."""

    @property
    def ok(self) -> bool: ...

    @property
    def lines(self) -> tuple[str, ...]: ...

    @property
    def refused(self) -> bool: ...


@runtime_checkable
class JobLauncher(Protocol):
    """A launcher that submits, cancels and resubmits one scheduler job (Slurm's
    ``tui.io.slurm.slurm_control``) instead of starting processes on hosts."""

    async def status(self) -> tuple[RunStatus, ...]: ...

    async def submit(self, force: bool = False) -> JobOutcome: ...

    async def cancel(self) -> JobOutcome: ...

    async def resubmit(self) -> JobOutcome: ...


AnyLauncher = Launcher | JobLauncher
LauncherOpener = Callable[[], contextlib.AbstractAsyncContextManager[AnyLauncher]]
"""Opens a launcher (and its connections) for one use; closing it closes the connections."""

LAUNCH_ACTIONS = frozenset({"launch", "kill", "restart"})
LAUNCH_BINDINGS: list[BindingType] = [
    Binding("L", "launch", "Launch", id="launch"),
    Binding("K", "kill", "Kill", id="kill"),
    Binding("R", "restart", "Restart", id="restart"),
]
POLL_SECONDS = 5.0
KILL_JOB = "scancel: SIGTERM to the job, SIGKILL after the grace period, until it left the queue."
RETRY_SECONDS = 15.0


def _plain(text: str) -> Content:
    return Content("\n".join(sanitize_line(line) for line in text.splitlines()))


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question whose default (focused) answer is No."""

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical {
        width: 72; height: auto; max-height: 80%;
        border: thick $error; background: $surface; padding: 1 2;
    }
    ConfirmScreen .question { text-style: bold; }
    ConfirmScreen .detail { color: $text-muted; margin-top: 1; }
    ConfirmScreen Horizontal { height: auto; margin-top: 1; align-horizontal: right; }
    ConfirmScreen Button { margin-left: 2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="confirm-yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm-no"),
    ]

    def __init__(self, question: str, detail: str = "") -> None:
        super().__init__()
        self.question = question
        self.detail = detail

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(_plain(self.question), classes="question")
            if self.detail:
                yield Static(_plain(self.detail), classes="detail")
            with Horizontal():
                yield Button("Yes", id="yes", variant="error")
                yield Button("No", id="no", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class LaunchReported(Message):
    """A launch, kill or restart finished; ``lines`` say what happened on each node."""

    def __init__(self, action: str, lines: Sequence[str], ok: bool) -> None:
        super().__init__()
        self.action = action
        self.lines = tuple(lines)
        self.ok = ok


class RunStatusChanged(Message):
    """The launched run's status on each node, as last probed."""

    def __init__(self, statuses: Sequence[RunStatus]) -> None:
        super().__init__()
        self.statuses = tuple(statuses)


class LaunchActions(Widget):
    """Launch, kill and restart, using launchers from ``opener``; shows nothing itself."""

    DEFAULT_CSS = "LaunchActions { display: none; }"

    def __init__(
        self,
        opener: LauncherOpener | None,
        read_only: bool = False,
        poll_seconds: float = POLL_SECONDS,
    ) -> None:
        super().__init__()
        self.opener = opener
        self.read_only = read_only
        self.poll_seconds = poll_seconds
        self.statuses: tuple[RunStatus, ...] = ()
        self.busy = False
        self.scheduled = False
        """The launcher acts on a scheduler's job (learnt when its status is first polled)."""
        self._states: dict[str, RunState] = {}

    @property
    def available(self) -> bool:
        return self.opener is not None and not self.read_only

    @property
    def running(self) -> bool:
        return any(s.state is RunState.RUNNING for s in self.statuses)

    def check(self, action: str) -> bool | None:
        """For ``check_action``: False removes the key, None greys it out, True enables it."""
        if action not in LAUNCH_ACTIONS:
            return True
        if not self.available:
            return False
        if self.busy:
            return None
        if action == "kill" and not self.running:
            return None
        if action == "launch" and self.running:
            return None
        return True

    def on_mount(self) -> None:
        """Start polling the run's status."""
        if self.available:
            self.run_worker(self._poll(), group="launch-status", exit_on_error=False)

    def launch(self) -> None:
        self._run("launch", self._launch)

    def kill(self) -> None:
        self._run("kill", self._kill)

    def restart(self) -> None:
        self._run("restart", self._restart)

    def _run(self, action: str, body: Callable[[], Any]) -> None:
        if self.check(action) is not True:
            return
        self.run_worker(body(), group="launch", exclusive=True, exit_on_error=False)

    def _set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.app.refresh_bindings()

    async def _confirm(self, question: str, detail: str) -> bool:
        answer = await self.app.push_screen(ConfirmScreen(question, detail), wait_for_dismiss=True)
        return bool(answer)

    def _report(self, action: str, lines: Sequence[str], ok: bool) -> None:
        self.post_message(LaunchReported(action, lines, ok))

    @on(LaunchReported)
    def _reported(self, report: LaunchReported) -> None:
        action, lines = report.action, report.lines
        text = "\n".join(sanitize_line(line) for line in lines) or f"{action}: nothing to report"
        if report.ok:
            self.notify(text, title=action.capitalize(), markup=False)
        else:
            self.notify(text, title=action.capitalize(), markup=False, severity="error")

    async def _with_launcher(self, action: str, work: Callable[[AnyLauncher], Any]) -> None:
        assert self.opener is not None
        self._set_busy(True)
        try:
            async with self.opener() as launcher:
                await work(launcher)
                self._probed(await launcher.status())
        except LAUNCH_FAILURES as exc:
            self._report(action, [f"{action} failed: {exc}"], False)
        finally:
            self._set_busy(False)

    async def _launch(self) -> None:
        async def work(launcher: AnyLauncher) -> None:
            if isinstance(launcher, JobLauncher):
                await self._submit(launcher)
                return
            result = await launcher.launch()
            if result.refusals and not result.started and self._forceable(result):
                reasons = "\n".join(r.message for r in result.refusals)
                if not await self._confirm("Launch anyway?", reasons):
                    self._report("launch", launch_lines(result), False)
                    return
                result = await launcher.launch(force=True)
            self._launched(result)
            self._report("launch", launch_lines(result), result.ok)

        await self._with_launcher("launch", work)

    async def _submit(self, launcher: JobLauncher) -> None:
        """Submit the job; when the previous one is still queued, ask before forcing."""
        outcome = await launcher.submit()
        if outcome.refused:
            if not await self._confirm("Launch anyway?", "\n".join(outcome.lines)):
                self._report("launch", outcome.lines, False)
                return
            outcome = await launcher.submit(force=True)
        self._report("launch", outcome.lines, outcome.ok)

    def _launched(self, result: LaunchResult) -> None:
        """Runs started here count as running, so a crash before the next poll is announced."""
        for node in result.started:
            self._states[node.plan.run_id] = RunState.STARTING

    @staticmethod
    def _forceable(result: LaunchResult) -> bool:
        return all(r.kind.forceable for r in result.refusals)

    def _describe_run(self) -> str:
        parts = [f"{s.host}: {s.run_id} {s.describe()}" for s in self.statuses if s.run_id]
        return "\n".join(parts)

    async def _kill(self) -> None:
        how = KILL_JOB if self.scheduled else "SIGTERM to each process group, then SIGKILL."
        detail = self._describe_run() + "\n" + how
        if not await self._confirm("Kill the running server?", detail):
            return

        async def work(launcher: AnyLauncher) -> None:
            if isinstance(launcher, JobLauncher):
                outcome = await launcher.cancel()
                self._report("kill", outcome.lines, outcome.ok)
                return
            kills = await launcher.kill()
            self._report("kill", kill_lines(kills), all(k.ok for k in kills))

        await self._with_launcher("kill", work)

    async def _restart(self) -> None:
        detail = self._describe_run() or "No run is recorded; this launches a new one."
        if not await self._confirm("Restart the server?", detail):
            return

        async def work(launcher: AnyLauncher) -> None:
            if isinstance(launcher, JobLauncher):
                outcome = await launcher.resubmit()
                self._report("restart", outcome.lines, outcome.ok)
                return
            result = await launcher.restart()
            self._launched(result.launched)
            lines = kill_lines(result.killed) + launch_lines(result.launched)
            self._report("restart", lines, result.launched.ok)

        await self._with_launcher("restart", work)

    def _probed(self, statuses: Sequence[RunStatus]) -> None:
        self.post_message(RunStatusChanged(statuses))

    @on(RunStatusChanged)
    def _status_changed(self, message: RunStatusChanged) -> None:
        """Remember the statuses; announce a run seen running (or launched here) that ended."""
        statuses = message.statuses
        if statuses == self.statuses:
            return
        self.statuses = statuses
        for status in statuses:
            key = status.run_id or ""
            before = self._states.get(key)
            self._states[key] = status.state
            was_running = before in (RunState.RUNNING, RunState.STARTING)
            if was_running and status.state is RunState.ENDED:
                self._ended(status)
        self.app.refresh_bindings()

    def _ended(self, status: RunStatus) -> None:
        failed = status.how_ended is HowEnded.FAILED
        self.notify(
            f"{status.host}: {status.describe()}",
            title="Server failed" if failed else "Server ended",
            markup=False,
            severity="error" if failed else "information",
            timeout=30,
        )

    async def _poll(self) -> None:
        while True:
            await self._follow()
            await asyncio.sleep(RETRY_SECONDS)

    async def _follow(self) -> None:
        """Poll the status over one connection until the connection fails."""
        assert self.opener is not None
        try:
            async with self.opener() as launcher:
                self.scheduled = isinstance(launcher, JobLauncher)
                while True:
                    self._probed(await launcher.status())
                    await asyncio.sleep(self.poll_seconds)
        except LAUNCH_FAILURES:
            return
