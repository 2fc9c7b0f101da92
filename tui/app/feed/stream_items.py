"""What a log source hands the ingest queue, in the order it read it: chunks of the log, marks
about the file, and the end of the stream, each tagged with the node whose log it is."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ChunkReceived:
    """Raw bytes arrived from node ``node``'s log (any size; split into lines by the engine)."""

    data: bytes
    node: int = 0


@dataclass(frozen=True, slots=True)
class StreamMarked:
    """The tail noticed something about the file itself: a gap, a rotation, a truncation;
    ``new_file`` says the bytes after it start a new file."""

    kind: str
    detail: str = ""
    new_file: bool = False
    node: int = 0

    @property
    def text(self) -> str:
        """The marker as the header shows it."""
        return f"{self.kind}: {self.detail}" if self.detail else self.kind


@dataclass(frozen=True, slots=True)
class StreamEnded:
    """The log stream finished (a local file read to its end, or the source gave up)."""

    reason: str = ""
    node: int = 0


StreamItem = ChunkReceived | StreamMarked | StreamEnded
