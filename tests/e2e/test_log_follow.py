"""The log view of the real ``bringup watch --local --log F`` in a real tmux pane keeps following
however long the log and however fast it grows, and keeps its place while paused."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tmux import QUIT_SECONDS, Pane, gone, private_pane

pytestmark = [pytest.mark.tmux, pytest.mark.slow]

RANKS = 8


def _lines(start: int, count: int, tag: str = "line") -> bytes:
    """``count`` lines of 8 ranks, round-robin, numbered from ``start``."""
    return b"".join(
        b"[2026-03-01 10:00:10 TP%d] %s %07d loaded layer %d\n"
        % (n % RANKS, tag.encode(), n, n % 61)
        for n in range(start, start + count)
    )


@pytest.fixture
def pane() -> Iterator[Pane]:
    with private_pane("bringup-logfollow", "watch") as made:
        yield made


def _watch(pane: Pane, log: Path, tmp_path: Path) -> None:
    env = {"TERM": "tmux-256color", "BRINGUP_DATA_DIR": str(tmp_path / "data")}
    pane.start([sys.executable, "-m", "tui", "watch", "--local", "--log", str(log)], env)
    pane.wait_for("TP7")
    pane.tmux("send-keys", "-t", pane.name, "l")
    pane.wait_for("log · all ranks")


def _append(log: Path, data: bytes) -> None:
    with log.open("ab") as handle:
        handle.write(data)


def test_opened_on_a_long_log_it_follows_what_arrives(pane: Pane, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(_lines(0, 100_000))
    _watch(pane, log, tmp_path)
    pane.wait_for("line 0099999", "following")
    for round_ in range(3):
        _append(log, _lines(100_000 + round_ * 500, 500, tag=f"more{round_}"))
        pane.wait_for(f"more{round_} {100_000 + round_ * 500 + 499:07d}", timeout=60)


def test_a_burst_ends_with_its_last_line_on_screen(pane: Pane, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(_lines(0, 100))
    _watch(pane, log, tmp_path)
    pane.wait_for("line 0000099")
    burst = _lines(100, 50_000)
    with log.open("ab") as handle:
        for at in range(0, len(burst), 65536):
            handle.write(burst[at : at + 65536])
            handle.flush()
        handle.write(b"[2026-03-01 10:00:11 TP3] the final marker line\n")
    screen = pane.wait_for("the final marker line", timeout=60)
    assert "line 0050099" in screen, "the lines just before the marker are on screen too"


def test_paused_it_keeps_its_place_while_lines_arrive(pane: Pane, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(_lines(0, 30_000))
    _watch(pane, log, tmp_path)
    pane.wait_for("line 0029999", "following")
    pane.tmux("send-keys", "-t", pane.name, "f")
    before = _rows(pane.wait_for("paused, 0 new"))
    _append(log, _lines(30_000, 5_000, tag="later"))
    after = _rows(pane.wait_for("paused, 5,000 new", timeout=60))
    assert after == before, "the rows on screen did not move"
    assert "later" not in "\n".join(after)
    pane.tmux("send-keys", "-t", pane.name, "f")
    pane.wait_for("later 0034999", "following", timeout=60)


def _rows(screen: str) -> list[str]:
    """The log rows of the pane: below the status line, above the footer, left of the
    scroll bar (whose thumb moves as the log grows)."""
    return [row[:100].rstrip() for row in screen.splitlines()[1:-1]]


def test_the_demos_log_hides_the_monitors_own_requests_until_asked(
    pane: Pane, tmp_path: Path
) -> None:
    private = tmp_path / "tmp"
    private.mkdir()
    env = {"TMPDIR": str(private), "TERM": "tmux-256color", "BRINGUP_DATA_DIR": str(tmp_path)}
    pane.start([sys.executable, "-m", "tui", "demo"], env)
    pid = pane.pid()
    pane.wait_for("READY", "generation ok")
    pane.tmux("send-keys", "-t", pane.name, "l")
    screen = pane.wait_for("monitor lines hidden", timeout=60)
    assert "from=bringup" not in screen
    pane.tmux("send-keys", "-t", pane.name, "m")
    pane.wait_for("monitor traffic shown", "GET /health?from=bringup", timeout=60)
    pane.tmux("send-keys", "-t", pane.name, "m")
    pane.wait_for("monitor lines hidden", timeout=60)
    pane.tmux("send-keys", "-t", pane.name, "q")
    deadline = time.monotonic() + QUIT_SECONDS
    while time.monotonic() < deadline and not gone(pid):
        time.sleep(0.2)
    assert gone(pid), "the demo exited after q"
