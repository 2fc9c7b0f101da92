"""GPU widgets in a running app: a rank's GPU line, the header total, the map, no telemetry."""

from __future__ import annotations

from dataclasses import replace

import pytest
from textual.app import App, ComposeResult

from tui.app.monitor.themes import SEMANTIC_DEFAULTS
from tui.app.widgets.gpu_widgets import (
    GpuGauge,
    GpuMapList,
    GpuSummary,
    GpuTelemetryUpdated,
    RankGpuView,
    panel_line,
    rank_gpu_view,
    sparkline,
)
from tui.app.widgets.rank_panel import RankCard, RankPanel
from tui.engine.gpu.gpu_csv import GpuBatch, GpuSample, NoTelemetry, NoTelemetryKind
from tui.engine.gpu.gpu_map import LaunchLayout, MapSource, RankGpu, map_ranks
from tui.engine.gpu.gpu_state import GpuSnapshot, GpuTelemetry
from tui.engine.startup.snapshot import RankState

TOTAL = 143771.0


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class GpuApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.received: list[GpuSnapshot] = []

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(SEMANTIC_DEFAULTS)

    def compose(self) -> ComposeResult:
        yield GpuSummary(id="summary")
        yield GpuGauge(id="gauge")
        yield GpuMapList(id="map")

    def on_gpu_telemetry_updated(self, message: GpuTelemetryUpdated) -> None:
        self.received.append(message.snapshot)


def _telemetry(clock: Clock, name: str = "NVIDIA H200") -> GpuTelemetry:
    model = GpuTelemetry(clock)
    for step, used in enumerate((0.0, 5647.0, 41487.0, 102927.0, 103411.0)):
        clock.now += 0.5
        samples = tuple(
            GpuSample(
                index=i,
                uuid=f"GPU-{i}",
                name=name,
                memory_used_mib=used,
                memory_total_mib=TOTAL,
                util_pct=100.0 if step == 4 else 0.0,
                power_w=690.4 if step == 4 else 118.0,
            )
            for i in range(8)
        )
        model.apply(GpuBatch(samples))
    return model


def _text(app: GpuApp, selector: str) -> str:
    widget = app.query_one(selector)
    rendered = widget.render()
    assert hasattr(rendered, "plain")
    return str(rendered.plain)


async def test_rank_gauge_shows_memory_sparkline_util_power_and_log_memory() -> None:
    clock = Clock()
    snapshot = _telemetry(clock).snapshot()
    placements = map_ranks(
        ["TP0", "TP3"], gpus=[g.sample for g in snapshot.gpus], layout=LaunchLayout(tp_size=8)
    )
    rank = RankState(tag="TP3", avail_gb=38.2)
    app = GpuApp()
    async with app.run_test(size=(80, 12)) as pilot:
        app.query_one(GpuGauge).show(rank_gpu_view(rank, snapshot, placements, clock.now))
        await pilot.pause()
        text = _text(app, "#gauge")
    first, second = text.splitlines()
    # Memory against the GPU's total: empty, a shard, weights, then KV cache at 72 %.
    assert first == "GPU 3 101.0/140.4G   ▂▆▆ 100% 690W"
    assert second == "free 39.4G GPU · avail 38.2G log"


async def test_header_summary_totals_every_gpu() -> None:
    clock = Clock()
    snapshot = _telemetry(clock).snapshot()
    app = GpuApp()
    async with app.run_test(size=(80, 12)) as pilot:
        app.query_one(GpuSummary).show(snapshot, clock.now)
        await pilot.pause()
        assert _text(app, "#summary") == "GPU 807.9/1123.2G · 8 GPUs · util 100%"
        app.query_one(GpuSummary).show(snapshot, clock.now + 60)
        await pilot.pause()
        assert _text(app, "#summary").endswith(" · stale")


@pytest.mark.parametrize(
    ("missing", "expected"),
    [
        (NoTelemetry(NoTelemetryKind.NOT_INSTALLED), "nvidia-smi not found on the host"),
        (
            NoTelemetry(NoTelemetryKind.DRIVER, "NVIDIA-SMI has failed"),
            "nvidia-smi cannot talk to the NVIDIA driver: NVIDIA-SMI has failed",
        ),
        (NoTelemetry(NoTelemetryKind.NO_DEVICES), "no NVIDIA GPU found on the host"),
    ],
)
async def test_no_telemetry_state_names_the_reason(missing: NoTelemetry, expected: str) -> None:
    model = GpuTelemetry(Clock())
    model.lost(missing)
    snapshot = model.snapshot()
    placement = RankGpu("TP0", 0, MapSource.ORDER)
    app = GpuApp()
    async with app.run_test(size=(120, 12)) as pilot:
        app.query_one(GpuSummary).show(snapshot, 0.0)
        view = rank_gpu_view(RankState(tag="TP0", avail_gb=70.0), snapshot, [placement], 0.0)
        app.query_one(GpuGauge).show(view)
        await pilot.pause()
        assert _text(app, "#summary") == f"GPU no telemetry ({expected})"
        assert _text(app, "#gauge") == f"GPU 0? no telemetry ({expected})"


async def test_lost_stream_keeps_last_figures_marked_stale() -> None:
    clock = Clock()
    model = _telemetry(clock)
    model.lost(NoTelemetry(NoTelemetryKind.ENDED))
    snapshot = model.snapshot()
    view = rank_gpu_view(
        RankState(tag="TP1"), snapshot, [RankGpu("TP1", 1, MapSource.LAUNCH)], clock.now
    )
    app = GpuApp()
    async with app.run_test(size=(80, 12)) as pilot:
        app.query_one(GpuGauge).show(view)
        app.query_one(GpuSummary).show(snapshot, clock.now)
        await pilot.pause()
        assert _text(app, "#gauge").endswith(" stale")
        assert _text(app, "#summary").endswith("stale: the telemetry stream ended")


async def test_markup_and_escapes_from_the_host_render_verbatim() -> None:
    hostile = "[@click=app.quit]x[/] [/models/llama] \x1b]0;PWNED\x07"
    model = GpuTelemetry(Clock())
    model.lost(NoTelemetry(NoTelemetryKind.UNREADABLE, hostile))
    placement = RankGpu("[b]TP0[/b]", None, MapSource.ORDER, "[red]note[/red]")
    app = GpuApp()
    async with app.run_test(size=(160, 12)) as pilot:
        app.query_one(GpuSummary).show(model.snapshot(), 0.0)
        app.query_one(GpuMapList).show([placement])
        await pilot.pause()
        summary = _text(app, "#summary")
        assert "[@click=app.quit]x[/] [/models/llama]" in summary
        assert "\x1b" not in summary
        assert _text(app, "#map") == "[b]TP0[/b] → GPU ?  order: [red]note[/red]"
        assert app.is_running


async def test_map_list_shows_each_rank_source_and_evidence() -> None:
    gpus = [GpuSample(index=i) for i in range(8)]
    layout = LaunchLayout(cuda_visible_devices="4,5,6,7", tp_size=4)
    placements = map_ranks(["TP0", "TP1"], gpus=gpus, layout=layout, override={"TP1": 2})
    app = GpuApp()
    async with app.run_test(size=(100, 12)) as pilot:
        app.query_one(GpuMapList).show(placements)
        await pilot.pause()
        assert _text(app, "#map").splitlines() == [
            "TP0 → GPU 4  launch: device 0 of CUDA_VISIBLE_DEVICES=4,5,6,7",
            "TP1 → GPU 2  override: gpu_map",
        ]


async def test_snapshot_message_is_posted_and_superseded() -> None:
    app = GpuApp()
    async with app.run_test(size=(80, 12)) as pilot:
        app.post_message(GpuTelemetryUpdated(GpuSnapshot(samples=1)))
        app.post_message(GpuTelemetryUpdated(GpuSnapshot(samples=2)))
        await pilot.pause()
        assert app.received[-1].samples == 2


def test_sparkline_spans_the_history_against_the_total() -> None:
    assert sparkline([], 10) == ""
    assert sparkline([0.0, 50.0, 100.0], 10, top=100.0) == " ▄█"
    assert sparkline([float(i) for i in range(100)], 4, top=99.0) == "▂▄▆█"
    assert len(sparkline([1.0] * 500, 24)) == 24


def test_gauge_before_any_view_waits() -> None:
    gauge = GpuGauge()
    assert gauge.render().plain == "GPU ? waiting for telemetry"
    assert gauge.view is None
    assert RankGpuView(None, None).gpu is None


class PanelApp(App[None]):
    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(SEMANTIC_DEFAULTS)

    def compose(self) -> ComposeResult:
        yield RankPanel("TP3")


async def test_rank_panel_shows_the_gpu_beside_the_logs_memory() -> None:
    clock = Clock()
    snapshot = _telemetry(clock).snapshot()
    rank = RankState(tag="TP3", avail_gb=38.2, used_gb=97.0)
    placements = [RankGpu("TP3", 3, MapSource.LAUNCH)]
    app = PanelApp()
    async with app.run_test(size=(60, 8)) as pilot:
        panel = app.query_one(RankPanel)
        panel.show(RankCard(rank=rank, seconds_in_stage=5))
        await pilot.pause()
        assert "avail 38.2G  used 97.0G" in panel.render_text()
        view = rank_gpu_view(rank, snapshot, placements, clock.now)
        panel.show(RankCard(rank=rank, seconds_in_stage=5, gpu=view))
        await pilot.pause()
        memory = panel.render_text().splitlines()[2]
        assert memory == "GPU 3 101.0/140.4G   ▂▆▆ 100% 690W · avail 38.2G"


def test_panel_line_gives_up_power_then_sparkline_when_narrow() -> None:
    clock = Clock()
    snapshot = _telemetry(clock).snapshot()
    rank = RankState(tag="TP3", avail_gb=38.2)
    view = rank_gpu_view(rank, snapshot, [RankGpu("TP3", 3, MapSource.LAUNCH)], clock.now)
    narrow = panel_line(view, 30)
    assert narrow is not None
    assert narrow.plain == "GPU 3 101.0/140.4G   ▂▆▆ 100%"
    narrower = panel_line(view, 26)
    assert narrower is not None
    assert narrower.plain == "GPU 3 101.0/140.4G  ▆ 100%"
    assert panel_line(RankGpuView(None, None), 40) is None
    assert panel_line(None, 40) is None


def test_mig_gpu_without_utilisation_says_so() -> None:
    mig = GpuSample(
        index=0,
        memory_used_mib=1024.0,
        memory_total_mib=81920.0,
        missing=(("utilization.gpu", "N/A"), ("power.draw", "N/A")),
    )
    model = GpuTelemetry(Clock())
    model.apply(GpuBatch((mig,)))
    snapshot = model.snapshot()
    view = rank_gpu_view(
        RankState(tag="TP0"),
        snapshot,
        [RankGpu("TP0", 0, MapSource.LAUNCH)],
        snapshot.seen_at or 0.0,
    )
    line = panel_line(view, 40)
    assert line is not None
    assert line.plain == "GPU 0 1.0/80.0G   util n/a"  # 1 of 80 GiB rounds to blank


def _screen_row(app: GpuApp, row: int) -> str:
    strips = app.screen._compositor.render_strips()
    return "".join(segment.text for segment in strips[row]).rstrip()


async def test_header_summary_repaints_each_change_in_place() -> None:
    clock = Clock()
    model = _telemetry(clock)
    app = GpuApp()
    async with app.run_test(size=(80, 12)) as pilot:
        summary = app.query_one(GpuSummary)
        summary.show(model.snapshot(), clock.now)
        await pilot.pause()
        assert _screen_row(app, 0) == "GPU 807.9/1123.2G · 8 GPUs · util 100%"
        width = summary.size.width
        # The same width, other figures: repainted in place.
        busy = tuple(gpu.sample for gpu in model.snapshot().gpus)
        model.apply(GpuBatch(tuple(replace(s, memory_used_mib=104000.0) for s in busy)))
        summary.show(model.snapshot(), clock.now)
        await pilot.pause()
        assert _screen_row(app, 0) == "GPU 812.5/1123.2G · 8 GPUs · util 100%"
        assert summary.size.width == width
        # A shorter line: repainted, the widget keeps its row's width.
        model.apply(GpuBatch(tuple(replace(s, util_pct=5.0) for s in busy)))
        summary.show(model.snapshot(), clock.now)
        await pilot.pause()
        assert _screen_row(app, 0) == "GPU 807.9/1123.2G · 8 GPUs · util 5%"
        assert summary.size.width == width == 80
