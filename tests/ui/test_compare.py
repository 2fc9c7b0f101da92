"""The comparison view (``c``) over a real history file, and ``bringup runs`` over the same."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from textual.widgets import Footer, Static

from tests.ui.fakes import FakeLink
from tests.ui.pilot_wait import until
from tui.app.bench.compare_screen import CompareScreen
from tui.app.feed.feed_sources import ScriptedSource
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.view_model import Target
from tui.commands import runs as runs_command
from tui.config import BenchConfig
from tui.engine.bench.level_fields import level_from_fields
from tui.engine.bench.level_key import LevelKey
from tui.engine.startup.snapshot import ServerInfo, Snapshot
from tui.engine.startup.vocabulary import Outcome, Verdict
from tui.engine.timing.estimate import RunRecord
from tui.engine.timing.fingerprint import Fingerprint
from tui.io.bench.bench_setup import BenchOptions, BenchSetup
from tui.io.store.run_records import Scope, load_columns
from tui.io.store.run_store import RunStore
from tui.io.transport.host_session import HostSession, LocalConnector

MODEL = "moonshotai/Kimi-K2.5"
HOSTILE_DRAFTER = "[bold red]draft[/] \x1b]0;pwned\x07"


def _level(concurrency: int, tok_s: float, ttft: float, accept: float) -> dict[str, object]:
    return {
        "max_concurrency": concurrency, "completed": 8, "failed": 0,
        "output_throughput": tok_s, "median_ttft_ms": ttft, "accept_length": accept,
        "server_accept_length": accept - 0.05, "server_accept_basis": "differenced",
        "log_accept_length": accept + 0.02, "log_accept_samples": 12,
        "total_output_tokens": 2048, "client_output_tokens": 2048,
        "trials": {name: {"n": 3, "mean": m, "std": m * 0.001, "ci95": m * 0.0025}
                   for name, m in (("output_throughput", tok_s), ("median_ttft_ms", ttft),
                                   ("accept_length", accept))},
    }  # fmt: skip


def _populate(data_dir: Path, drafter: str = "lmsys/eagle3") -> list[int]:
    """Two runs of the same profile and model; the second starts faster and decodes faster."""
    ids = []
    with RunStore.open_default(configured=data_dir) as store:
        for n, (startup, tok_s) in enumerate(((600.0, 100.0), (540.0, 125.0))):
            fp = Fingerprint("sglang", "0.5.23", MODEL, drafter, "EAGLE3", tp=8, host="gpu1")
            record = RunRecord(fp, Outcome.READY, startup, (), 1000.0 + n * 100, "kimi")
            run_id = store.add_run(record)
            for concurrency, factor in ((1, 1.0), (4, 3.5)):
                fields = _level(concurrency, tok_s * factor, 150.0 + n * 10, 2.5 + n * 0.1)
                store.add_bench(level_from_fields(fields), recorded_at=1000.0 + n * 100 + 50,
                                run_id=run_id, profile="kimi", model=MODEL)  # fmt: skip
            ids.append(run_id)
    return ids


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("BRINGUP_DATA_DIR", raising=False)
    return tmp_path / "data"


def _app(data_dir: Path) -> MonitorApp:
    snapshot = Snapshot(server=ServerInfo(engine="sglang", model=MODEL))
    options = BenchOptions(BenchConfig(mode="off"), profile="kimi", data_dir=data_dir)
    return MonitorApp(
        link=FakeLink(snapshot, Verdict.STARTING),
        source=ScriptedSource([b"starting\n"]),
        target=Target("kimi", "gpu1"),
        bench=BenchSetup(HostSession(LocalConnector()), 30000, "sglang", options, host="gpu1"),
    )


def _table(screen: CompareScreen) -> str:
    return str(screen.query_one("#compare-table", Static).render())


async def test_c_shows_two_runs_with_deltas_against_a_chosen_baseline(data_dir: Path) -> None:
    first, second = _populate(data_dir)
    app = _app(data_dir)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("c")
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await until(pilot, lambda: screen.loaded)
        await pilot.pause()
        assert screen.query_one("#compare-table", Static).region.y >= 1
        assert screen.query_one(Footer).region.height == 1
        table = _table(screen)
        assert f"#{first} " in table
        assert f"#{second} " in table
        assert "start-up (s)" in table
        assert "-10.0% ▲" in table  # 540 s against 600 s
        assert "+25.0% ▲" in table  # tok/s at c=1
        assert "tok/s @c=4" in table
        assert "TTFT ms @c=1" in table
        assert "accept length" in table
        assert "+4.0% ▲" in table  # 2.6 against 2.5
        assert "Runs of profile kimi" in str(screen.query_one("#compare-title", Static).render())

        await pilot.press("b")  # the cursor starts on the newest run: make it the baseline
        table = _table(screen)
        assert "+11.1% ▼" in table  # the first run's start-up against the second's
        assert "-20.0% ▼" in table

        await pilot.press("m")
        await until(pilot, lambda: screen.loaded and screen.scope_index == 1)
        assert f"Runs of model {MODEL}" in str(screen.query_one("#compare-title", Static).render())
        assert len(screen.columns) == 2

        await pilot.press("escape")
        assert not isinstance(app.screen, CompareScreen)


async def test_hostile_launch_text_is_shown_literally(data_dir: Path) -> None:
    _populate(data_dir, drafter=HOSTILE_DRAFTER)
    app = _app(data_dir)
    async with app.run_test(size=(200, 36)) as pilot:
        await pilot.press("c")
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await until(pilot, lambda: screen.loaded)
        table = _table(screen)
        assert "[bold red]draft" in table
        assert "\x1b" not in table
        assert app.is_running


async def test_no_runs_yet_says_so(data_dir: Path) -> None:
    app = _app(data_dir)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("c")
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await until(pilot, lambda: screen.loaded)
        assert "No recorded runs" in _table(screen)


def test_loose_and_unready_runs_are_left_out(data_dir: Path) -> None:
    first, second = _populate(data_dir)
    with RunStore.open_default(configured=data_dir) as store:
        fp = Fingerprint("sglang", None, MODEL)
        store.add_run(RunRecord(fp, Outcome.FAILED, None, (), 2000.0, "kimi"))
        store.add_bench(
            level_from_fields(_level(1, 1.0, 1.0, 1.0)), recorded_at=2100.0, model=MODEL
        )
    columns = load_columns(data_dir, Scope("profile", "kimi"))
    assert [c.run_id for c in columns] == [first, second]
    assert columns[0].levels[LevelKey.closed(4)].output_throughput == 350.0


def test_bringup_runs_shows_the_app_s_records(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    first, _second = _populate(data_dir)
    monkeypatch.setenv("BRINGUP_DATA_DIR", str(data_dir))
    monkeypatch.delenv("BRINGUP_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(data_dir / "no-config"))
    args = argparse.Namespace(profile="kimi", config=None, limit=None, benchmarks=False,
                              json=True, csv=False)  # fmt: skip
    assert runs_command.run(args) == 0
    exported = json.loads(capsys.readouterr().out)
    run = next(r for r in exported["runs"] if r["id"] == first)
    assert run["model"] == MODEL
    assert run["total_seconds"] == 600.0
    level = next(b for b in run["benchmarks"] if b["max_concurrency"] == 1)
    assert level["log_accept_length"] == pytest.approx(2.52)
    assert level["server_accept_basis"] == "differenced"
    args.json, args.csv, args.benchmarks = False, True, True
    assert runs_command.run(args) == 0
    rows = capsys.readouterr().out.splitlines()
    assert len(rows) == 5  # the header and four levels
    assert "log_accept_length" in rows[0].split(",")
    assert "2.52" in rows[-1]
