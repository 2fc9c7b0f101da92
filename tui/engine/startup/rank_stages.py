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

from tui.engine.servers.hits import MemoryHit, PhaseHit, PhaseStep, ProgressHit, StageHit
from tui.engine.servers.sglang import sglang_grammar as sglang
from tui.engine.servers.vllm import vllm_grammar as vllm
from tui.engine.startup.snapshot import PhaseSpan, PhaseState, Progress, RankState, StageSpan
from tui.engine.startup.vocabulary import Phase, Stage

MAX_SPANS = 64
MAX_KEYS = 64
MAX_PHASES = 32


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
        self.phase: PhaseState | None = None
        self.phases: list[PhaseSpan] = []
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
        self.end_phase(when)
        self.phase = None
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

    def phase_step(self, hit: PhaseHit, when: LogTime) -> PhaseState:
        """Apply a compile/JIT/autotune line; returns the phase's new state."""
        current = self._phase_for(hit.phase, when)
        step = hit.step
        state = replace(current, step_at=when.at, detail=hit.detail or current.detail)
        if step is PhaseStep.BEGIN:
            state = replace(state, running=True, bracketed=True)
        elif step is PhaseStep.START:
            state = replace(state, running=True, unit_ts=when.ts, unit_at=when.at)
        elif step is PhaseStep.DONE:
            state = replace(state, done=current.done + 1, running=current.bracketed)
            if not current.bracketed:  # a unit on its own (a module built): learn its time
                self._learn(state, _since(current.unit_ts, current.unit_at, when), hit.seconds, 1)
        self.phase, self._cached = state, None
        if step is PhaseStep.END:
            self.end_phase(when, hit.seconds)
        return self.phase

    def phase_bar(self, hit: ProgressHit, when: LogTime) -> PhaseState | None:
        """A phase's progress bar redrew; None when it showed nothing new."""
        if hit.phase is None:
            return None
        current = self._phase_for(hit.phase, when)
        if (current.done, current.total, current.detail) == (hit.done, hit.total, hit.label):
            return None
        running = current.bracketed or hit.done < hit.total
        self.phase = replace(current, step_at=when.at, done=hit.done, total=hit.total,
                             detail=hit.label, running=running)  # fmt: skip
        self._cached = None
        return self.phase

    def _phase_for(self, phase: Phase, when: LogTime) -> PhaseState:
        """The phase ``phase`` of this stage, begun now when another one (or none) was."""
        current = self.phase
        if current is not None and not current.ended and current.phase is phase:
            return current
        self.end_phase(when)
        return PhaseState(phase, self.stage, when.at, when.at, start_ts=when.ts,
                          unit_ts=when.ts, unit_at=when.at)  # fmt: skip

    def end_phase(self, when: LogTime, seconds: float | None = None) -> None:
        """The phase (if any) ended: keep how long its bracket took, for the stall rules."""
        current = self.phase
        if current is None or current.ended:
            return
        self.phase = replace(current, running=False, ended=True)
        if current.bracketed or current.total is not None:
            took = _since(current.start_ts, current.started_at, when)
            self._learn(current, took, seconds, max(current.done, 1))
        self._cached = None

    def _learn(self, state: PhaseState, took: float, said: float | None, steps: int) -> None:
        seconds = said if said is not None else took
        self.phases.append(PhaseSpan(state.phase, max(seconds, 0.0), steps))
        if len(self.phases) > MAX_PHASES:
            del self.phases[0]

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
                phase=self.phase,
                phases=tuple(self.phases),
            )
        return self._cached


def _since(ts: float | None, at: float, when: LogTime) -> float:
    """Seconds from a start (log time, else clock) to ``when``."""
    if ts is not None and when.ts is not None:
        return max(when.ts - ts, 0.0)
    return max(when.at - at, 0.0)


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
