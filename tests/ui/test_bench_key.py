"""``b`` benchmarks only a READY server; otherwise it says why and leaves the pane alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from tests.net import free_port
from tests.ui.fakes import FakeLink
from tui.app.bench.bench_state import BenchPhase
from tui.app.feed.feed_sources import ScriptedSource
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.view_model import Target
from tui.config import BenchConfig
from tui.engine.startup.vocabulary import Verdict
from tui.io.bench.bench_setup import BenchOptions, BenchSetup
from tui.io.transport.host_session import HostSession


def _app(session: HostSession, link: FakeLink, data_dir: Path) -> MonitorApp:
    config = BenchConfig(mode="off", num_prompts=1, input_len=4, output_len=4, warmup_requests=0)
    options = BenchOptions(config, profile="bench-key", data_dir=data_dir)
    app = MonitorApp(
        link=link,
        source=ScriptedSource([b"starting\n"]),
        target=Target("bench-key", "local"),
        bench=BenchSetup(session, free_port(), "sglang", options, host="local"),
    )
    app.bench.settle = 0.0
    return app


async def _shown(pilot: Pilot[int], app: MonitorApp, verdict: Verdict) -> None:
    for _ in range(200):
        if app.last_view is not None and app.last_view.verdict is verdict:
            return
        await pilot.pause(0.05)
    raise AssertionError(f"the verdict never became {verdict.value}")


@pytest.mark.parametrize("verdict", [Verdict.STARTING, Verdict.STALLED, Verdict.FAILED])
async def test_b_waits_for_ready(session: HostSession, tmp_path: Path, verdict: Verdict) -> None:
    link = FakeLink(verdict_value=verdict)
    app = _app(session, link, tmp_path)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await _shown(pilot, app, verdict)
        await pilot.press("b")
        await pilot.pause(0.2)
        messages = [n.message for n in app._notifications]
        assert f"not benchmarked: the server is {verdict.value}, not READY" in messages
        assert app.bench.state.runs == 0
        assert app.bench.state.phase is BenchPhase.IDLE
        assert not [w for w in app.workers if w.group == "bench"]

        link.verdict_value = Verdict.READY
        app.state.touch()
        await _shown(pilot, app, Verdict.READY)
        await pilot.press("b")
        for _ in range(200):
            if app.bench.state.runs:
                break
            await pilot.pause(0.05)
        assert app.bench.state.runs == 1
