"""Follow a log on this machine through the engine until its run is decided.

Used by ``bringup replay --follow``: the file is tailed like a remote one (it may not exist
yet, it may be truncated or rotated) and read until the log says the server is ready, failed
or stopped. ``snapshot`` always holds the latest state, so an interrupted follow can still be
reported.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from tui.engine.logs.log_engine import LogEngine
from tui.engine.startup.snapshot import Snapshot
from tui.engine.startup.vocabulary import Outcome
from tui.io.transport.host_session import HostSession, LocalConnector
from tui.io.transport.link_events import Chunk, StreamMarker


def decided(snapshot: Snapshot) -> bool:
    """The run's outcome is known: ready, failed or stopped."""
    return (
        snapshot.ready_line_seen
        or snapshot.stopped
        or snapshot.failure is not None
        or snapshot.outcome is Outcome.FAILED
    )


class LocalFollower:
    """Feeds a local log file to a :class:`LogEngine` as it grows."""

    def __init__(
        self, path: str, engine: str = "auto", clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.path = path
        self.engine = LogEngine(engine=engine, clock=clock)
        self.snapshot = self.engine.snapshot

    async def run(self) -> Snapshot:
        """Follow until the run is decided; return the final snapshot."""
        session = HostSession(LocalConnector())
        await session.start()
        try:
            async for item in session.tail(self.path):
                if isinstance(item, Chunk):
                    self.snapshot = self.engine.feed(item.data).snapshot
                elif isinstance(item, StreamMarker) and item.starts_new_file:
                    self.snapshot = self.engine.mark_new_run(item.detail).snapshot
                if decided(self.snapshot):
                    break
        finally:
            await session.close()
        self.snapshot = self.engine.finish().snapshot
        return self.snapshot
