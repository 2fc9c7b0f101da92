"""What a log tail knows about the file it follows, and its tuning knobs."""

from __future__ import annotations

from dataclasses import dataclass

from tui.io.tail.tail_remote import FileReport
from tui.io.transport.link_events import Chunk


@dataclass(frozen=True, slots=True)
class TailOptions:
    """Tuning of a tail. The defaults suit a server log on a remote host."""

    probe_interval: float = 1.0
    """Seconds between checks of the file by name (catches rewrites and replacements)."""
    quiet_probe_factor: float = 5.0
    """... times this (5 s) once ``quiet_checks`` checks in a row found nothing new and no
    byte arrived in between (``tail`` itself reports a truncation or a replaced file; the check
    is for what it misses, and an idle server's log should not cost a command a second)."""
    quiet_checks: int = 5
    wait_interval: float = 0.5
    """Seconds between looks for a file that does not exist yet."""
    drain_idle: float = 0.2
    """After a replacement, the old file is read until it has been quiet this long."""
    drain_max: float = 3.0
    """... or for at most this long."""
    head_bytes: int = 1024
    """Bytes at the start of the file kept as its fingerprint."""
    window_bytes: int = 256
    """Bytes just before the offset, compared to tell a rewritten file from a grown one."""
    recover_limit: int = 16 * 1024 * 1024
    """At most this many bytes are read back from a rotated file or a copy."""
    command_timeout: float = 15.0
    """Seconds a check or a recovery read may take."""


class FileState:
    """The followed file's identity, the offset reached, and its fingerprint bytes.

    ``head`` holds the file's first bytes (up to ``head_bytes``) and ``recent`` the bytes just
    before ``offset``; ``epoch`` changes whenever a new file (or new content) is started, so
    answers to checks sent before the change can be recognised and ignored.
    """

    def __init__(self, offset: int = 0, head_bytes: int = 1024, window_bytes: int = 256) -> None:
        if offset < 0:
            raise ValueError("the start offset cannot be negative")
        self.identity: tuple[int, int] | None = None
        self.target: str | None = None
        """Where the log's name led (a symbolic link's target) when this file was opened."""
        self.offset = offset
        self.head = bytearray()
        self.recent = bytearray()
        self.verified = offset
        self.known_size = 0
        self.stalled_at: int | None = None
        """The offset ``tail`` stayed at over two checks while the file held more (stuck)."""
        self._behind_at: int | None = None
        self.epoch = 0
        self._head_bytes = head_bytes
        self._window_bytes = window_bytes

    def window_request(self) -> tuple[int, int]:
        """Start and length of the window a check should read to compare with ``recent``."""
        if self.identity is None:
            start = max(0, self.offset - self._window_bytes)
            return start, self.offset - start
        return self.offset - len(self.recent), len(self.recent)

    def head_request(self) -> int:
        return len(self.head) if self.identity is not None else self._head_bytes

    def adopt(self, report: FileReport) -> None:
        """Take the fingerprint of a file first seen at ``offset`` (possibly not 0)."""
        self.identity = report.identity
        self.target = report.target
        self.head = bytearray(report.head[: self.offset])
        self.recent = bytearray(report.window)
        self.verified = self.offset
        self.known_size = report.size

    def advance(self, data: bytes) -> Chunk:
        """Record ``data`` as the next bytes of the file and return it as a chunk."""
        chunk = Chunk(data, self.offset)
        if len(self.head) == self.offset < self._head_bytes:
            self.head += data[: self._head_bytes - self.offset]
        self.recent += data[-self._window_bytes :]
        del self.recent[: -self._window_bytes]
        self.offset += len(data)
        return chunk

    def reset(self, identity: tuple[int, int] | None) -> None:
        """Start over at byte 0 of a new file (or of new content in the same file)."""
        self.identity = identity
        self.offset = 0
        self.head = bytearray()
        self.recent = bytearray()
        self.verified = 0
        self.known_size = 0
        self.stalled_at = self._behind_at = None
        self.epoch += 1

    def verify(self, offset: int, size: int) -> None:
        """A check confirmed the file up to ``offset``; it then held ``size`` bytes."""
        self.verified = max(self.verified, offset)
        self.known_size = max(self.known_size, size)
        if self.stalled_at is not None and offset > self.stalled_at:
            self.stalled_at = None
        if size > offset and self._behind_at == offset:
            self.stalled_at = offset
        self._behind_at = offset if size > offset else None
