"""The line grammar of every registered engine, with the engine detected from the first lines.

One ``LineGrammar`` reads SGLang's and vLLM's envelopes together, because real logs mix them (a
vLLM log on ROCm also holds lines in SGLang's format from the aiter kernels); an engine whose
lines look like neither brings its own reader (``Dialect.read_line``), tried on the lines no
envelope above claimed. The engine is decided by the first line that could only come from one
of them, and it only matters for lines that carry no envelope (``Dialect.message_hits``).

``parse`` handles any sanitized line and never raises. The engine's scanner has a faster path
for the few SGLang line shapes that dominate long logs and calls ``parse`` for everything else.
"""

from __future__ import annotations

import re

from tui.engine.servers import registry
from tui.engine.servers.common_patterns import bar_hits, failure_hit, is_exception_line, parse_bar
from tui.engine.servers.hits import Hit, Parsed, StageHit, VersionHit
from tui.engine.servers.library_lines import library_hits
from tui.engine.servers.sglang import sglang_grammar as sglang
from tui.engine.servers.vllm import vllm_grammar as vllm
from tui.engine.servers.wrappers import unwrap
from tui.engine.startup.vocabulary import Stage

MAIN = sglang.MAIN
_VLLM_PROCS = re.compile(
    r"APIServer|ApiServer|EngineCore|DPEngineCore|Worker|VllmWorker|LLMEngine|RayWorker"
)
_TRACEBACK = "Traceback (most recent call last)"
_FRAME = re.compile(
    rf'\s*File "[^"]*/({sglang.NAME}|{vllm.NAME})/(?:srt/|entrypoints/|engine/|v1/|launch_server)'
)
_GLOBAL_RANK = re.compile(r"world_size=\d+ rank=(\d+)")
_CARET_ESCAPE = re.compile(r"\^\[\[[0-9;]*[A-Za-z]")
"""A terminal escape written out in caret notation (``^[[36m``), as pasted from a pager."""
_NCCL_INIT = (StageHit(Stage.DISTRIBUTED_INIT, "nccl_info"),)
MAX_SHARED = 512
"""Processes under a shared name remembered for a rename."""
MAX_LAYERS = 16
"""Wrappers and actor prefixes read in front of one line (real logs stack two or three)."""


class LineGrammar:
    """Parses sanitized lines; remembers only what continuation lines need."""

    def __init__(self, engine: str = registry.AUTO) -> None:
        self.forced = registry.find(engine) is not None
        self.engine = engine if self.forced else registry.UNKNOWN
        self.detected = False
        """Set when a line decided the engine; the caller clears it after reporting."""
        self._readers = registry.envelope_readers()
        dialect = registry.or_default(engine)
        self._message_hits = dialect.message_hits
        """How a message without an envelope reads: the default engine's wording until a
        line names the engine."""
        self._prefix_names_rank = self.forced and dialect.traits.process_prefix_names_rank
        self.wrapper = ""
        """The last wrapper prefix seen, so that the caller can strip it cheaply."""
        self._traceback_rank: str | None = None
        self._shared: dict[str, str] = {}
        """The rank of each pid seen under a shared process name (vLLM's ``Worker``)."""

    def parse(self, line: str) -> list[Parsed]:
        """Every reading of ``line``: usually one, two when a bar and a log line were glued.

        Wrappers and other tools' actor prefixes are peeled off in a loop, not by recursion,
        and at most ``MAX_LAYERS`` of them: a hostile line may stack thousands."""
        layers = 0
        while layers < MAX_LAYERS:
            if line[:2] == "^[":  # colours pasted as text (``cat -v``): ``^[[36m(Worker pid=7)``
                line, layers = _CARET_ESCAPE.sub("", line), layers + 1
                continue
            if line[:1] == "[":
                restamped = _restamped(line)
                if restamped is not None:  # a collector's stamp in SGLang's own form
                    line, layers = restamped, layers + 1
                    continue
                parsed = self._sglang(line)
                if parsed is not None:
                    return [parsed]
            elif line[:1] == "(":
                found = self._prefixed(line)
                if isinstance(found, Parsed):
                    return [found]
                line, layers = found, layers + 1
                continue
            envelope = vllm.ENVELOPE.match(line)
            if envelope is not None:
                parsed = self._vllm(MAIN, envelope["ts"], line[envelope.end() :])
                if self.engine == registry.UNKNOWN and vllm.server_source(envelope[0]):
                    self._detect(vllm.NAME)  # a line of vLLM's own server, even one with no hit
                return [parsed]
            prefix, rest = unwrap(line)
            if not prefix:
                break
            self.wrapper = prefix
            if not rest:
                return [Parsed(None, None, rest, ())]
            line, layers = rest, layers + 1
        for name, read in self._readers:
            own = read(line)
            if own is not None:
                self._detect(name)
                return [own._replace(hits=self._with_failure(own.rank, own.msg, own.hits))]
        return self._bare(line)

    def _detect(self, engine: str) -> None:
        if self.engine == registry.UNKNOWN and not self.forced:
            self.engine = engine
            self.detected = True
            dialect = registry.or_default(engine)
            self._message_hits = dialect.message_hits
            self._prefix_names_rank = dialect.traits.process_prefix_names_rank

    def _sglang(self, line: str) -> Parsed | None:
        match = sglang.ENVELOPE.match(line)
        if match is None:
            return self._sglang_2024(line) if line[1:4] == "gpu" else None
        rank = sglang.tag_of(line[match.start("ts") + 19 : match.end("tags")]) or MAIN
        msg = line[match.end() :]
        hits = self._with_failure(rank, msg, sglang.message_hits(msg))
        if rank != MAIN or hits:
            self._detect(sglang.NAME)
        return Parsed(rank, match["ts"], msg, hits, sglang.NAME)

    def _sglang_2024(self, line: str) -> Parsed | None:
        """SGLang 0.2's ``[gpu=3] message``: no time, the rank named by its GPU."""
        match = sglang.GPU_PREFIX.match(line)
        if match is None:
            return None
        rank, msg = match[1], line[match.end() :]
        self._detect(sglang.NAME)
        hits = self._with_failure(rank, msg, sglang.message_hits(msg))
        return Parsed(rank, None, msg, hits, sglang.NAME)

    def _prefixed(self, line: str) -> Parsed | str:
        """A line that starts with ``(``: a vLLM process prefix, a Ray actor around an SGLang
        line, or another tool's actor name, which is a wrapper (its rest is returned)."""
        prefix = vllm.PREFIX.match(line)
        if prefix is None:
            sglang_line = self._sglang(line)
            return sglang_line or self._bare(line)[0]
        rest = line[prefix.end() :]
        if rest[:1] == "(":  # a Ray actor around a vLLM process: the inner one names it
            for _ in range(MAX_LAYERS):
                inner = vllm.PREFIX.match(rest) if rest[:1] == "(" else None
                if inner is None:
                    break
                prefix, rest = inner, rest[inner.end() :]
        if rest[:1] == "[":
            sglang_line = self._sglang(rest)
            if sglang_line is not None:
                return sglang_line
        rank = self.rank_of(prefix)
        if _VLLM_PROCS.match(rank):
            self._detect(vllm.NAME)
        elif not self._prefix_names_rank:
            return rest  # another tool's actor name (Ray): a wrapper
        envelope = vllm.ENVELOPE.match(rest)
        if envelope is not None:
            parsed = self._vllm(rank, envelope["ts"], rest[envelope.end() :])
        else:
            bar = parse_bar(rest)
            parsed = (
                self._vllm(rank, None, rest)
                if bar is None
                else Parsed(rank, None, rest, bar_hits(bar), vllm.NAME)
            )
        return self._named(prefix, parsed)

    @property
    def in_traceback(self) -> bool:
        """True while bare lines continue a traceback (they belong to its rank)."""
        return self._traceback_rank is not None

    def process_rank(self, prefix: str) -> str | None:
        """The rank of a line whose whole prefix is one vLLM process prefix
        (``(APIServer pid=1) ``) when reading it needs nothing remembered from other lines: a
        process name no other rank shares, no Ray address. None otherwise."""
        match = vllm.PREFIX.fullmatch(prefix)
        if match is None or match["ip"] is not None or vllm.shared_name(match["proc"]):
            return None
        return None if match["pid"] in self._shared else match["proc"]

    def rank_of(self, prefix: re.Match[str]) -> str:
        """The rank of a ``vllm.PREFIX`` match (in front of a line or a redrawn bar): under a
        shared process name, the name this pid was given (see ``_named``)."""
        rank = vllm.rank_of(prefix)
        if not self._shared or rank == prefix["proc"]:
            return rank
        return self._shared.get(prefix["pid"], rank)

    def _named(self, prefix: re.Match[str], parsed: Parsed) -> Parsed:
        """vLLM starts its workers under a shared name (``Worker``) and renames them
        ``Worker_TP0`` once they know their rank. A shared name's process is named by the
        global rank its distributed-init line states (``Worker rank=3``), and the first line
        under its own name says which rank it was before (``Parsed.renamed``)."""
        pid, rank = prefix["pid"], parsed.rank or ""
        if rank == prefix["proc"]:  # its own name
            if not self._shared:
                return parsed
            old = self._shared.pop(pid, None)
            return parsed if old is None else parsed._replace(renamed=old)
        stated = _GLOBAL_RANK.search(parsed.msg)
        named = f"{prefix['proc']} rank={stated[1]}" if stated else rank
        if pid in self._shared or len(self._shared) < MAX_SHARED:
            self._shared[pid] = named
        if named == rank:
            return parsed
        return parsed._replace(rank=named, renamed=rank)

    def _vllm(self, rank: str, ts: str | None, msg: str) -> Parsed:
        hits = vllm.message_hits(msg)
        if rank != MAIN or (hits and not vllm.library_message(msg)):
            # an unprefixed line that means nothing may come from vLLM's import in another
            # engine (``Automatically detected platform cuda.`` starts many SGLang logs); the
            # caller checks its module
            self._detect(vllm.NAME)
        return Parsed(rank, ts, msg, self._with_failure(rank, msg, hits, False), vllm.NAME)

    def _bare(self, line: str) -> list[Parsed]:
        """A line without an envelope: a bar, a traceback line, uvicorn, or noise."""
        embedded = sglang.EMBEDDED.search(line)
        if embedded is not None and embedded.start() > 0:
            glued = self._sglang(line[embedded.start() :])
            if glued is not None:
                return [*self._bare(line[: embedded.start()]), glued]
        bar = parse_bar(line)
        if bar is not None:
            return [Parsed(None, None, line, self._with_failure(None, line, bar_hits(bar)))]
        rank = self._traceback_rank
        if rank is not None and (not line or is_exception_line(line)):
            self._traceback_rank = None
        if self.engine == registry.UNKNOWN:
            self._engine_of_frame(line)
        hits = self._bare_hits(line)
        return [Parsed(rank, None, line, self._with_failure(rank, line, hits))]

    def _engine_of_frame(self, line: str) -> None:
        """A log that crashed before its first own line: the traceback's frames name the
        engine (its entry point comes first)."""
        frame = _FRAME.match(line)
        if frame is not None:
            self._detect(frame[1])

    def _bare_hits(self, line: str) -> tuple[Hit, ...]:
        if line[:5] not in ("INFO:", "WARNI", "ERROR", "DEBUG"):
            # NCCL's own lines (``NCCL_DEBUG=INFO``): a communicator is being set up
            if " NCCL INFO " in line:
                return _NCCL_INIT
            return library_hits(line)  # a library's own line (``[aiter] finish build [x]``)
        # the default (SGLang's) reading while no line has named the engine: uvicorn starting up
        # is not by itself a server that is ready (a router or a proxy in front of one says so)
        return self._message_hits(line)

    def _with_failure(
        self, rank: str | None, msg: str, hits: tuple[Hit, ...], continued: bool = True
    ) -> tuple[Hit, ...]:
        """Add the failure signature of ``msg``, if any.

        A traceback that starts on an SGLang line (or a bare one) continues on bare lines,
        which belong to the same rank until the exception line; vLLM prefixes every line.
        """
        failure = failure_hit(msg)
        if failure is None:
            return hits
        if _TRACEBACK in msg and continued:
            self._traceback_rank = rank
        return (*hits, failure)


def version_of(hits: tuple[Hit, ...]) -> VersionHit | None:
    """The version hit among ``hits``, if any."""
    return next((hit for hit in hits if isinstance(hit, VersionHit)), None)


def _restamped(line: str) -> str | None:
    """The SGLang line behind a bare ``[date time] `` stamp that a log collector put in
    front of it (``[2025-03-11 16:16:58] [2025-03-11 01:16:58 TP0] Decode batch...``)."""
    if "] [" not in line[:34]:
        return None
    outer = sglang.ENVELOPE.match(line)
    if outer is None or outer["tags"] or outer["actor"] is not None:
        return None
    rest = line[outer.end() :]
    return rest if rest[:1] == "[" and sglang.ENVELOPE.match(rest) is not None else None
