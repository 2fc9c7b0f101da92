"""A third engine added as a dialect alone: detection, ``bringup replay`` and the rank panels.

The toy engine logs ``TOY rank=N | message``. Everything it needs is in this module: its
dialect, and its registration for the length of a test. No other module knows it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ui.fakes import FakeClock
from tests.ui.pilot_wait import until
from tui.app.feed.engine_link import EngineAdapter
from tui.app.feed.feed_sources import ScriptedSource
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.view_model import Target
from tui.app.widgets.rank_panel import RankPanel
from tui.cli import main
from tui.engine.logs.log_engine import LogEngine
from tui.engine.servers import registry
from tui.engine.servers.dialect import (
    BenchTool,
    Dialect,
    FastPath,
    GenerationProbe,
    MetricNames,
    StartupTraits,
)
from tui.engine.servers.hits import Hit, Marker, Parsed, StageHit
from tui.engine.startup import log_events as ev
from tui.engine.startup.vocabulary import Outcome, Stage

_ENVELOPE = re.compile(r"TOY rank=(\d+) \| ")
_MILESTONES: tuple[tuple[str, tuple[Hit, ...]], ...] = (
    ("loading weights", (StageHit(Stage.WEIGHT_LOADING, "load"),)),
    ("allocating kv cache", (StageHit(Stage.KV_CACHE, "kv"),)),
    ("capturing graphs", (StageHit(Stage.CUDA_GRAPH, "graph"),)),
    ("ready to serve", (Marker.READY,)),
)


def _milestone(msg: str) -> tuple[Hit, ...]:
    return next((hits for head, hits in _MILESTONES if msg.startswith(head)), ())


def _read_toy(line: str) -> Parsed | None:
    match = _ENVELOPE.match(line)
    if match is None:
        return None
    msg = line[match.end() :]
    return Parsed(f"rank{match[1]}", None, msg, _milestone(msg), "toy")


class ToyDialect:
    name = "toy"
    default_port = 9999
    native_endpoint = "completions"
    fast_path = FastPath.NONE
    traits = StartupTraits()
    health_path = "/ping"
    generation = GenerationProbe("/toy/generate", "prompt", {"tokens": 1})
    bench_tool = BenchTool("toy-bench", ("toy-bench",), "toy", "--warmups")
    metric_names = MetricNames(running=("toy:requests_running",))
    read_line = staticmethod(_read_toy)

    def message_hits(self, msg: str) -> tuple[Hit, ...]:
        return _milestone(msg)

    def process_titles(self, tag: str) -> tuple[str, ...]:
        return (f"toy::{tag}",)


TOY_LOG = "".join(
    f"TOY rank={rank} | {message}\n"
    for message in ("starting", "loading weights", "allocating kv cache", "capturing graphs")
    for rank in range(2)
)
READY_LOG = TOY_LOG + "TOY rank=0 | ready to serve on port 9999\n"


@pytest.fixture
def toy() -> Iterator[Dialect]:
    with registry.registered(ToyDialect()) as dialect:
        yield dialect


def test_the_first_toy_line_names_the_engine(toy: Dialect) -> None:
    engine = LogEngine("auto", clock=lambda: 100.0)
    update = engine.feed(READY_LOG.encode())
    assert engine.engine == "toy"
    detected = [event for event in update.events if isinstance(event, ev.EngineDetected)]
    assert [(event.line, event.engine) for event in detected] == [(1, "toy")]
    snapshot = engine.finish().snapshot
    assert [rank.tag for rank in snapshot.ranks] == ["rank0", "rank1"]
    assert snapshot.outcome is Outcome.READY


def test_the_registry_knows_the_toy_only_while_it_is_registered(toy: Dialect) -> None:
    assert registry.find("toy") is toy
    assert registry.names()[-1] == "toy"
    assert registry.process_titles("toy", "rank1") == ("toy::rank1",)
    assert registry.generation_probes("toy") == (toy.generation,)


def test_without_the_toy_its_lines_name_no_engine() -> None:
    assert registry.find("toy") is None
    engine = LogEngine("auto", clock=lambda: 100.0)
    engine.feed(READY_LOG.encode())
    assert engine.engine == "unknown"


def test_bringup_replay_reports_a_toy_log(
    toy: Dialect, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "toy.log"
    log.write_text(READY_LOG)
    assert main(["replay", "--json", str(log)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["engine"], report["outcome"]) == ("toy", "ready")
    assert report["ranks"] == ["rank0", "rank1"]
    assert [step["stage"] for step in report["stages"]["rank1"]] == [
        "process_start", "weight_loading", "kv_cache", "cuda_graph", "ready",
    ]  # fmt: skip
    assert main(["replay", "--engine", "toy", str(log)]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0].split() == ["engine", "toy,", "9", "lines,", "2", "ranks"]
    assert "READY" in text[1]


async def test_the_monitor_shows_a_panel_per_toy_rank(toy: Dialect) -> None:
    clock = FakeClock()
    app = MonitorApp(
        link=EngineAdapter("auto", clock),
        source=ScriptedSource([TOY_LOG.encode()]),
        target=Target("toy", "toy-host"),
        clock=clock,
    )
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: app.state.log.total == 8)
        app.ingest.drain()
        app.state.touch()
        app.flush()
        await until(pilot, lambda: len(app.query(RankPanel)) == 2)
        panels = list(app.query(RankPanel))
        assert [panel.tag for panel in panels] == ["rank0", "rank1"]
        # A panel takes its new state on the repaint after it was mounted.
        await until(
            pilot, lambda: all("cuda graph" in panel.render_text().lower() for panel in panels)
        )
