"""Frozen events and stream items produced by the I/O layer (pure dataclasses, no I/O here).

Connection state: :class:`Connecting`, :class:`Connected`, :class:`ConnectionLost`,
:class:`Reconnected` and :class:`ConnectionFailed` (a refusal that retrying cannot fix, or a
host that could not be reached at all).

A log tail yields :class:`Chunk` (bytes exactly as read from the file, with their offset),
:class:`StreamMarker` (something happened to the file: it was truncated, rotated, replaced ...) and
:class:`Gap` (bytes that existed but can no longer be read, counted when the count is known).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class ConnectFailureKind(str, Enum):
    """Why a connection could not be made."""

    UNREACHABLE = "unreachable"
    AUTH = "auth"
    HOST_KEY = "host-key"


@dataclass(frozen=True, slots=True)
class Connecting:
    """A connection attempt started (``attempt`` counts from 1 since the last success)."""

    host: str
    attempt: int


@dataclass(frozen=True, slots=True)
class Connected:
    """The first connection to the host was established."""

    host: str


@dataclass(frozen=True, slots=True)
class ConnectionLost:
    """An established connection dropped, or a reconnection attempt failed."""

    host: str
    reason: str


@dataclass(frozen=True, slots=True)
class Reconnected:
    """The host is reachable again after ``gap_seconds`` without a connection."""

    host: str
    gap_seconds: float


@dataclass(frozen=True, slots=True)
class ConnectionFailed:
    """The host refused us or could not be reached; ``hint`` says what the user can do."""

    host: str
    kind: ConnectFailureKind
    reason: str
    hint: str = ""


ConnectionEvent = Connecting | Connected | ConnectionLost | Reconnected | ConnectionFailed


class MarkerKind(str, Enum):
    """What happened to a followed file."""

    WAITING = "waiting"
    APPEARED = "appeared"
    RESUMED = "resumed"
    TRUNCATED = "truncated"
    COPY_TRUNCATED = "copy-truncated"
    ROTATED = "rotated"
    REPLACED = "replaced"
    REWRITTEN = "rewritten"
    DELETED = "deleted"
    RELINKED = "relinked"
    NOTICE = "notice"


@dataclass(frozen=True, slots=True)
class Chunk:
    """Bytes of the followed file; ``offset`` is where ``data`` starts in the current file."""

    data: bytes
    offset: int


@dataclass(frozen=True, slots=True)
class StreamMarker:
    """Something happened to the followed file. Bytes after a new-file marker start at 0."""

    kind: MarkerKind
    detail: str

    @property
    def starts_new_file(self) -> bool:
        return self.kind in _NEW_FILE_KINDS


_NEW_FILE_KINDS = frozenset(
    {
        MarkerKind.TRUNCATED,
        MarkerKind.COPY_TRUNCATED,
        MarkerKind.ROTATED,
        MarkerKind.REPLACED,
        MarkerKind.REWRITTEN,
        MarkerKind.RELINKED,
    }
)


@dataclass(frozen=True, slots=True)
class Gap:
    """Bytes of the file that could not be read; ``size`` is None when the count is unknown."""

    size: int | None
    reason: str


TailItem = Chunk | StreamMarker | Gap
