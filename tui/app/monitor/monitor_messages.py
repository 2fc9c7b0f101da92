"""Messages that workers post to the app. Each names something that already happened."""

from __future__ import annotations

from textual.message import Message

from tui.app.monitor.view_model import ConnectionState, HealthReading
from tui.engine.judge.scheduled_job import ScheduledJob


class ChunkReceived(Message):
    """Raw bytes arrived from the server log (any size; split into lines by the engine).

    ``node`` says which node's log they belong to when the server spans several hosts."""

    def __init__(self, data: bytes, node: int = 0) -> None:
        super().__init__()
        self.data = data
        self.node = node


class StreamMarked(Message):
    """The tail noticed something about the file itself: a gap, a rotation, a truncation."""

    def __init__(self, kind: str, detail: str = "", new_file: bool = False, node: int = 0) -> None:
        super().__init__()
        self.kind = kind
        self.detail = detail
        self.new_file = new_file
        self.node = node


class StreamEnded(Message):
    """The log stream finished (a local file read to its end, or the source gave up)."""

    def __init__(self, reason: str = "", node: int = 0) -> None:
        super().__init__()
        self.reason = reason
        self.node = node


class ConnectionChanged(Message):
    """The link to the host changed state."""

    def __init__(self, state: ConnectionState, detail: str = "") -> None:
        super().__init__()
        self.state = state
        self.detail = detail


class HealthPolled(Message):
    """The health poller has a new reading; only the latest one matters."""

    def __init__(self, reading: HealthReading) -> None:
        super().__init__()
        self.reading = reading

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, HealthPolled)


class RankFocused(Message):
    """The user picked one rank (from the grid, a digit key or the command palette)."""

    def __init__(self, tag: str) -> None:
        super().__init__()
        self.tag = tag


class JobStateChanged(Message):
    """The scheduler reported a change of the job the server runs in (queued, running, ended)."""

    def __init__(self, job: ScheduledJob) -> None:
        super().__init__()
        self.job = job
