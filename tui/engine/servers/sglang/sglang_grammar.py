"""SGLang's log grammar: the ``[date time(.ms) TAGS] message`` envelope and its milestones.

The envelope comes from ``configure_logger``: ``[%(asctime)s{.ms}{prefix}] %(message)s`` where
the prefix is zero or more rank tags (``DP0 PP1 ATTN_CP0 MOE_DP0 TP3 EP3``) in an order that
changed between versions. No level is printed, so meaning comes from the message text. Every
wording of a milestone that SGLang has used is accepted (``Init torch distributed begin.`` and
``Init parallel begin.``; ``Capture cuda graph begin`` and ``Capture target decode CUDA graph
begin``; ``Load weight end`` with and without ``elapsed=``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial

from tui.engine.servers.common_patterns import (
    maybe_failure,
    parse_access,
    to_float,
    to_int,
    uvicorn_hits,
    whole,
)
from tui.engine.servers.hits import (
    DecodeHit,
    Hit,
    Marker,
    MemoryHit,
    ProgressHit,
    StageHit,
    StopHit,
)
from tui.engine.servers.jit_phases import maybe_phase
from tui.engine.servers.library_lines import library_hits
from tui.engine.servers.monitor_traffic import is_probe_prefill
from tui.engine.servers.server_args import sglang_args
from tui.engine.startup.vocabulary import Stage

NAME = "sglang"
"""How configs, logs and the user name the engine."""
MAIN = "main"

_TAG = r"[A-Za-z_][\w\[\]]*"
ENVELOPE = re.compile(
    r"(?:\((?P<actor>[^()]*?) pid=\d+(?:, ip=[^)]*)?\)\s*)?"
    r"\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d{1,6})?)"
    rf"(?P<tags>(?: {_TAG})*)\] ?"
)
GPU_PREFIX = re.compile(r"\[(gpu(?:_id)?=\d+)\] ")
"""SGLang 0.2's prefix (``[gpu=3] Load weight begin.``): no time, the rank as its GPU."""
EMBEDDED = re.compile(rf"\[\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d{{1,6}})?(?: {_TAG})*\] ")
_TAIL = re.compile(rf"(?:[.,]\d{{1,6}})?((?: {_TAG})*)")
# A logging config that adds level and source (``WARNING server_args.py:1780: ...``), or
# uvicorn's ``INFO:     `` level prefix in front of an ordinary message.
_LEVEL = re.compile(r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)(?: [\w./-]+:\d+:|:) +")
_GB = re.compile(r"avail mem=([\d.]+) GB")
_USED = re.compile(r"mem usage=(-?[\d.]+) GB")
_DRAFT_CLASS = re.compile(r"type=\w*(?:Eagle|EAGLE|NextN|MTP|Medusa|Draft)\w*")


def tag_of(tail: str) -> str | None:
    """The rank tag from what follows the timestamp (``'.123 DP0 TP3'`` gives ``'DP0 TP3'``).

    ``"main"`` for an untagged line; None when the text is not a valid envelope tail.
    """
    match = _TAIL.fullmatch(tail)
    if match is None:
        return None
    return match[1].strip() or MAIN


def strip_level(msg: str) -> str:
    """The message without a logging level/source prefix."""
    match = _LEVEL.match(msg)
    return msg if match is None else msg[match.end() :]


def _number(text: str, key: str) -> float | None:
    start = text.find(key)
    if start < 0:
        return None
    start += len(key)
    end = text.find(",", start)
    return to_float(text[start:] if end < 0 else text[start:end])


DECODE_LABELS = ("gen throughput (token/s): ", "accept len: ", "accept rate: ")
"""What precedes the gen throughput, accept length and accept rate in a ``Decode batch``
line."""
_DECODE_FIGURES = ("#running-req: ", "#queue-req: ", *DECODE_LABELS)


def decode_hit(msg: str) -> DecodeHit:
    """The figures of a ``Decode batch`` line (any version)."""
    running, queued, gen, accept_len, accept_rate = map(partial(_number, msg), _DECODE_FIGURES)
    return DecodeHit(gen, accept_len, accept_rate, whole(running), whole(queued))


def _memory(msg: str) -> MemoryHit:
    avail = _GB.search(msg)
    used = _USED.search(msg)
    return MemoryHit(to_float(avail[1]) if avail else None, to_float(used[1]) if used else None)


def _load_end(msg: str, _match: re.Match[str]) -> tuple[Hit, ...]:
    draft = True if _DRAFT_CLASS.search(msg) else None
    return (StageHit(Stage.KV_CACHE, "load_end", True, draft), _memory(msg))


def _role(what: str) -> bool | None:
    """Whether a capture names the draft model: said (``draft``, ``target``), or left to
    repetition (older EAGLE logs print a plain ``Capture cuda graph`` for both)."""
    if "draft" in what:
        return True
    return False if "target" in what else None


def _graph_begin(msg: str, match: re.Match[str]) -> tuple[Hit, ...]:
    what = match[1].lower()
    return (StageHit(Stage.CUDA_GRAPH, "graph:" + what, True, _role(what), what), _memory(msg))


def _graph_end(msg: str, match: re.Match[str]) -> tuple[Hit, ...]:
    """A capture ended: the rank was capturing even when the log began after the begin line."""
    what = match[1].lower()
    return (StageHit(Stage.CUDA_GRAPH, "graph_end:" + what, True, _role(what), what),
            _memory(msg))  # fmt: skip


def _graph_sizes(_msg: str, match: re.Match[str]) -> tuple[Hit, ...]:
    """``Capture cuda graph bs [1, 2, 4]`` (``cuda_graph_runner.py``): the batch sizes about to
    be captured, the progress bar's total before its first redraw."""
    sizes = match[1].count(",") + 1 if match[1].strip() else 0
    return (ProgressHit(Stage.CUDA_GRAPH, 0, sizes, "Capture cuda graph bs"),) if sizes else ()


def _kv(_msg: str, match: re.Match[str]) -> tuple[Hit, ...]:
    label = (match[1] or "").strip()
    tokens = to_int(match[2]) if match[2] else None
    return (StageHit(Stage.KV_CACHE, "kv:" + label, True), MemoryHit(kv_tokens=tokens))


def _stage(stage: Stage, key: str, draftable: bool = False) -> Callable[..., tuple[Hit, ...]]:
    def hits(msg: str, _match: re.Match[str]) -> tuple[Hit, ...]:
        return (StageHit(stage, key, draftable), _memory(msg))

    return hits


def _launch(msg: str, _match: re.Match[str]) -> tuple[Hit, ...]:
    return (Marker.RUN_STARTED, StageHit(Stage.ARGS, "args"), sglang_args(msg))


_BUSY = re.compile(r"#new-seq: (?:[2-9]|\d\d)|#(?:running|queue)-req: [1-9]")


def _prefill(msg: str) -> tuple[Hit, ...]:
    """A prefill batch; the warm-up is one request alone, more at once is traffic. A lone
    request of one or two prompt tokens on an idle server is a health check (SGLang's
    ``/health`` generates from ``input_ids=[0]``) or bringup's own probe: no activity."""
    if _BUSY.search(msg):
        return (Marker.TRAFFIC,)
    if is_probe_prefill(msg):
        return ()
    return (Marker.BATCH,)


def _fixed(*hits: Hit) -> Callable[..., tuple[Hit, ...]]:
    return lambda _msg, _match: hits


_Rule = tuple[re.Pattern[str], Callable[[str, re.Match[str]], tuple[Hit, ...]]]
_RULES: tuple[_Rule, ...] = tuple(
    (re.compile(pattern), handler)
    for pattern, handler in (
        (r"server_args=", _launch),
        (r"Init (?:torch distributed|parallel|nccl) begin",
         _stage(Stage.DISTRIBUTED_INIT, "dist", True)),
        (r"sglang is using nccl==|Custom allreduce is disabled",
         _stage(Stage.DISTRIBUTED_INIT, "nccl")),
        (r"Load weight begin", _stage(Stage.WEIGHT_LOADING, "load", True)),
        (r"Using model weights format", _stage(Stage.WEIGHT_LOADING, "format")),
        (r"Load weight end", _load_end),
        (
            r"Multimodal attention backend not set|Using \S+ as multimodal attention backend",
            _fixed(StageHit(Stage.MODEL_CONFIG, "attention")),
        ),
        # resolving the arguments: the main process (0.5.10+) or each rank before its
        # distributed init (0.5.2 and older)
        (r"Attention backend not (?:specified|set|explicitly specified)",
         _fixed(StageHit(Stage.ARGS, "args"))),
        (r"(?:([\w -]+?) )?KV Cache (?:is allocated|VA upper bound)\.(?:.*?#tokens: (\d+))?", _kv),
        (r"The available memory for KV cache is", _stage(Stage.KV_CACHE, "kv_avail", True)),
        (r"Mamba Cache is allocated", _stage(Stage.KV_CACHE, "mamba", True)),
        (r"Memory pool end", _stage(Stage.KV_CACHE, "pool_end")),
        (r"Capture (?:cuda|npu|cpu) graph bs \[([\d, ]{0,4000})\]", _graph_sizes),
        (r"Capture ([\w -]+?) end\b", _graph_end),
        (r"Init (?:torch distributed|parallel) ends", _stage(Stage.DISTRIBUTED_INIT, "dist_end")),
        (r"Capture ([\w -]+?) begin\b", _graph_begin),
        (r"max_total_num_tokens=(\d+)",
         lambda _msg, m: (MemoryHit(kv_tokens=to_int(m[1])), Marker.SCHEDULER_READY)),
        (r"The server is fired up and ready to roll", _fixed(Marker.READY)),
        (r"Dummy health check server started", _fixed(Marker.NODE_READY)),
        (r"Decode batch", lambda msg, _m: (decode_hit(msg),)),
        (r"Prefill batch", lambda msg, _m: _prefill(msg)),
        (r"Decode out of memory happened", _fixed(Marker.TRAFFIC)),
        (r"SIGTERM received", _fixed(StopHit("SIGTERM received"))),
        (r"Start of pd disaggregation warmup", _fixed(StageHit(Stage.WARMUP, "pd_warmup"))),
    )
)  # fmt: skip


_RULE_PREFIXES = frozenset(
    ("serv", "Init", "Load", "Mult", "Usin", "Atte", "The ", "Mamb", "Memo", "Capt", "max_",
     "Deco", "Pref", "SIGT", "Star", "Dumm", "sgla", "Cust")
)  # fmt: skip
"""The first four characters of every message a rule above matches, but for ``KV Cache`` lines
(a free-form label comes first)."""

# The same, and the levels in front of uvicorn's lines, but without ``Usin``: a ``Using X as``
# message matters only for the multimodal backend, which ``is_boring`` checks by itself.
_PREFIXES = (_RULE_PREFIXES - {"Usin"}) | {"INFO", "WARN", "ERRO", "DEBU", "CRIT"}


def is_boring(line: str, start: int) -> bool:
    """True when the message at ``line[start:]`` can mean nothing (no rule, no failure, no
    compile or JIT phase)."""
    first = line[start : start + 4]
    if first in _PREFIXES or "KV Cache" in line:
        return False
    if first == "Usin" and "multimodal attention backend" in line:
        return False
    return not maybe_failure(line) and not maybe_phase(line)


def message_hits(msg: str) -> tuple[Hit, ...]:
    """What an SGLang message (the text after the envelope) means, if anything."""
    if msg[:4] in ("INFO", "WARN", "ERRO", "DEBU", "CRIT"):
        request = parse_access(msg)
        if request is not None:
            return (request,)
        lifecycle = uvicorn_hits(msg, ready_on_startup=False)
        if lifecycle is not None:
            return lifecycle
        msg = strip_level(msg)
    if msg[:4] not in _RULE_PREFIXES and "KV Cache" not in msg:
        return _phase(msg)  # most lines: no rule can match, so none is tried
    for pattern, handler in _RULES:
        match = pattern.match(msg)
        if match is not None:
            return handler(msg, match)
    return _phase(msg)


def _phase(msg: str) -> tuple[Hit, ...]:
    return library_hits(msg)
