"""``d`` dumps a rank's Python stacks with the real ``py-spy`` into the log view.

The simulator is launched through the app's own launch path (``L``), so the run has a launch
record with its process group; its ranks carry SGLang's process titles. The app reaches the
host through a host session: the local machine, as ``bringup watch --local`` does, or a real
OpenSSH server on loopback.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest
from textual.pilot import Pilot

from tests.io.launch_support import local_launcher
from tests.net import free_port
from tests.sshd import TestServer
from tests.ui.fakes import FakeLink, ranks, server
from tests.ui.pilot_wait import until
from tui.app.feed.engine_link import EngineAdapter
from tui.app.feed.feed_sources import ScriptedSource
from tui.app.feed.session_source import SessionSource
from tui.app.launch.launch_actions import LauncherOpener
from tui.app.launch.stack_actions import NO_RECORD, process_group, rank_node, stack_target
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.view_model import Target
from tui.app.screens.log_view import LogScreen
from tui.app.screens.main_screen import MainScreen
from tui.engine.judge.stall import RankHealth, RankStatus
from tui.engine.launch.launch_record import HowEnded, LaunchRecord, RunState, RunStatus
from tui.engine.startup.snapshot import Snapshot
from tui.engine.startup.vocabulary import Stage, Verdict
from tui.io.launch.launch_node import Node, Runner
from tui.io.launch.launcher import Launcher
from tui.io.transport.host_session import HostSession, SshConnector
from tui.io.transport.ssh import SshTransport, connect

PY_SPY_DIR = Path(sys.executable).parent
needs_py_spy = pytest.mark.skipif(
    not (PY_SPY_DIR / "py-spy").exists(), reason="py-spy is not installed next to Python"
)


@pytest.fixture(scope="module")
def ptrace() -> None:
    """Skip, before anything is launched, where this machine forbids ptrace (py-spy needs it to
    read another process's stacks)."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        probe = subprocess.run(
            [str(PY_SPY_DIR / "py-spy"), "dump", "--pid", str(child.pid)],
            capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
    finally:
        child.kill()
        child.wait()
    if probe.returncode != 0 and "ptrace" in (probe.stdout + probe.stderr).lower():
        pytest.skip("this machine forbids ptrace")


def sim_command(port: int) -> tuple[str, ...]:
    return (sys.executable, "-m", "tui.sim", "--port", str(port), "--tp-size", "2",
            "--time-scale", "0.05")  # fmt: skip


def opener_for(launcher: Launcher) -> LauncherOpener:
    @contextlib.asynccontextmanager
    async def opened() -> AsyncIterator[Launcher]:
        yield launcher

    return opened


def launching_app(session: HostSession, log_dir: Path, runner: Runner | None = None) -> MonitorApp:
    """The monitor of profile ``t``, whose launch command is the simulator, run by ``runner``."""
    port = free_port()
    launcher = local_launcher(log_dir, sim_command(port), port=port)
    if runner is not None:
        launcher = Launcher(launcher.spec, [Node("sshd", runner)])
    app = MonitorApp(
        link=EngineAdapter("sglang"),
        source=SessionSource(session, str(log_dir / "t-latest.log")),
        target=Target("t", "local"),
        launcher=opener_for(launcher),
        hosts=(session,),
    )
    app.launch_actions.poll_seconds = 0.3
    return app


def notes(app: MonitorApp) -> list[str]:
    return [n.message for n in app._notifications]


def rank_tags(app: MonitorApp) -> list[str]:
    main = app.screen_stack[0] if app.screen_stack else None
    return main.rank_tags() if isinstance(main, MainScreen) else []


async def launch_and_focus(pilot: Pilot[int], app: MonitorApp, tag: str) -> None:
    """Launch the simulator with ``L``, wait for its ranks, then focus ``tag`` by its digit."""
    await until(pilot, lambda: app.launch_actions.statuses != (), "the first status poll")
    await pilot.press("L")
    await until(pilot, lambda: app.launch_actions.running, "the launched run is running")
    await until(pilot, lambda: {"TP0", "TP1"} <= set(rank_tags(app)), "both ranks in the grid")
    await pilot.press(str(rank_tags(app).index(tag) + 1))


@needs_py_spy
async def test_d_dumps_the_focused_rank_into_its_log(
    session: HostSession,
    tmp_path: Path,
    groups: None,
    monkeypatch: pytest.MonkeyPatch,
    ptrace: None,
) -> None:
    monkeypatch.setenv("PATH", f"{PY_SPY_DIR}:{Path('/usr/bin')}:{Path('/bin')}")
    app = launching_app(session, tmp_path)
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        await launch_and_focus(pilot, app, "TP1")
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, LogScreen), "the log view opened")
        screen = app.screen
        assert isinstance(screen, LogScreen)
        assert screen.rank == "TP1"
        log = screen.lines
        await until(pilot, lambda: "py-spy dump of TP1" in "\n".join(log.texts()), "dump shown")
        text = "\n".join(log.texts())
        assert "(sglang::scheduler_TP1)" in text
        assert "tui/sim/rank.py" in text
        assert "main" in text
        assert "stacks of TP1 on local: shown in the log" in notes(app)


@needs_py_spy
async def test_d_dumps_over_ssh(
    ssh_server: TestServer, tmp_path: Path, groups: None, ptrace: None
) -> None:
    session = HostSession(SshConnector(ssh_server.target()))
    await session.start()
    transport = SshTransport(await connect(ssh_server.target()))
    try:
        app = launching_app(session, tmp_path, transport)
        app.stack_actions.py_spy = str(PY_SPY_DIR / "py-spy")
        async with app.run_test(size=(140, 40), notifications=True) as pilot:
            await launch_and_focus(pilot, app, "TP0")
            await pilot.press("d")
            await until(pilot, lambda: isinstance(app.screen, LogScreen), "the log view opened")
            assert isinstance(app.screen, LogScreen)
            log = app.screen.lines
            await until(pilot, lambda: "(sglang::scheduler_TP0)" in "\n".join(log.texts()), "dump")
            assert "tui/sim/rank.py" in "\n".join(log.texts())
            host = (await session.transport()).label
            assert f"stacks of TP0 on {host}: shown in the log" in notes(app)
    finally:
        await transport.close()
        await session.close()


async def test_missing_py_spy_is_explained(
    session: HostSession, tmp_path: Path, groups: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{Path('/usr/bin')}:{Path('/bin')}")
    app = launching_app(session, tmp_path)
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        await launch_and_focus(pilot, app, "TP0")
        await pilot.press("d")
        expected = "py-spy is not installed on local: run 'pip install py-spy' there to dump stacks"
        await until(pilot, lambda: expected in notes(app), "the missing py-spy explained")
        assert not isinstance(app.screen, LogScreen)


async def test_without_a_launch_record_nothing_is_run(session: HostSession) -> None:
    link = FakeLink(Snapshot(server=server(2), ranks=ranks(2), started_at=900.0))
    app = MonitorApp(
        link=link, source=ScriptedSource([b"x\n"]), target=Target("t", "local"), hosts=(session,)
    )
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        await pilot.press("d")
        await until(pilot, lambda: bool(notes(app)), "a notification")
        assert notes(app) == ["no rank to dump: focus one (1-9, 0) first"]
        await until(pilot, lambda: focus_first(app), "the first rank focused")
        await pilot.press("d")
        await until(pilot, lambda: len(notes(app)) == 2, "a second notification")
        assert notes(app)[1].startswith("cannot dump the stacks of TP0: no launch record")
        assert not [worker for worker in app.workers if worker.group == "stacks"]


def focus_first(app: MonitorApp) -> bool:
    """Focus the first rank's panel once the grid shows it; True when it has the focus."""
    main = app.screen
    if not isinstance(main, MainScreen) or not main.focus_rank("TP0"):
        return False
    return main.focused_rank() == "TP0"


async def test_without_a_session_the_key_is_gone() -> None:
    app = MonitorApp(link=FakeLink(), source=ScriptedSource([]), target=Target("t", "local"))
    async with app.run_test(size=(140, 40)):
        assert app.check_action("dump_stacks", ()) is False


async def test_the_stalled_rank_is_dumped_when_none_is_focused() -> None:
    link = FakeLink(Snapshot(server=server(4), ranks=ranks(4), started_at=900.0))
    app = MonitorApp(link=link, source=ScriptedSource([b"x\n"]), target=Target("t", "local"))
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.last_view is not None, "the first repaint")
        assert app.last_view is not None
        hung = RankStatus("TP2", RankHealth.STALLED, Stage.CUDA_GRAPH, False, 900.0, 900.0)
        stalled = replace(app.last_view, verdict=Verdict.STALLED, statuses=(hung,))
        assert stack_target(stalled, None) == "TP2"
        assert stack_target(stalled, "TP0") == "TP0"
        assert stack_target(replace(stalled, verdict=Verdict.STARTING), None) is None
        assert stack_target(None, None) is None
        assert rank_node(stalled, "TP2") == 0
        two_nodes = replace(stalled, snapshot=Snapshot(server=server(16), ranks=ranks(16)))
        assert rank_node(two_nodes, "TP11") == 1
        assert rank_node(two_nodes, "TP3") == 0


def test_only_a_running_launched_run_has_a_process_group() -> None:
    record = LaunchRecord("t", "t-1", "gpu1", 0, 1, ("serve",), "/logs/t.log", "now", pgid=4242)
    running = RunStatus("gpu1", RunState.RUNNING, "t-1", record)
    assert process_group([running], 0) == (4242, "")
    assert process_group([running], 1)[0] is None
    assert process_group([], 0) == (None, NO_RECORD)
    unrecorded = RunStatus("gpu1", RunState.RUNNING, "t-1", replace(record, pgid=None))
    assert process_group([unrecorded], 0) == (None, NO_RECORD)
    ended = RunStatus("gpu1", RunState.ENDED, "t-1", record, exit_status=1,
                      how_ended=HowEnded.FAILED)  # fmt: skip
    group, reason = process_group([ended], 0)
    assert group is None
    assert reason == "the launched run t-1 has ended (failed: exited 1)"
