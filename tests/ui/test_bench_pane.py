"""The benchmark pane in the real app against the simulated server on uvicorn.

The app tails the simulator's log and polls its health through a local host session, exactly as
``bringup watch --local`` does; when its own verdict becomes READY the pane fires (or asks, or
waits for ``b``), and the requests go through the session's port forward.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from textual.widgets import Footer, Static

from tests.net import serving
from tests.simserver import Sim
from tests.ui.fakes import FakeLink
from tests.ui.pilot_wait import until
from tui.app.bench.bench_pane import BenchAskScreen, BenchPane
from tui.app.bench.bench_state import BenchPhase
from tui.app.bench.compare_screen import CompareScreen
from tui.app.feed.engine_link import EngineAdapter
from tui.app.feed.feed_sources import ScriptedSource
from tui.app.feed.health_source import HealthSource
from tui.app.feed.session_source import SessionSource
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.view_model import Target
from tui.config import BenchConfig
from tui.engine.bench.level_fields import level_fields, level_from_fields
from tui.engine.bench.run_compare import Change
from tui.engine.startup.vocabulary import Outcome, Verdict
from tui.engine.timing.estimate import RunRecord
from tui.engine.timing.fingerprint import Fingerprint
from tui.io.bench.bench_setup import BenchOptions, BenchSetup
from tui.io.store.run_store import RunStore
from tui.io.transport.host_session import HostSession

SIM_FLAGS = [
    "--model-path", "Qwen/Qwen3-8B", "--time-scale", "0.002", "--decode-tok-s", "800",
    "--ttft-ms", "20", "--accept-len", "2.5", "--speculative-algorithm", "EAGLE3",
    "--speculative-draft-model-path", "lmsys/EAGLE3-draft", "--enable-metrics",
]  # fmt: skip
OUTPUT = 100


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    server = Sim(tmp_path_factory.mktemp("bench-sim"), SIM_FLAGS)
    try:
        server.wait_for("The server is fired up and ready to roll!")
        yield server
    finally:
        server.kill()


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("BRINGUP_DATA_DIR", raising=False)
    return tmp_path / "data"


def _app(
    sim: Sim, session: HostSession, data_dir: Path, mode: str = "auto", output_len: int = OUTPUT
) -> MonitorApp:
    config = BenchConfig(mode=mode, num_prompts=3, input_len=16, output_len=output_len,
                         concurrency=(1, 2))  # fmt: skip
    options = BenchOptions(config, profile="bench-test", data_dir=data_dir)
    app = MonitorApp(
        link=EngineAdapter("sglang"),
        source=SessionSource(session, str(sim.log)),
        target=Target("bench-test", "local"),
        health=HealthSource(session, sim.port, "sglang", interval=0.2),
        bench=BenchSetup(session, sim.port, "sglang", options, host="local"),
    )
    app.bench.settle = 0.3
    return app


def _text(app: MonitorApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def _ready(app: MonitorApp) -> bool:
    return app.last_view is not None and app.last_view.verdict is Verdict.READY


async def test_ready_fires_the_pane_then_b_runs_it_again(
    sim: Sim, session: HostSession, data_dir: Path
) -> None:
    app = _app(sim, session, data_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: app.bench.state.runs == 1, "the benchmark fired by itself")
        assert _ready(app)
        pane = app.screen.query_one(BenchPane)
        assert pane.has_class("-shown")
        await until(pilot, lambda: "c=1" in _text(app, "#bench-progress"), "progress shown")
        await until(pilot, lambda: app.bench.state.phase is BenchPhase.DONE, "results")
        table = _text(app, "#bench-table")
        assert "accept: client · server · log" in table
        assert "3/0" in table
        assert str(3 * OUTPUT) in table
        first, second = (level_fields(level) for level in app.bench.state.results)
        assert first["completed"] == 3
        assert first["total_output_tokens"] == first["client_output_tokens"] == 3 * OUTPUT
        assert first["accept_length"] == pytest.approx(2.5, rel=0.05)
        assert first["server_accept_basis"] == "differenced"
        assert first["server_accept_length"] == pytest.approx(2.5, rel=0.1)
        assert first["log_accept_samples"] > 0
        assert first["log_accept_length"] == pytest.approx(2.5, rel=0.25)
        assert second["max_concurrency"] == 2
        assert "saved with run #" in _text(app, "#bench-hint")
        await pilot.pause()
        hint = app.screen.query_one("#bench-hint", Static).region
        assert hint.height == 1
        assert hint.bottom <= app.screen.query_one(Footer).region.y  # not under the footer

        await pilot.press("b")
        await until(pilot, lambda: app.bench.state.runs == 2, "b started a second benchmark")
        await until(pilot, lambda: app.bench.state.phase is BenchPhase.DONE, "second results")
        assert "Benchmark #2" in _text(app, "#bench-title")

    with RunStore.open_default(configured=data_dir) as store:
        (run,) = store.runs()
        benches = store.bench_results(run_id=run.id)
    assert run.record.fingerprint.model == "Qwen/Qwen3-8B"
    assert run.record.fingerprint.drafter == "lmsys/EAGLE3-draft"
    assert run.record.total_seconds is not None
    assert sorted(b.concurrency for b in benches) == [1, 1, 2, 2]
    assert {b.profile for b in benches} == {"bench-test"}


async def test_failed_requests_are_counted_and_shown(
    sim: Sim, session: HostSession, data_dir: Path
) -> None:
    app = _app(sim, session, data_dir, output_len=10_000_000)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: app.bench.state.phase is BenchPhase.DONE, "results")
        assert [lv.failed for lv in app.bench.state.levels] == [3, 3]
        progress = _text(app, "#bench-progress")
        assert "3 failed" in progress
        assert "0/3" in _text(app, "#bench-table")
        errors = _text(app, "#bench-errors")
        assert "6 request(s) failed" in errors
        assert "HTTP 400" in errors
        assert "max_new_tokens" in errors


async def test_mode_off_waits_for_b(sim: Sim, session: HostSession, data_dir: Path) -> None:
    app = _app(sim, session, data_dir, mode="off")
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: "mode is off" in _text(app, "#bench-hint"), "off noted")
        for _ in range(5):
            await pilot.pause(0.05)
        assert app.bench.state.runs == 0
        assert _ready(app)
        await pilot.press("b")
        await until(pilot, lambda: app.bench.state.phase is BenchPhase.DONE, "b ran it")
        assert app.bench.state.runs == 1


async def test_ask_mode_asks_first(sim: Sim, session: HostSession, data_dir: Path) -> None:
    app = _app(sim, session, data_dir, mode="ask")
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, BenchAskScreen), "the question")
        assert app.bench.state.runs == 0
        assert app.bench.state.phase is BenchPhase.ASKING
        await pilot.press("n")
        await until(pilot, lambda: not isinstance(app.screen, BenchAskScreen), "answered")
        assert app.bench.state.runs == 0
        assert "not benchmarked" in _text(app, "#bench-hint")
        await pilot.press("b")
        await until(pilot, lambda: app.bench.state.phase is BenchPhase.DONE, "b ran it")


class HostileServer:
    """A server whose answers carry markup and terminal escapes: a stream that ends in an
    error object, then a plain 500."""

    ERROR = "[bold red]boom[/] \x1b]0;pwned\x07 [@click=app.quit]quit[/]"

    def __init__(self) -> None:
        self.calls = 0

    def app(self) -> Starlette:
        async def server_info(_: Request) -> Response:
            return JSONResponse({"internal_states": [{"avg_spec_accept_length": "[red]"}]})

        async def generate(_: Request) -> Response:
            self.calls += 1
            if self.calls % 2:
                return Response("[/models/llama] \x1b[31mred\x1b[0m", status_code=500)
            first = {"text": "a", "meta_info": {"completion_tokens": 1}}
            body = f"data: {json.dumps(first)}\n\ndata: {json.dumps({'error': self.ERROR})}\n\n"
            return Response(body, media_type="text/event-stream")

        return Starlette(routes=[Route("/server_info", server_info),
                                 Route("/generate", generate, methods=["POST"])])  # fmt: skip


@pytest.fixture
async def hostile_port() -> AsyncIterator[int]:
    async with serving(HostileServer().app()) as port:
        yield port


def _ready_app(session: HostSession, port: int, options: BenchOptions) -> MonitorApp:
    app = MonitorApp(
        link=FakeLink(verdict_value=Verdict.READY),
        source=ScriptedSource([b"ready\n"]),
        target=Target("bench-test", "local"),
        bench=BenchSetup(session, port, "sglang", options, host="local"),
    )
    app.bench.settle = 0.0
    return app


async def test_hostile_answers_are_shown_literally(
    hostile_port: int, session: HostSession, data_dir: Path
) -> None:
    config = BenchConfig(num_prompts=4, input_len=8, output_len=8, warmup_requests=0)
    app = _ready_app(session, hostile_port, BenchOptions(config, data_dir=data_dir))
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: app.bench.state.phase is BenchPhase.DONE, "results")
        errors = _text(app, "#bench-errors")
        assert "4 request(s) failed" in errors
        assert "[/models/llama]" in errors
        assert "[@click=app.quit]quit[/]" in errors
        assert "\x1b" not in errors
        assert "\x07" not in errors
        assert app.is_running


SUMMARY_ROWS = [
    ("Backend:", "sglang"), ("Successful requests:", "$done"), ("Benchmark duration (s):", "2.50"),
    ("Total generated tokens:", "512"), ("Request throughput (req/s):", "1.60"),
    ("Output token throughput (tok/s):", "$toks"), ("Accept length:", "2.41"),
]  # fmt: skip


def _stand_in_tool(venv: Path) -> None:
    """``python3`` in a virtual environment that prints a summary table the way
    ``sglang.bench_serving`` does, with one failed request and its concurrency in the figures."""
    rows = "\n".join(f"{label:<40} {value:<10}" for label, value in SUMMARY_ROWS)
    (venv / "bin").mkdir(parents=True)
    tool = venv / "bin" / "python3"
    tool.write_text(
        "#!/bin/sh\n"
        'while [ $# -gt 0 ]; do [ "$1" = --max-concurrency ] && c=$2; shift; done\n'
        "done=$((4 - 1)); toks=$((c * 100)).00\n"
        "printf '\\033]0;title\\007Waiting for the server...\\n'\n"
        f"echo '{'=' * 12} Serving Benchmark Result {'=' * 12}'\n"
        f"cat <<EOF\n{rows}\nEOF\n"
        f"echo '{'=' * 50}'\n"
    )
    tool.chmod(0o755)


async def test_official_mode_shows_the_engines_tool_beside_ours(
    sim: Sim, tmp_path: Path, session: HostSession, data_dir: Path
) -> None:
    venv = tmp_path / "venv"
    _stand_in_tool(venv)
    config = BenchConfig(num_prompts=4, input_len=16, output_len=OUTPUT, concurrency=(1, 4),
                         official=True)  # fmt: skip
    options = BenchOptions(config, profile="bench-test", data_dir=data_dir, venv=str(venv))
    app = _ready_app(session, sim.port, options)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: app.bench.state.phase is BenchPhase.DONE, "results")
        assert "then official sglang.bench_serving" in _text(app, "#bench-title")
        ours = [level_fields(level) for level in app.bench.state.results]
        assert [fields["completed"] for fields in ours] == [4, 4]
        first, second = (level_fields(level) for level in app.bench.state.official)
        assert (first["completed"], first["failed"]) == (3, 1)
        assert (first["output_throughput"], second["output_throughput"]) == (100.0, 400.0)
        assert first["server_accept_basis"] == "lifetime"
        lines = _text(app, "#bench-table").splitlines()
        tool_rows = [line for line in lines if "└ sglang" in line]
        assert len(tool_rows) == 2
        assert "3/1" in tool_rows[0]
        assert "100.0≠" in tool_rows[0]  # its tok/s is over a longer duration than ours
        assert "2.41 (lifetime) · -≠" in tool_rows[0]
        assert any("sglang defines it otherwise" in line for line in lines)
        assert any("tok/s: over a duration that also holds its /server_info" in line
                   for line in lines)  # fmt: skip
    with RunStore.open_default(configured=data_dir) as store:
        stored = store.bench_results(profile="bench-test")
    assert {b.endpoint for b in stored} == {"generate", "official"}
    assert sorted(b.concurrency for b in stored) == [1, 1, 4, 4]


async def test_official_mode_runs_the_open_loop_levels_too(
    sim: Sim, tmp_path: Path, session: HostSession, data_dir: Path
) -> None:
    venv = tmp_path / "venv"
    _stand_in_tool(venv)
    config = BenchConfig(num_prompts=4, input_len=16, output_len=OUTPUT, request_rate=(40.0,),
                         max_concurrency=2, official=True)  # fmt: skip
    options = BenchOptions(config, profile="bench-test", data_dir=data_dir, venv=str(venv))
    app = _ready_app(session, sim.port, options)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: app.bench.state.phase is BenchPhase.DONE, "results")
        (level,) = app.bench.state.levels
        assert level.label == "r=40 c<=2"
        assert level.official is not None
        assert (level.official.request_rate, level.official.concurrency) == (40.0, 2)
        assert level.official.output_throughput == 200.0  # the stand-in saw --max-concurrency 2
        lines = _text(app, "#bench-table").splitlines()
        assert len([line for line in lines if "└ sglang" in line]) == 1
    with RunStore.open_default(configured=data_dir) as store:
        stored = store.bench_results(profile="bench-test")
    assert sorted((b.endpoint, b.result.label) for b in stored) == [
        ("generate", "r=40 c<=2"), ("official", "r=40 c<=2"),
    ]  # fmt: skip


def _earlier_run(data_dir: Path, tok_s: float) -> int:
    """A run of the same profile recorded before, benchmarked at c=1 over three trials."""
    fields = {"max_concurrency": 1, "completed": 9, "failed": 0, "output_throughput": tok_s,
              "median_ttft_ms": 25.0, "median_tpot_ms": 1.25,
              "trials": {name: {"n": 3, "mean": m, "std": m * 0.01, "ci95": m * 0.025}
                         for name, m in (("output_throughput", tok_s), ("median_ttft_ms", 25.0),
                                         ("median_tpot_ms", 1.25))}}  # fmt: skip
    with RunStore.open_default(configured=data_dir) as store:
        fp = Fingerprint("sglang", None, "Qwen/Qwen3-8B")
        run_id = store.add_run(RunRecord(fp, Outcome.READY, 60.0, (), 1000.0, "bench-test"))
        store.add_bench(level_from_fields(fields), recorded_at=1010.0, run_id=run_id,
                        profile="bench-test", model="Qwen/Qwen3-8B")  # fmt: skip
    return run_id


async def test_t_adds_trials_to_the_chosen_level_and_tests_them_against_an_earlier_run(
    sim: Sim, session: HostSession, data_dir: Path
) -> None:
    earlier = _earlier_run(data_dir, tok_s=100.0)
    app = _app(sim, session, data_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: app.bench.state.phase is BenchPhase.DONE, "results")
        assert [level.label for level in app.bench.state.levels] == ["c=1", "c=2"]
        await pilot.press("v")
        assert app.bench.state.selected == "c=1"
        assert "t more trials of level c=1" in _text(app, "#bench-hint")
        assert "▸c=1" in _text(app, "#bench-table")
        before = app.bench.state.levels[0].figures
        assert before is not None
        earlier_records = before.records
        assert len(earlier_records) == 3

        await pilot.press("t")
        await until(pilot, lambda: app.bench.state.runs == 2, "t started more trials")
        assert "3 more trials" in _text(app, "#bench-title")
        await until(pilot, lambda: app.bench.state.verdicts is not None, "the verdict")
        one, two = app.bench.state.levels
        assert one.figures is not None
        assert two.figures is not None
        spread = one.figures.spread("output_throughput")
        assert spread is not None
        assert spread.n == 4  # the first trial and three more
        assert one.figures.completed == 4 * 3
        assert two.figures.spread("output_throughput") is None  # c=2 was left as it was
        row = next(line for line in _text(app, "#bench-table").splitlines() if "c=1" in line)
        assert "±" in row
        verdict = _text(app, "#bench-verdict")
        assert f"against #{earlier} " in verdict
        assert "Welch's t-test" in verdict
        rows = app.bench.state.verdicts or ()
        tok_s = next(row for row in rows if row.name == "tok/s @c=1")
        assert tok_s.cells[-1].judgement is Change.BETTER  # the sim is far faster than 100 tok/s
        assert "tok/s +" in verdict
        assert "▲" in verdict
    # The percentiles pool every request of the four trials: the first trial's three requests
    # and the nine of the three more, as computed here from the records.
    pooled = one.figures
    assert pooled.records[:3] == earlier_records
    assert len(pooled.records) == 12
    ttfts = [r.ttft * 1000.0 for r in pooled.records if r.ttft is not None]
    e2els = [r.latency * 1000.0 for r in pooled.records]
    assert len(ttfts) == 12
    assert pooled.ttft_ms.p99 == pytest.approx(_percentile(ttfts, 99.0))
    assert pooled.ttft_ms.median == pytest.approx(_percentile(ttfts, 50.0))
    assert pooled.e2el_ms.p90 == pytest.approx(_percentile(e2els, 90.0))
    with RunStore.open_default(configured=data_dir) as store:
        stored = [b.result for b in store.bench_results(profile="bench-test")]
    newest = next(level for level in stored if level.concurrency == 1 and level.trials)
    assert newest.completed == 12
    assert newest.ttft_ms.p99 == pytest.approx(pooled.ttft_ms.p99)
    assert newest.e2el_ms.p90 == pytest.approx(pooled.e2el_ms.p90)


def _percentile(values: list[float], p: float) -> float:
    """Linear interpolation between the closest ranks, as the benchmark documents it."""
    ordered = sorted(values)
    rank = (len(ordered) - 1) * p / 100.0
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (rank - low) * (ordered[high] - ordered[low])


async def test_t_in_the_comparison_tests_against_its_baseline(
    sim: Sim, session: HostSession, data_dir: Path
) -> None:
    earlier = _earlier_run(data_dir, tok_s=100.0)
    app = _app(sim, session, data_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: app.bench.state.phase is BenchPhase.DONE, "results")
        await pilot.press("c")
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await until(pilot, lambda: screen.loaded and len(screen.columns) == 2, "two runs")
        assert screen.columns[screen.baseline].run_id == earlier
        await pilot.press("t")
        await until(pilot, lambda: not isinstance(app.screen, CompareScreen), "closed")
        await until(pilot, lambda: app.bench.state.verdicts is not None, "the verdict")
        assert app.bench.baseline_run == earlier
        spreads = [
            lv.figures.spread("output_throughput") for lv in app.bench.state.levels if lv.figures
        ]
        assert [s.n if s else None for s in spreads] == [4, 4]  # every level got more trials
        assert f"against #{earlier} " in _text(app, "#bench-verdict")


async def test_open_loop_levels_run_in_the_pane(
    sim: Sim, session: HostSession, data_dir: Path
) -> None:
    config = BenchConfig(num_prompts=4, input_len=16, output_len=OUTPUT, request_rate=(40.0,),
                         max_concurrency=2)  # fmt: skip
    options = BenchOptions(config, profile="bench-test", data_dir=data_dir)
    app = _ready_app(session, sim.port, options)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: "r=40 c<=2" in _text(app, "#bench-progress"), "progress")
        await until(pilot, lambda: app.bench.state.phase is BenchPhase.DONE, "results")
        assert "r=40 c<=2" in _text(app, "#bench-title")
        (figures,) = app.bench.state.results
        assert figures.request_rate == 40.0
        assert figures.completed == 4
        assert "r=40 c<=2" in _text(app, "#bench-table")
    with RunStore.open_default(configured=data_dir) as store:
        (stored,) = store.bench_results(profile="bench-test")
    assert stored.result.request_rate == 40.0
