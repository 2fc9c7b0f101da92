"""The rank panel shows a compile or JIT phase at work in the rank's stage."""

from __future__ import annotations

from collections.abc import Callable

from textual.app import App, ComposeResult

from tui.app.monitor.themes import SEMANTIC_DEFAULTS
from tui.app.widgets.rank_panel import RankCard, RankPanel
from tui.engine.startup.snapshot import PhaseState, Progress, RankState
from tui.engine.startup.vocabulary import Phase, Stage


class _PanelApp(App[None]):
    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(SEMANTIC_DEFAULTS)

    def compose(self) -> ComposeResult:
        yield RankPanel("TP0")


def _rank(phase: PhaseState | None) -> RankState:
    bar = Progress(1, 9, "Capturing batches (bs=24 avail_mem=11.91 GB)")
    return RankState("TP0", stage=Stage.CUDA_GRAPH, progress=bar, phase=phase)


async def test_a_running_phase_replaces_the_stage_bar_and_an_idle_one_gives_it_back() -> None:
    building = PhaseState(Phase.AITER_BUILD, Stage.CUDA_GRAPH, 0.0, 0.0, 3, detail="module_moe")
    async with _PanelApp().run_test(size=(80, 8)) as pilot:
        panel = pilot.app.query_one(RankPanel)
        panel.show(RankCard(_rank(building), 10))
        await pilot.pause()
        assert "AITER build 3 done (module_moe)" in panel.render_text()
        panel.show(RankCard(_rank(PhaseState(Phase.DEEPGEMM_JIT, Stage.CUDA_GRAPH, 0.0, 0.0, 40,
                                             total=128)), 11))  # fmt: skip
        await pilot.pause()
        assert "DeepGEMM JIT 40/128" in panel.render_text()
        idle = PhaseState(Phase.AITER_BUILD, Stage.CUDA_GRAPH, 0.0, 0.0, 3, running=False)
        panel.show(RankCard(_rank(idle), 12))
        await pilot.pause()
        assert "1/9" in panel.render_text()


class _CompactApp(App[None]):
    """Four compact panels, as the rank grid lays out many ranks: two in a phase."""

    CSS = "RankPanel { height: 2; width: 26; }"

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(SEMANTIC_DEFAULTS)

    def compose(self) -> ComposeResult:
        for tag in ("TP0", "TP1", "TP2", "TP3"):
            panel = RankPanel(tag)
            panel.add_class("-compact")
            yield panel

    def on_mount(self) -> None:
        jit = PhaseState(Phase.DEEPGEMM_JIT, Stage.CUDA_GRAPH, 0.0, 0.0, 3, total=8)
        build = PhaseState(Phase.AITER_BUILD, Stage.CUDA_GRAPH, 0.0, 0.0, 2, detail="module_x")
        ended = PhaseState(Phase.TORCH_COMPILE, Stage.CUDA_GRAPH, 0.0, 0.0, 4, running=False)
        for panel, phase in zip(self.query(RankPanel), (jit, build, ended, None), strict=True):
            rank = _rank(phase)
            panel.show(RankCard(RankState(panel.tag, stage=rank.stage, progress=rank.progress,
                                          phase=phase), 30))  # fmt: skip


async def test_a_compact_panel_names_the_phase_and_its_count() -> None:
    async with _CompactApp().run_test(size=(30, 10)) as pilot:
        await pilot.pause()
        shown = [panel.render_text() for panel in pilot.app.query(RankPanel)]
        assert "JIT 3/8" in shown[0]
        assert "build 2" in shown[1]
        assert shown[2].splitlines()[1].endswith("1/9")  # an ended phase gives the bar back
        assert shown[3].splitlines()[1].endswith("1/9")


def test_compact_panels_with_phases(snap_compare: Callable[..., bool]) -> None:
    assert snap_compare(_CompactApp(), terminal_size=(30, 10))
