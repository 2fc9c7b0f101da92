"""Feeding text to a ``LogEngine`` in tests, with a fixed clock."""

from __future__ import annotations

from collections.abc import Iterable

from tui.engine.logs.log_engine import LogEngine
from tui.engine.startup.log_events import Event
from tui.engine.startup.snapshot import Snapshot


def fixed_clock() -> float:
    return 1000.0


def run_chunks(chunks: Iterable[bytes], engine: str = "auto") -> tuple[Snapshot, list[Event]]:
    """Feed the chunks, then finish; returns the final snapshot and every event."""
    log = LogEngine(engine=engine, clock=fixed_clock)
    events: list[Event] = []
    for chunk in chunks:
        events.extend(log.feed(chunk).events)
    update = log.finish()
    events.extend(update.events)
    return update.snapshot, events


def read_after(
    ready: str, data: bytes, size: int, keep_lines: bool = False
) -> tuple[list[Event], Snapshot]:
    """Feed ``ready`` (a start that reaches serving) on its own, then ``data`` in chunks of
    ``size`` bytes, then finish; returns every event and the final snapshot."""
    engine = LogEngine(clock=fixed_clock, keep_lines=keep_lines)
    events = list(engine.feed(ready.encode()).events)
    for start in range(0, len(data), size):
        events.extend(engine.feed(data[start : start + size]).events)
    events.extend(engine.finish().events)
    return events, engine.snapshot


def run_text(text: str, engine: str = "auto", size: int = 65536) -> tuple[Snapshot, list[Event]]:
    """Feed ``text`` in chunks of ``size`` bytes."""
    data = text.encode()
    return run_chunks((data[i : i + size] for i in range(0, len(data), size)), engine)


def sglang_lines(*messages: str, rank: str = "TP0", second: int = 0) -> str:
    """SGLang lines, one second apart, all from ``rank`` (``""`` for the main process)."""
    tag = f" {rank}" if rank else ""
    return "".join(
        f"[2026-01-01 00:00:{(second + i) % 60:02d}{tag}] {message}\n"
        for i, message in enumerate(messages)
    )


SERVING_START = (
    sglang_lines(
        "server_args=ServerArgs(model_path='/m', tp_size=2, dp_size=2)",
        "The server is fired up and ready to roll!",
        rank="",
    )
    + sglang_lines(
        "Load weight begin. avail mem=70.00 GB",
        "Decode batch, #running-req: 1, cuda graph: True, gen throughput (token/s): 1.0, ",
    )
    + sglang_lines("Load weight begin. avail mem=70.00 GB", rank="DP1 TP1 EP1")
)
"""A TP2 DP2 start that reaches serving, with ranks TP0 and DP1 TP1 EP1."""
