"""The start-up model: ranks, the server's outcome, failures, decode figures and runs.

It consumes what the grammar recognised (``Parsed`` lines) and produces public events and an
immutable ``Snapshot``. Rules beyond the per-rank stage machine
(``tui.engine.startup.rank_stages``):

- the ready line puts every rank in ``ready``; decode lines or generation requests after it put
  them in ``serving``;
- a new run starts when the launch marker (``server_args=``, vLLM's args or banner) appears
  after the current run already made progress: the model resets and counts the runs before;
- the outcome is ``failed`` when a failure explains the run
(``tui.engine.startup.failure_episodes``), else
  ``ready`` once the ready line was seen, else ``incomplete``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import NamedTuple

from tui.engine.servers import registry
from tui.engine.servers.common_patterns import full_timestamp, is_generation, short_timestamp
from tui.engine.servers.dialect import Dialect, StartupTraits
from tui.engine.servers.hits import (
    ArgsHit,
    DecodeHit,
    FailureHit,
    Hit,
    Marker,
    MemoryHit,
    Parsed,
    PhaseHit,
    ProgressHit,
    RendezvousHit,
    RequestHit,
    SpecHit,
    StageHit,
    StopHit,
    VersionHit,
)
from tui.engine.servers.monitor_traffic import is_monitor_path
from tui.engine.servers.startup_timeouts import timeout_setting
from tui.engine.startup import log_events as ev
from tui.engine.startup.decode_stats import DecodeTracker
from tui.engine.startup.failure_episodes import EXCERPT_CHARS, FailureTracker
from tui.engine.startup.foreign_lines import foreign_failure, wrapper_http
from tui.engine.startup.rank_stages import LogTime, RankBuilder
from tui.engine.startup.snapshot import (
    Failure,
    PhaseState,
    RankState,
    Rendezvous,
    ServerInfo,
    Snapshot,
)
from tui.engine.startup.vocabulary import FailureKind, Outcome, Stage

MAIN = ev.MAIN
EVENT_BUCKET = 18
"""Decode and request events are thinned to one per ten log seconds: the first 18 characters
of a timestamp (``2026-01-01 00:00:1``) name a ten-second bucket."""
ROOT_CAUSES = frozenset({FailureKind.PORT_IN_USE, FailureKind.OOM, FailureKind.WEIGHTS_MISSING})
"""Causes no other rank's failure brings about: named just after a failure whose traceback
named no cause, they explain it."""
CAUSE_WINDOW = 60
"""Lines after such a failure in which its root cause may still be named."""
MAX_PEERS = 8
"""Unreachable peers remembered."""
MAX_RANKS = 512
"""Tags beyond this many are counted under ``main`` (a hostile log cannot exhaust memory)."""
_DIGITS = re.compile(r"\d+")


def rank_sort_key(tag: str) -> tuple[int, list[int], str]:
    """``main`` first, then ranks in numeric order (TP2 before TP10)."""
    return (0 if tag == MAIN else 1, [int(n[:18]) for n in _DIGITS.findall(tag)], tag)


def _busy(hit: DecodeHit) -> bool:
    """True when a decode statistics line shows requests at work."""
    return any(figure is not None and figure > 0
               for figure in (hit.gen_throughput, hit.running, hit.queued))  # fmt: skip


def _rank_zero_key(tag: str) -> tuple[int, list[int], str]:
    return (0 if "TP0" in tag.split() or tag.endswith("TP0") else 1, *rank_sort_key(tag)[1:])


class At(NamedTuple):
    """Where a hit was found: its line, the rank that printed it, and when."""

    parsed: Parsed
    rank: RankBuilder | None
    when: LogTime


class StartupModel:
    """Mutable model of one log stream; see the module docstring for the rules."""

    def __init__(self, engine: str, clock: Callable[[], float], node: int = 0) -> None:
        self.dialect: Dialect | None = None
        self.traits = StartupTraits()
        """The engine's ways (plain ones while it is not known)."""
        self.engine = engine
        self._text_decoders = frozenset(
            dialect.name for dialect in registry.dialects() if dialect.traits.decode_lines_as_text
        )
        self._front_processes = registry.front_processes()
        self.version: str | None = None
        self.node = node
        self.clock = clock
        self.lines = 0
        self.runs_before = 0
        self.events: list[ev.Event] = []
        self.decode = DecodeTracker()
        self.last_ts: float | None = None
        self.last_text: str | None = None
        self._year: str | None = None
        """The year of the latest full timestamp: vLLM-style ones without a year take it."""
        self._handlers: dict[type, Callable[[Hit, At], None]]
        self._handlers = {
            StageHit: self._on_stage,  # type: ignore[dict-item]
            ProgressHit: self._on_progress,  # type: ignore[dict-item]
            PhaseHit: self._on_phase,  # type: ignore[dict-item]
            RendezvousHit: self._on_rendezvous,  # type: ignore[dict-item]
            MemoryHit: self._on_memory,  # type: ignore[dict-item]
            FailureHit: self._on_failure,  # type: ignore[dict-item]
            DecodeHit: self._on_decode,  # type: ignore[dict-item]
            SpecHit: self._on_spec,  # type: ignore[dict-item]
            RequestHit: self._on_request,  # type: ignore[dict-item]
            ArgsHit: self._on_args,  # type: ignore[dict-item]
            StopHit: self._on_stop,  # type: ignore[dict-item]
            VersionHit: self._on_version,  # type: ignore[dict-item]
        }
        self._reset_run()

    @property
    def engine(self) -> str:
        """The engine's name, ``unknown`` until a line names it."""
        return self._engine

    @engine.setter
    def engine(self, name: str) -> None:
        self._engine = name
        self.dialect = registry.find(name)
        self.traits = StartupTraits() if self.dialect is None else self.dialect.traits

    # ------------------------------------------------------------------ runs

    def _reset_run(self) -> None:
        self.ranks: dict[str, RankBuilder] = {}
        self.failures = FailureTracker()
        self.decode.reset()
        self.args = ArgsHit()
        self._info: tuple[tuple[str, str | None, ArgsHit], ServerInfo] = (
            ("", None, self.args),
            ServerInfo(),
        )
        self.rendezvous: Rendezvous | None = None
        self.held: Failure | None = None
        """A failure another process printed, held until the engine's own lines agree."""
        self.ready_line_seen = False
        self.ready_ts: float | None = None
        self.ready_at: float | None = None
        self.node_ready_ts: float | None = None
        self.node_ready_at: float | None = None
        self.serving = False
        self.stopped = False
        self.requests = 0
        self.first_ts: float | None = None
        self._first_text: str | None = None
        self.started_at: float | None = None
        self.reported: Failure | None = None
        self._reported_line = 0
        self._first_rank_line: int | None = None
        self.decode_ts: dict[str, str | None] = {}
        self.request_ts: str | None = None
        self._substance = False
        self._order: list[str] = []
        self._zero: str | None = None
        self._renamed: dict[str, str] = {}
        """Old tag to new of every renamed rank (as many as ranks at most)."""
        self._snapshot: Snapshot | None = None

    def new_run(self, line: int, reason: str, rank: str | None = None) -> None:
        """Start over: the stream holds a relaunched server (or was replaced)."""
        self.runs_before += 1
        self._reset_run()
        self.events.append(ev.RunStarted(line, rank, None, self.runs_before))
        del reason  # the caller's words are for its own markers; the event counts runs

    # ------------------------------------------------------------------ lines

    def when(self, parsed: Parsed, line: int, now: float) -> LogTime:
        """The line's time: its own timestamp, else the latest one seen (for spans only)."""
        return self.when_text(parsed.ts_text, line, now)

    def when_text(self, text: str | None, line: int, now: float) -> LogTime:
        """``when`` for a line whose timestamp is ``text`` (None when it has none)."""
        if text is None:
            return LogTime(line, self.last_ts, self.last_text, now)
        if text[4:5] == "-":
            ts = full_timestamp(text)
            if ts is not None and self._year != text[:4]:
                self._adopt_year(text[:4])
        elif self.traits.short_stamps_foreign:  # vLLM's import in SGLang: not the log's clock
            return LogTime(line, self.last_ts, self.last_text, now)
        elif self._year is not None:
            ts = full_timestamp(f"{self._year}-{text}")
        else:
            ts = short_timestamp(text)
        if ts is not None:
            self.last_ts, self.last_text = ts, text
            if self.first_ts is None:
                self.first_ts, self._first_text = ts, text
        return LogTime(line, ts, text, now)

    def _adopt_year(self, year: str) -> None:
        """A full timestamp arrived: from now on stamps without a year are in ``year``, and the
        ones read before the first full timestamp are moved into it, so that no duration spans
        two calendars. In an SGLang log those came from vLLM's import line, whose clock may
        not even agree on the day: their times are dropped instead."""
        first = self._year is None
        self._year = year
        if not first:
            return
        foreign = self.traits.short_stamps_foreign

        def moved(text: str | None, ts: float | None) -> float | None:
            if text is None or text[4:5] == "-":
                return ts
            return None if foreign else full_timestamp(f"{year}-{text}")

        self.first_ts = moved(self._first_text, self.first_ts)
        self.last_ts = moved(self.last_text, self.last_ts)
        if self.last_ts is None:
            self.last_text = None
        for builder in self.ranks.values():
            builder.move_times(moved)

    def handle(self, parsed: Parsed, line: int, now: float) -> str | None:
        """Apply one parsed line; returns the rank the line belongs to, if any."""
        if self.started_at is None:
            self.started_at = now
        if Marker.RUN_STARTED in parsed.hits and (self._substance or self.reported):
            self.new_run(line, "launch marker", parsed.rank)
        when = self.when(parsed, line, now)
        if parsed.renamed is not None and parsed.rank is not None:
            self._rename(parsed.renamed, parsed.rank)
        rank = self.rank(parsed.rank, when) if parsed.rank is not None else None
        failed = False
        for hit in parsed.hits:
            if isinstance(hit, Marker):
                if hit is Marker.READY and self._wrapper_http(parsed, True):
                    continue
                self._on_marker(hit, when, rank)
            else:
                failed = failed or isinstance(hit, FailureHit)
                if rank is None and isinstance(hit, ProgressHit):
                    rank = self.rank_zero(when)
                self._handlers[type(hit)](hit, At(parsed, rank, when))
        if not failed and self.failures.open:
            self._report(self.failures.follow(line, parsed.msg), line)
        elif not failed and self.reported is not None and self.failures.tracing:
            self._restage(self.failures.trail(line, parsed.msg))
        self._snapshot = None
        return rank.tag if rank is not None else None

    def rank(self, tag: str, when: LogTime) -> RankBuilder:
        """The builder for ``tag``, created on first sight (a renamed rank's old tag gives
        the rank under its new one)."""
        if self._renamed:
            tag = self.current_tag(tag)
        builder = self.ranks.get(tag)
        if builder is None:
            if len(self.ranks) >= MAX_RANKS:
                tag = MAIN
                builder = self.ranks.get(MAIN)
            if builder is None:
                builder = RankBuilder(tag, self.node, when)
                self.ranks[tag] = builder
                if self._first_rank_line is None:
                    self._first_rank_line = when.line
                self._order = sorted(self.ranks, key=rank_sort_key)
                self._zero = None
        return builder

    def current_tag(self, tag: str) -> str:
        """The name the rank once called ``tag`` goes by now (a worker may be renamed twice:
        ``Worker pid=7``, then ``Worker rank=1``, then ``Worker_TP1``)."""
        for _ in range(len(self._renamed)):
            new = self._renamed.get(tag)
            if new is None:
                break
            tag = new
        return tag

    def _rename(self, old: str, new: str) -> None:
        """The rank ``old`` logs as ``new`` from now on (unless ``new`` is a rank, or a name
        a rank gave up: the lines under it belong to that rank)."""
        builder = self.ranks.get(old)
        if builder is None or new in self.ranks or new in self._renamed:
            return
        del self.ranks[old]
        if len(self._renamed) < MAX_RANKS:
            self._renamed[old] = new
        builder.rename(new)
        self.ranks[new] = builder
        self._order = sorted(self.ranks, key=rank_sort_key)
        self._zero = None

    def rank_zero(self, when: LogTime) -> RankBuilder:
        """The rank that draws untagged progress bars: global rank 0 (TP0), else ``main``."""
        if self._zero is None:
            front = self._front_processes
            tagged = [tag for tag in self._order if tag != MAIN and tag not in front]
            if not tagged:  # no rank yet: asked again once one has appeared
                return self.rank(MAIN, when)
            self._zero = min(tagged, key=_rank_zero_key)
        return self.rank(self._zero, when)

    def absorb(self, last: dict[str, str], counts: dict[str, int], now: float) -> None:
        """Lines the scanner handled in bulk: keep each rank's last line and count. ``last``
        comes in the order of those lines (the rank of the latest line last)."""
        if self._renamed:  # lines under a name given up since belong to the rank's new name
            last, counts = self._current_names(last, counts)
        for tag, line in last.items():
            builder = self.ranks.get(tag) or self.rank(tag, LogTime(0, None, None, now))
            builder.saw(line, counts.get(tag, 0), now)
        self._snapshot = None

    def _current_names(
        self, last: dict[str, str], counts: dict[str, int]
    ) -> tuple[dict[str, str], dict[str, int]]:
        """``absorb``'s figures under the names the ranks go by now; the latest line wins."""
        named_counts: dict[str, int] = {}
        for tag, count in counts.items():
            name = self.current_tag(tag)
            named_counts[name] = named_counts.get(name, 0) + count
        named_last: dict[str, str] = {}
        for tag, line in last.items():
            name = self.current_tag(tag)
            named_last.pop(name, None)
            named_last[name] = line
        return named_last, named_counts

    # ------------------------------------------------------------------ hits

    def _on_stage(self, hit: StageHit, at: At) -> None:
        if hit.key == "http" and self._wrapper_http(at.parsed, False):
            return
        builder = at.rank or self.rank_zero(at.when)
        opened = builder.enter(hit, at.when)
        if opened is None:
            return
        stage, draft = opened
        if stage.order > Stage.ARGS.order:
            self._substance = True
            self.failures.progressed()
        when = at.when
        self.events.append(
            ev.StageEntered(when.line, builder.tag, when.ts, stage, draft, hit.detail)
        )

    def _enter_all(self, stage: Stage, when: LogTime) -> None:
        for tag in self._order:
            self._on_stage(StageHit(stage, stage.value), At(_NO_LINE, self.ranks[tag], when))

    def _on_rendezvous(self, hit: RendezvousHit, at: At) -> None:
        """Keep the shortest count seen (the store's, or the rank that reached fewest peers)
        and the peers named, at most ``MAX_PEERS`` of them."""
        known = self.rendezvous or Rendezvous()
        if hit.peer:
            if hit.peer not in known.peers and len(known.peers) < MAX_PEERS:
                known = replace(known, peers=(*known.peers, hit.peer))
        elif hit.joined is not None and hit.expected is not None:
            short = known.expected is None or hit.expected - hit.joined >= known.missing
            if short:
                known = replace(known, joined=hit.joined, expected=hit.expected)
        self.rendezvous = known

    def _on_phase(self, hit: PhaseHit, at: At) -> None:
        builder, when = at.rank or self.rank_zero(at.when), at.when
        self._phase_event(builder.tag, builder.phase_step(hit, when), when)

    def _phase_event(self, tag: str, state: PhaseState | None, when: LogTime) -> None:
        if state is not None:
            self.events.append(
                ev.PhaseStepped(when.line, tag, when.ts, state.phase, state.stage, state.done,
                                state.total, state.detail, state.running)
            )  # fmt: skip

    def _on_progress(self, hit: ProgressHit, at: At) -> None:
        builder, when = at.rank or self.rank_zero(at.when), at.when
        if hit.phase is not None:
            self._phase_event(builder.tag, builder.phase_bar(hit, when), when)
            return
        if builder.set_progress(hit):
            label = builder.progress.label if builder.progress else hit.label
            self.events.append(
                ev.StageProgressed(when.line, builder.tag, when.ts, hit.stage, hit.done,
                                   hit.total, label)
            )  # fmt: skip

    def _on_memory(self, hit: MemoryHit, at: At) -> None:
        rank, when = at.rank, at.when
        if rank is not None and rank.set_memory(hit):
            self.events.append(
                ev.MemoryReported(when.line, rank.tag, when.ts, rank.avail_gb, rank.used_gb,
                                  rank.kv_tokens)
            )  # fmt: skip

    def _on_failure(self, hit: FailureHit, at: At) -> None:
        rank = at.rank
        stage = rank.stage if rank is not None else self.last_stage()
        tag = rank.tag if rank is not None else None
        when = at.when
        failure = self.failures.observe(when.line, tag, at.parsed.msg, hit, stage, when.ts)
        if failure is None:
            failure = self._root_cause(hit, At(at.parsed, rank, when), stage)
        self._report(failure, when.line)

    def _restage(self, stage: Stage | None) -> None:
        """The reported failure's traceback shows it further on than its rank's last
        milestone (frames read after the failure was reported)."""
        reported = self.reported
        if stage is None or reported is None:
            return
        if reported.stage is None or stage.order > reported.stage.order:
            self.reported = replace(reported, stage=stage)

    def _root_cause(self, hit: FailureHit, at: At, stage: Stage | None) -> Failure | None:
        """The failure reported just before, now explained by ``hit``: its traceback named no
        cause, and ``hit`` names one no other rank's failure brings about (ranks print their
        tracebacks together, a consequence often first). None otherwise."""
        reported, kind, line = self.reported, hit.kind, at.when.line
        if (
            reported is None
            or reported.kind is not FailureKind.TRACEBACK_OTHER
            or kind not in ROOT_CAUSES
            or line - self._reported_line > CAUSE_WINDOW
            or self.failures.stopped
        ):
            return None
        self.reported = None  # reported again, with its cause
        excerpt = f"{reported.excerpt}\n{at.parsed.msg.strip()[:EXCERPT_CHARS]}"
        return Failure(kind, at.rank.tag if at.rank else None, line, excerpt, stage)

    def _report(self, failure: Failure | None, line: int | None = None) -> None:
        """Announce the failure once (again only when a root cause explains it); its time is
        that of the line that showed it first."""
        if failure is None or self.reported is not None:
            return
        if self._foreign_failure(failure):
            self.held = self.held or failure
            return
        if failure.kind is FailureKind.TRACEBACK_OTHER and self.held is not None:
            failure = replace(failure, kind=self.held.kind, setting=self.held.setting,
                              excerpt=f"{self.held.excerpt}\n{failure.excerpt}")  # fmt: skip
        self.reported = failure = with_setting(failure)
        self._reported_line = self.lines if line is None else line
        if failure.rank is not None and failure.rank in self.ranks:
            self.ranks[failure.rank].mark_failed()
        self.events.append(
            ev.FailureDetected(failure.line, failure.rank, self.failures.ts, failure.kind,
                               failure.excerpt, failure.stage)
        )  # fmt: skip

    def _on_decode(self, hit: DecodeHit, at: At) -> None:
        if at.parsed.semantics in self._text_decoders:
            self.decode.pending.append(at.parsed.msg)
        else:
            self.decode.add(hit)
        self.decode_event(at.rank.tag if at.rank else None, hit, at.when)
        if not _busy(hit):  # vLLM V0 prints its figures every ten seconds, idle or not
            return
        if self.ready_line_seen:
            self._serve(at.when)
        else:  # the ready line is not in this log (it began later): the rank is serving
            rank = at.rank or self.rank_zero(at.when)
            self._on_stage(StageHit(Stage.SERVING, "decode"), At(at.parsed, rank, at.when))

    def decode_event(self, tag: str | None, hit: DecodeHit, when: LogTime) -> None:
        """At most one decode event per rank and ten log seconds (a busy server logs many)."""
        key, bucket = tag or MAIN, when.text[:EVENT_BUCKET] if when.text else None
        if bucket is not None and self.decode_ts.get(key) == bucket:
            return
        self.decode_ts[key] = bucket
        self.events.append(
            ev.DecodeStats(when.line, tag, when.ts, hit.gen_throughput, hit.accept_len,
                           hit.accept_rate, hit.running, hit.queued)
        )  # fmt: skip

    def _on_spec(self, hit: SpecHit, at: At) -> None:
        self.decode.add_spec(hit)

    def _on_request(self, hit: RequestHit, at: At) -> None:
        self.request_seen(at.rank.tag if at.rank else None, hit, at.when)

    def request_seen(self, tag: str | None, hit: RequestHit, when: LogTime) -> None:
        """Count a request; at most one event per ten log seconds, except for server errors.
        The monitor's own requests (its health polls and probes) are neither counted nor
        taken as traffic."""
        if is_monitor_path(hit.path):
            return
        self.requests += 1
        if is_generation(hit):
            self._generation_seen(hit, when)
        bucket = when.text[:EVENT_BUCKET] if when.text else None
        if hit.status < 500 and bucket is not None and bucket == self.request_ts:
            return
        self.request_ts = bucket
        self.events.append(
            ev.RequestLogged(when.line, tag, when.ts, hit.method, hit.path, hit.status)
        )

    def _generation_seen(self, hit: RequestHit, when: LogTime) -> None:
        if self.ready_line_seen:
            self._serve(when)
        elif 200 <= hit.status < 300 and (
            self.traits.answers_only_when_ready or self.last_stage() in _NOT_STARTED
        ):  # the log began after start-up (no stage line before an answered request), or it
            # lost vLLM's ready line (uvicorn answers nothing before it): serving
            rank = self.rank_zero(when)
            self._on_stage(StageHit(Stage.SERVING, "request"), At(_NO_LINE, rank, when))

    def _on_args(self, hit: ArgsHit, at: At) -> None:
        self.args = self.args._replace(
            **{key: value for key, value in hit._asdict().items() if value is not None}
        )
        info, when = self.server_info(), at.when
        self.events.append(
            ev.ServerArgsSeen(
                when.line, at.rank.tag if at.rank else None, when.ts, info.model,
                info.served_model_name, info.drafter, info.speculative_algorithm, info.tp_size,
                info.dp_size, info.ep_size, info.pp_size, info.nnodes, self.args.node_rank or 0,
                info.port,
            )
        )  # fmt: skip

    def _on_stop(self, hit: StopHit, at: At) -> None:
        if not self.stopped:
            self.stopped = True
            self.failures.stop()
            tag = at.rank.tag if at.rank else None
            self.events.append(ev.ServerStopped(at.when.line, tag, at.when.ts, hit.reason))

    def _on_version(self, hit: VersionHit, at: At) -> None:
        self.version = hit.version

    def _on_marker(self, hit: Marker, when: LogTime, rank: RankBuilder | None) -> None:
        if hit is Marker.READY and not self.ready_line_seen:
            self.ready_line_seen = True
            self.ready_ts = when.ts if when.ts is not None else self.last_ts
            self.ready_at = when.at
            self._substance = True
            self.failures.progressed()
            self.events.append(ev.ReadyLineSeen(when.line, None, when.ts))
            self._enter_all(Stage.READY, when)
        elif hit is Marker.BATCH or hit is Marker.TRAFFIC:
            if self.ready_line_seen:
                self._serve(when)
            else:  # a lone batch is the warm-up request; traffic means the log began later
                stage = Stage.WARMUP if hit is Marker.BATCH else Stage.SERVING
                busy = rank or self.rank_zero(when)
                self._on_stage(StageHit(stage, hit.value), At(_NO_LINE, busy, when))
        elif hit is Marker.NODE_READY and self.node_ready_at is None:
            self.node_ready_ts = when.ts if when.ts is not None else self.last_ts
            self.node_ready_at = when.at
            self._substance = True
            self.failures.progressed()
            self.events.append(ev.NodeReadySeen(when.line, None, when.ts))

    def _serve(self, when: LogTime) -> None:
        if not self.serving:
            self.serving = True
            self._enter_all(Stage.SERVING, when)

    def settle(self) -> None:
        """End of stream: an open failure is final, and a survived-looking one counts."""
        self._report(self.failures.settle())
        self._report(self.failures.current(self.ready_line_seen))
        self._snapshot = None

    # ------------------------------------------------------------------ views

    def last_stage(self) -> Stage | None:
        """The furthest stage any rank (the server as a whole) reached.

        vLLM's API server resolves the model's configuration before its workers start, so a
        worker in distributed init is further along than that configuration."""
        if not self.ranks:
            return None
        stages = {builder.stage for builder in self.ranks.values()}
        furthest = max(stages, key=lambda stage: stage.order)
        if furthest is Stage.MODEL_CONFIG and self.traits.config_before_workers:
            return Stage.DISTRIBUTED_INIT if Stage.DISTRIBUTED_INIT in stages else furthest
        return furthest

    def _furthest(self, failure: Failure | None) -> Stage | None:
        """``last_stage``; with no milestone logged, the stage the failure's traceback shows,
        else none at all when the log shows nothing before its failure (a traceback pasted
        alone: how far the server got is not known)."""
        stage, first = self.last_stage(), self._first_rank_line
        if failure is None or stage not in _NOT_STARTED:
            return stage
        if failure.stage not in _NOT_STARTED:
            return failure.stage
        return None if first is None or failure.line <= first else stage

    def server_info(self) -> ServerInfo:
        """What the log says of the server, rebuilt only when the engine, version or arguments
        changed."""
        key = (self.engine, self.version, self.args)
        if self._info[0] != key:
            self._info = (key, self._server_info())
        return self._info[1]

    def _server_info(self) -> ServerInfo:
        args = self.args
        return ServerInfo(
            engine=self.engine, version=self.version, model=args.model,
            served_model_name=args.served_model_name, drafter=args.drafter,
            speculative_algorithm=args.speculative_algorithm, tp_size=args.tp_size or 1,
            dp_size=args.dp_size or 1, ep_size=args.ep_size or 1, pp_size=args.pp_size or 1,
            nnodes=args.nnodes or 1, port=self._port(),
        )  # fmt: skip

    def _port(self) -> int | None:
        """The HTTP port; vLLM's ``non-default args`` leave out the default 8000."""
        dialect = self.dialect
        if self.args.port is None and self.args.model is not None and dialect is not None:
            return dialect.default_port if dialect.traits.omits_default_args else None
        return self.args.port

    def failure(self) -> Failure | None:
        current = self.reported or self.failures.current(self.ready_line_seen)
        if current is None or (current is not self.reported and self._foreign_failure(current)):
            return None
        return with_setting(current)

    def _foreign_failure(self, failure: Failure) -> bool:
        """A failure another process in the log printed (``foreign_lines``)."""
        front = self._front_processes
        own = [tag for tag in self._order if tag != MAIN and tag not in front]
        failed = [tag for tag in own if self.ranks[tag].failed]
        return foreign_failure(failure, self._port(), own, failed)

    def _wrapper_http(self, parsed: Parsed, ready_marker: bool) -> bool:
        """A bare uvicorn line that is a wrapper's (``foreign_lines.wrapper_http``)."""
        if parsed.rank is not None:
            return False
        prefixed = any(tag in self._front_processes for tag in self._order)
        return wrapper_http(parsed.msg, self._port(), self.last_stage(), ready_marker, prefixed)

    def snapshot(self) -> Snapshot:
        """The immutable view; rebuilt only after something changed."""
        if self._snapshot is None:
            ranks: tuple[RankState, ...] = tuple(self.ranks[tag].state() for tag in self._order)
            failure = self.failure()
            outcome = (
                Outcome.FAILED
                if failure
                else Outcome.READY
                if self.ready_line_seen
                else Outcome.INCOMPLETE
            )
            self._snapshot = Snapshot(
                server=self.server_info(), ranks=ranks, outcome=outcome,
                last_stage=self._furthest(failure), failure=failure,
                ready_line_seen=self.ready_line_seen, stopped=self.stopped, lines=self.lines,
                runs_before=self.runs_before, started_at=self.started_at, first_ts=self.first_ts,
                ready_ts=self.ready_ts, ready_at=self.ready_at, decode=self.decode.summary(),
                requests=self.requests,
                node_ready_ts=self.node_ready_ts, node_ready_at=self.node_ready_at,
                rendezvous=self.rendezvous,
            )  # fmt: skip
        return self._snapshot

    def invalidate(self) -> None:
        self._snapshot = None


def with_setting(failure: Failure) -> Failure:
    """A start-up timeout with the setting that raises its limit."""
    if failure.kind is not FailureKind.STARTUP_TIMEOUT or failure.setting:
        return failure
    return replace(failure, setting=timeout_setting(failure.excerpt))


_NO_LINE = Parsed(None, None, "", ())
_NOT_STARTED = (None, Stage.PROCESS_START)
"""The server's furthest stage when no start-up line was seen (yet)."""
