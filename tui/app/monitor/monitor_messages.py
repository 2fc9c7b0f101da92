"""Messages that workers post to the app. Each names something that already happened.

Log data does not travel as messages: it goes through the ingest queue (``tui.app.feed``)."""

from __future__ import annotations

from textual.message import Message

from tui.app.monitor.view_model import ConnectionState, HealthReading


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
