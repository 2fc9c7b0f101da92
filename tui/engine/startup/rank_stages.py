"""One rank's stage machine.

Rules:

- the rank's stage only moves forward (``Stage.order``); a milestone never logged is skipped;
- a milestone that says ``draft``, or a repeat of a milestone that the draft model repeats
  (``Load weight begin`` a second time), is the draft model's: it opens a history span with
  ``draft=True`` and sets ``draft`` without moving the stage backwards;
- durations come from log timestamps; the injected clock gives ``*_at`` values.

The builder is mutable; ``state()`` hands out an immutable ``RankState``, rebuilt only when
something changed since the previous call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from tui.engine.servers.hits import MemoryHit, ProgressHit, StageHit
from tui.engine.servers.sglang import sglang_grammar as sglang
from tui.engine.servers.vllm import vllm_grammar as vllm
from tui.engine.startup.snapshot import Progress, RankState, StageSpan
from tui.engine.startup.vocabulary import Stage

MAX_SPANS = 64
MAX_KEYS = 64


class LogTime:
    """Where an event happened: line number, log time (seconds and as printed) and clock."""

    __slots__ = ("at", "line", "text", "ts")

    def __init__(self, line: int, ts: float | None, text: str | None, at: float) -> None:
        self.line = line
        self.ts = ts
        self.text = text
        self.at = at


class RankBuilder:
    """Mutable state of one rank."""

    def __init__(self, tag: str, node: int, when: LogTime) -> None:
        self.tag = tag
        self.node = node
        self.stage = Stage.PROCESS_START
        self.draft = False
        self.draft_stage: Stage | None = None
        self.progress: Progress | None = None
        self.avail_gb: float | None = None
        self.used_gb: float | None = None
        self.kv_tokens: int | None = None
        self.last_line = ""
        self.last_seen_at = when.at
        self.lines = 0
        self.failed = False
        self.spans: list[StageSpan] = [
            StageSpan(Stage.PROCESS_START, False, when.ts, when.text, when.at, None)
        ]
        self._keys: set[str] = set()
        self._cached: RankState | None = None

    def enter(self, hit: StageHit, when: LogTime) -> tuple[Stage, bool] | None:
        """Apply a milestone; returns (stage, draft) of the span it opened, or None."""
        repeat = hit.key in self._keys
        if len(self._keys) < MAX_KEYS:
            self._keys.add(hit.key)
        draft = hit.draft if hit.draft is not None else hit.draftable and repeat
        if draft:
            return self._open(hit.stage, True, when)
        back_to_target = self.draft and (hit.draft is False or hit.draftable)
        if hit.stage.order > self.stage.order or (
            back_to_target and hit.stage.order == self.stage.order
        ):
            return self._open(hit.stage, False, when)
        return None

    def _open(self, stage: Stage, draft: bool, when: LogTime) -> tuple[Stage, bool] | None:
        current = self.spans[-1]
        if current.stage is stage and current.draft == draft:
            return None
        self._close(current, when)
        self.spans.append(StageSpan(stage, draft, when.ts, when.text, when.at, None))
        if len(self.spans) > MAX_SPANS:
            del self.spans[1]
        if stage.order > self.stage.order:
            self.stage = stage
        self.draft = draft
        self.draft_stage = stage if draft else None
        self.progress = None
        self._cached = None
        return stage, draft

    def _close(self, span: StageSpan, when: LogTime) -> None:
        if span.start_ts is not None and when.ts is not None:
            seconds: float | None = when.ts - span.start_ts
        else:
            seconds = when.at - span.started_at
        if seconds is not None and seconds < 0:
            seconds = None
        self.spans[-1] = StageSpan(
            span.stage, span.draft, span.start_ts, span.start_text, span.started_at, seconds
        )

    def set_progress(self, hit: ProgressHit) -> bool:
        """Record a bar state; True when it changed."""
        label = (
            f"draft {hit.label}" if self.draft and not hit.label.startswith("draft") else hit.label
        )
        progress = Progress(hit.done, hit.total, label)
        if progress == self.progress:
            return False
        self.progress = progress
        self._cached = None
        return True

    def set_memory(self, hit: MemoryHit) -> bool:
        """Record memory figures; True when one of them changed."""
        changed = False
        if hit.avail_gb is not None and hit.avail_gb != self.avail_gb:
            self.avail_gb, changed = hit.avail_gb, True
        if hit.used_gb is not None and hit.used_gb != self.used_gb:
            self.used_gb, changed = hit.used_gb, True
        if hit.kv_tokens is not None and hit.kv_tokens != self.kv_tokens:
            self.kv_tokens, changed = hit.kv_tokens, True
        if changed:
            self._cached = None
        return changed

    def saw(self, line: str, count: int, at: float) -> None:
        """Lines arrived from this rank (the last one is kept, not all of them)."""
        self.last_line = line
        self.lines += count
        self.last_seen_at = at
        self._cached = None

    def move_times(self, moved: Callable[[str | None, float | None], float | None]) -> None:
        """Give each span the start time ``moved(start_text, start_ts)``."""
        self.spans = [
            replace(span, start_ts=moved(span.start_text, span.start_ts)) for span in self.spans
        ]
        self._cached = None

    def rename(self, tag: str) -> None:
        self.tag = tag
        self._cached = None

    def mark_failed(self) -> None:
        self.failed = True
        self._cached = None

    def state(self) -> RankState:
        """The immutable view, reused while nothing changed."""
        if self._cached is None:
            current = self.spans[-1]
            self._cached = RankState(
                tag=self.tag,
                node=self.node,
                stage=self.stage,
                draft=self.draft,
                stage_started_at=current.started_at,
                progress=self.progress,
                avail_gb=self.avail_gb,
                used_gb=self.used_gb,
                kv_tokens=self.kv_tokens,
                last_line=self.last_line,
                last_seen_at=self.last_seen_at,
                lines=self.lines,
                failed=self.failed,
                history=tuple(self.spans),
                draft_stage=self.draft_stage,
                last_message=message_of(self.last_line),
            )
        return self._cached


def message_of(line: str) -> str:
    """``line`` without its envelope: SGLang's ``[time TAGS]``, vLLM's ``(proc pid=N)`` and
    ``LEVEL time [file:line]``; a line without one is returned as it is."""
    if line[:1] in "([":
        envelope = sglang.ENVELOPE.match(line)
        if envelope is not None:
            return line[envelope.end() :]
        prefix = vllm.PREFIX.match(line)
        line = line[prefix.end() :] if prefix is not None else line
    found = vllm.ENVELOPE.match(line)
    return line[found.end() :] if found is not None else line
