"""The rank panel shows a compile or JIT phase at work in the rank's stage."""

from __future__ import annotations

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
