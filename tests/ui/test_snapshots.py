"""Screens of the monitor, fed real log bytes through the real engine, at three sizes."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.ui.monitor_factory import HEALTH_503, READY_HEALTH, at_phase, make_monitor

Compare = Callable[..., bool]
SIZES = [(80, 24), (160, 48), (240, 70)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("ranks", [1, 8, 16])
def test_mid_start(snap_compare: Compare, size: tuple[int, int], ranks: int) -> None:
    app, clock = make_monitor()
    run_before = at_phase(app, clock, ranks, "weights")
    assert snap_compare(app, terminal_size=size, run_before=run_before)


def test_connecting(snap_compare: Compare) -> None:
    app, _ = make_monitor()
    assert snap_compare(app, terminal_size=(80, 24))


def test_graph_capture(snap_compare: Compare) -> None:
    app, clock = make_monitor()
    assert snap_compare(app, terminal_size=(160, 48), run_before=at_phase(app, clock, 8, "graphs"))


def test_ready(snap_compare: Compare) -> None:
    app, clock = make_monitor()
    run_before = at_phase(app, clock, 8, "ready", health=READY_HEALTH)
    assert snap_compare(app, terminal_size=(160, 48), run_before=run_before)


def test_ready_line_but_health_503_is_a_disagreement(snap_compare: Compare) -> None:
    app, clock = make_monitor()
    run_before = at_phase(app, clock, 8, "ready", health=HEALTH_503)
    assert snap_compare(app, terminal_size=(160, 48), run_before=run_before)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_failed(snap_compare: Compare, size: tuple[int, int]) -> None:
    app, clock = make_monitor()
    run_before = at_phase(app, clock, 8, "graphs", failed=True)
    assert snap_compare(app, terminal_size=size, run_before=run_before)
