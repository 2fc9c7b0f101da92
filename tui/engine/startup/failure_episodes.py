"""Deciding which failure, if any, explains a run.

A failure shows up as an *episode*: a traceback head or a fatal marker, the frames, the
exception line, and often a second marker from the parent (``Received sigquit``). Signals are
weighed like this:

- a *hard* marker (a scheduler exception, SIGQUIT, a watchdog, ``EngineCore failed to start``)
  means the run is failing;
- a *soft* sign (a bare traceback, an OOM message, a shared-memory wait) is a failure only if
  the run shows no progress afterwards: a later milestone or the ready line retracts it;
- after a clean shutdown nothing counts (tracebacks at exit are noise);
- the kind is the first cause named in the episode (``CUDA out of memory`` makes it ``oom``),
  else the marker's own kind, else ``nccl`` when a crashed process had NCCL on its stack, else
  ``cuda_graph`` when a frame of the traceback was capturing graphs, else a weak cause (a
  shared-memory wait) that no exception followed, else ``traceback_other``;
- the excerpt is the episode's sign lines, the innermost frames that name a file and line of
  the engine's own code (``server_frame``), and the exception line;
- the stage is the rank's, or the one a frame of the traceback shows when that is further
  (frames read after the failure settled still count, see ``trail``);
- the rank is the one whose line opened the episode (a soft sign naming the cause, or the
  first hard marker), but a parent's reaction (``main``: ``Received sigquit from a child``)
  gives way to the first rank's own line.

The first hard episode wins; memory is bounded (a few excerpt lines per episode).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tui.engine.servers.common_patterns import (
    capture_frame,
    frame_stage,
    is_exception_line,
    nccl_frame,
    server_frame,
)
from tui.engine.servers.hits import FailureHit
from tui.engine.servers.startup_timeouts import warmup_timed_out
from tui.engine.startup.snapshot import Failure
from tui.engine.startup.vocabulary import FailureKind, Stage

_CRASH = re.compile(r"Segmentation fault|SIGSEGV|Fatal Python error: Aborted")
"""A hard sign of a process killed by a signal of its own making (not an exception)."""
EXCERPT_LINES = 8
FRAME_LINES = 3
"""Innermost frames of the engine's code kept in the excerpt, just above the exception line."""
EXCERPT_CHARS = 400
MERGE_WINDOW = 60
"""A hard marker within this many lines of a soft sign belongs to the same episode."""
SETTLE_WINDOW = 200
"""After a hard marker, look this many lines further for the cause before settling."""


@dataclass(slots=True)
class _Episode:
    line: int
    rank: str | None
    stage: Stage | None
    kind: FailureKind | None
    hard: bool
    last: int
    hard_line: int = 0
    ts: float | None = None
    excerpt: list[str] = field(default_factory=list)
    closed: bool = False
    capturing: bool = False
    """A frame of the traceback was inside graph capture."""
    weak: FailureKind | None = None
    """A weak cause seen (``FailureHit.weak``): the kind only if no exception follows."""
    crashed: bool = False
    """The process crashed (a signal, not an exception), so its stack names the culprit."""
    in_nccl: bool = False
    """A line of the crashed process's stack was inside NCCL."""
    framed: Stage | None = None
    """The furthest start-up stage a frame of the traceback was in (``frame_stage``)."""
    frames: list[str] = field(default_factory=list)
    """The innermost frames of the engine's code seen since the last exception line."""

    def frame(self, line: int, text: str) -> None:
        """A line of the traceback that is not its exception: note where it was."""
        if text[:2] == "  ":  # a frame: a long traceback stays one episode
            self.last = line
            framed = frame_stage(text)
            if framed is not None and (self.framed is None or framed.order > self.framed.order):
                self.framed = framed
        if server_frame(text):
            self.frames = [*self.frames[1 - FRAME_LINES :], _clipped(text.strip())]
        if capture_frame(text):
            self.capturing = True
        if self.crashed and nccl_frame(text):
            self.in_nccl = True

    def add(self, text: str, exception: bool = False) -> None:
        """A line for the excerpt; before an exception line, the frames that led to it (the
        frames and the exception line may go past ``EXCERPT_LINES``, up to ``FRAME_LINES``)."""
        text = _clipped(text.strip())
        limit = EXCERPT_LINES + FRAME_LINES if exception else EXCERPT_LINES
        if exception:
            room = max(limit - len(self.excerpt) - 1, 0)
            self.excerpt.extend(self.frames[len(self.frames) - room :] if room else [])
            self.frames = []
        if text and text not in self.excerpt and len(self.excerpt) < limit:
            self.excerpt.append(text)


def _clipped(text: str) -> str:
    return text[:EXCERPT_CHARS] + " …" if len(text) > EXCERPT_CHARS else text


class FailureTracker:
    """Follows failure episodes in one run."""

    def __init__(self) -> None:
        self._episode: _Episode | None = None
        self._settled = False
        self.stopped = False

    @property
    def open(self) -> bool:
        """True while lines may still add to the current episode."""
        return self._episode is not None and not self._settled

    @property
    def ts(self) -> float | None:
        """Log time of the line that opened the current episode, if it had one."""
        return None if self._episode is None else self._episode.ts

    def observe(
        self,
        line: int,
        rank: str | None,
        text: str,
        hit: FailureHit,
        stage: Stage | None,
        ts: float | None = None,
    ) -> Failure | None:
        """Take a failure sign; returns the failure once it is settled (at most once)."""
        if self._settled and self._episode is not None and is_exception_line(text):
            self._episode.closed = True
        if self.stopped or self._settled:
            return None
        episode = self._episode
        stale = episode is not None and not episode.hard and line - episode.last > MERGE_WINDOW
        kind = None if hit.weak else hit.kind
        if episode is None or stale:
            hard_line = line if hit.hard else 0
            episode = _Episode(line, rank, stage, kind, hit.hard, line, hard_line, ts=ts)
            self._episode = episode
        elif episode.kind is None and kind is not None:
            episode.kind = kind
        if hit.weak:
            episode.weak = hit.kind
        if hit.hard and not episode.hard:
            episode.hard, episode.hard_line = True, line
            if rank is not None and (episode.rank is None or episode.rank == "main" != rank):
                episode.rank = rank  # the rank of a soft sign before it stays (its cause)
        elif hit.hard and episode.rank in (None, "main") and rank not in (None, "main"):
            episode.rank, episode.line, episode.stage = rank, line, stage
        episode.last = line
        exception = is_exception_line(text)
        episode.add(text, exception)
        if hit.hard and _CRASH.search(text) is not None:
            episode.crashed = True
        if exception:
            episode.closed = True
        return self._settle_if_ready(line)

    def follow(self, line: int, text: str) -> Failure | None:
        """A line with no failure sign of its own, seen while an episode is open."""
        episode = self._episode
        if episode is None or self._settled:
            return None
        episode.frame(line, text)
        if is_exception_line(text):
            episode.last = line
            episode.add(text, exception=True)
            episode.closed = True
        return self._settle_if_ready(line)

    @property
    def tracing(self) -> bool:
        """True while the traceback of the failure already settled goes on (``trail``)."""
        return self._settled and self._episode is not None and not self._episode.closed

    def trail(self, line: int, text: str) -> Stage | None:
        """A line after the failure settled, while its traceback goes on: the stage its frames
        show, when this line moved it further."""
        episode = self._episode
        if episode is None or episode.closed:
            return None
        if is_exception_line(text) or line - episode.last > MERGE_WINDOW:
            episode.closed = True
            return None
        before = episode.framed
        episode.frame(line, text)
        return episode.framed if episode.framed is not before else None

    def _settle_if_ready(self, line: int) -> Failure | None:
        """A hard episode settles once its cause is named, its traceback ended, or time ran out."""
        episode = self._episode
        if episode is None or not episode.hard:
            return None
        if episode.kind is None and not episode.closed and line - episode.hard_line < SETTLE_WINDOW:
            return None
        self._settled = True
        return self.current(ready=False)

    def progressed(self) -> None:
        """The run moved on: a soft sign was survived."""
        if self._episode is not None and not self._episode.hard:
            self._episode = None

    def stop(self) -> None:
        """A clean shutdown: later tracebacks are noise."""
        self.stopped = True
        self.progressed()

    def settle(self) -> Failure | None:
        """End of stream: an open hard episode is final (returns it if not reported yet)."""
        if self._settled or self._episode is None or not self._episode.hard:
            return None
        self._settled = True
        return self.current(ready=False)

    def current(self, ready: bool) -> Failure | None:
        """The failure that explains the run so far, if any."""
        episode = self._episode
        if episode is None or (ready and not episode.hard):
            return None
        kind = episode.kind or (
            FailureKind.NCCL
            if episode.in_nccl
            else FailureKind.CUDA_GRAPH
            if episode.capturing
            else (episode.weak if not episode.closed else None) or FailureKind.TRACEBACK_OTHER
        )
        excerpt = "\n".join(episode.excerpt)
        if kind is FailureKind.TRACEBACK_OTHER and warmup_timed_out(excerpt):
            kind = FailureKind.STARTUP_TIMEOUT
        stage = episode.stage
        if episode.framed is not None and (stage is None or episode.framed.order > stage.order):
            stage = episode.framed  # its traceback shows where it was, past its last milestone
        return Failure(kind, episode.rank, episode.line, excerpt, stage)
