"""Start-up history in the monitor: runs recorded in the history file set the next ETA."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.fakes import FakeClock
from tests.ui.pilot_wait import until
from tests.ui.startup_log import phases, up_to
from tui.app.feed.engine_link import EngineAdapter
from tui.app.monitor.monitor_build import WatchSettings, build_app
from tui.app.monitor.view_model import Target
from tui.app.widgets.header import timer_line
from tui.app.widgets.rank_panel import RankPanel
from tui.io.bench.bench_setup import BenchOptions
from tui.io.store.run_records import record_run
from tui.io.transport.host_session import HostSession, LocalConnector


def _record_ready_runs(data_dir: Path, count: int) -> None:
    clock = FakeClock(1000.0)
    for _ in range(count):
        link = EngineAdapter("auto", clock)
        for text in phases().values():
            link.feed(text.encode())
            clock.now += 30.0
        record_run(data_dir, link.snapshot, "history-test", "local")


def _settings(log: Path, data_dir: Path, history: bool) -> WatchSettings:
    return WatchSettings(
        target=Target("history-test", "local"),
        log_path=str(log),
        bench=BenchOptions(profile="history-test", data_dir=data_dir),
        history=history,
    )


@pytest.mark.parametrize(("history", "basis"), [(True, "history: 3 runs"), (False, "default")])
async def test_the_header_names_the_basis_of_the_eta(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, history: bool, basis: str
) -> None:
    monkeypatch.delenv("BRINGUP_DATA_DIR", raising=False)
    _record_ready_runs(tmp_path, 3)
    log = tmp_path / "server.log"
    log.write_bytes(up_to("weights"))
    session = HostSession(LocalConnector())
    app = build_app(session, _settings(log, tmp_path, history))
    try:
        async with app.run_test(size=(200, 48)) as pilot:
            await until(pilot, lambda: len(app.query(RankPanel)) == 8)
            app.flush()
            view = app.last_view
            assert view is not None
            assert view.plan.basis_label.startswith(basis)
            assert basis in timer_line(view, 200).plain
            assert view.eta.basis_label == view.plan.basis_label
    finally:
        await session.close()
