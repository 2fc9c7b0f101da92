"""The engines' own benchmark tools: their command lines and the summary they print.

``python -m sglang.bench_serving`` and ``vllm bench serve`` both end with a table inside a banner::

    ============ Serving Benchmark Result ============
    Successful requests:                     64
    Benchmark duration (s):                  12.34
    ...
    ---------------Time to First Token----------------
    Mean TTFT (ms):                          45.67
    ...
    ==================================================

Every row is ``label:`` padded to 40 columns, then the value. ``parse_summaries`` reads each
banner into a flat dict named like the built-in client's results (``completed``, ``duration``,
``output_throughput``, ``median_ttft_ms``, ...), so official and built-in runs are stored and
compared alike. Older versions print fewer rows; missing rows are simply absent.

SGLang's ``Accept length`` row is the server's lifetime average (read from ``/server_info``),
not the run's, so it is stored as ``server_avg_spec_accept_length_after``; vLLM's
``Acceptance length`` is differenced over the run and stored as
``spec_decode_acceptance_length``.

The output is untrusted: it is sanitized first, a row whose value is not what its label
promises is reported in ``problems`` (with its line number) and kept out of the fields, and
nothing raises except a text with no summary at all.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tui.engine.bench.load_plan import LoadLevel
from tui.engine.bench.official_load import load_argv
from tui.engine.logs.sanitize import sanitize_text
from tui.engine.servers import registry

_BANNER = re.compile(r"^=+\s*Serving Benchmark Result\s*=+$", re.IGNORECASE)
_CLOSING = re.compile(r"^={10,}$")
_SECTION = re.compile(r"^-{2,}.*-{2,}$")
_ROW = re.compile(r"^(?P<key>[A-Za-z][^:]{2,39}):\s+(?P<value>\S(?:.*\S)?)\s*$")
_STAT = re.compile(
    r"^(?P<stat>mean|median|std|max|p\d{1,2}(?:\.\d+)?) "
    r"(?P<metric>ttft|tpot|itl|e2el|e2e latency) \(ms\)$"
)
_METRIC_NAMES = {"e2e latency": "e2el"}


def _integer(text: str) -> int | None:
    value = float(text)
    if not value.is_integer() or value < 0:
        raise ValueError(text)
    return int(value)


def _number(text: str) -> float | None:
    value = float(text)
    if math.isnan(value):
        raise ValueError(text)
    return value


def _optional_integer(text: str) -> int | None:
    return None if text.lower() in ("not set", "none", "inf") else _integer(text)


def _word(text: str) -> str:
    return text[:80]


Reader = Callable[[str], object]

ROWS: dict[str, tuple[str, Reader]] = {
    "backend": ("backend", _word),
    "traffic request rate": ("request_rate", _number),
    "request rate configured (rps)": ("request_rate", _number),
    "max request concurrency": ("max_concurrency", _optional_integer),
    "maximum request concurrency": ("max_concurrency", _optional_integer),
    "successful requests": ("completed", _integer),
    "failed requests": ("failed", _integer),
    "benchmark duration (s)": ("duration", _number),
    "total input tokens": ("total_input_tokens", _integer),
    "total input text tokens": ("total_input_text_tokens", _integer),
    "total input vision tokens": ("total_input_vision_tokens", _integer),
    "total generated tokens": ("total_output_tokens", _integer),
    "total generated tokens (retokenized)": ("total_output_tokens_retokenized", _integer),
    "request throughput (req/s)": ("request_throughput", _number),
    "request goodput (req/s)": ("request_goodput", _number),
    "input token throughput (tok/s)": ("input_throughput", _number),
    "output token throughput (tok/s)": ("output_throughput", _number),
    "peak output token throughput (tok/s)": ("max_output_tokens_per_s", _number),
    "peak concurrent requests": ("max_concurrent_requests", _number),
    "total token throughput (tok/s)": ("total_token_throughput", _number),
    "concurrency": ("concurrency", _number),
    "accept length": ("server_avg_spec_accept_length_after", _number),
    "acceptance length": ("spec_decode_acceptance_length", _number),
    "acceptance rate (%)": ("spec_decode_acceptance_rate", _number),
    "drafts": ("spec_decode_num_drafts", _integer),
    "draft tokens": ("spec_decode_draft_tokens", _integer),
    "accepted tokens": ("spec_decode_accepted_tokens", _integer),
}
"""Row label (lower case, single spaces) to result field and how its value reads."""


class OfficialSummaryError(ValueError):
    """The text holds no benchmark summary; the message says what was looked for."""


@dataclass(frozen=True, slots=True)
class OfficialSummary:
    """One summary table: its fields, whether its closing rule was seen, and what was odd."""

    fields: dict[str, Any]
    tool: str
    """``sglang`` or ``vllm`` as far as the rows tell (``unknown`` when they do not)."""
    complete: bool
    problems: tuple[str, ...] = ()
    unknown_rows: tuple[str, ...] = ()
    first_line: int = 0


def _label(key: str) -> str:
    return " ".join(key.split()).lower()


def _field(label: str) -> tuple[str, Reader] | None:
    known = ROWS.get(label)
    if known is not None:
        return known
    stat = _STAT.match(label)
    if stat is None:
        return None
    metric = _METRIC_NAMES.get(stat["metric"], stat["metric"])
    return f"{stat['stat']}_{metric}_ms", _number


def _tool(fields: dict[str, Any], labels: Sequence[str]) -> str:
    """The engine whose tool printed the summary, by its backend or the rows only it prints."""
    backend = str(fields.get("backend", "")).lower()
    found = (d.name for d in registry.dialects() if d.bench_tool.printed(backend, labels))
    return next(found, registry.UNKNOWN)


class _Table:
    """The rows of one banner as they are read."""

    def __init__(self, first_line: int) -> None:
        self.first_line = first_line
        self.fields: dict[str, Any] = {}
        self.labels: list[str] = []
        self.problems: list[str] = []
        self.unknown: list[str] = []

    def add(self, number: int, line: str) -> None:
        row = _ROW.match(line)
        if row is None:
            return
        label = _label(row["key"])
        self.labels.append(label)
        known = _field(label)
        if known is None:
            self.unknown.append(label)
            return
        name, read = known
        try:
            self.fields[name] = read(row["value"])
        except ValueError:
            self.problems.append(
                f"line {number}: {row['key'].strip()!r} is not a valid value: {row['value'][:40]!r}"
            )

    def summary(self, complete: bool) -> OfficialSummary:
        return OfficialSummary(
            fields=self.fields,
            tool=_tool(self.fields, self.labels),
            complete=complete,
            problems=tuple(self.problems),
            unknown_rows=tuple(self.unknown),
            first_line=self.first_line,
        )


def parse_summaries(text: str) -> list[OfficialSummary]:
    """Every summary table in ``text`` (a tool's whole output), in order; may be empty.

    A table cut off before its closing rule is returned with ``complete=False``.
    """
    found: list[OfficialSummary] = []
    table: _Table | None = None
    for number, raw in enumerate(sanitize_text(text).splitlines(), start=1):
        line = raw.strip()
        if _BANNER.match(line):
            if table is not None:
                found.append(table.summary(False))
            table = _Table(number)
        elif table is not None and _CLOSING.match(line):
            found.append(table.summary(True))
            table = None
        elif table is not None and not _SECTION.match(line):
            table.add(number, raw.rstrip())
    if table is not None:
        found.append(table.summary(False))
    return found


def parse_summary(text: str) -> OfficialSummary:
    """The last summary table in ``text``; ``OfficialSummaryError`` when there is none."""
    found = parse_summaries(text)
    if not found:
        raise OfficialSummaryError(
            "the output has no 'Serving Benchmark Result' table (did the benchmark start?)"
        )
    return found[-1]


@dataclass(frozen=True, slots=True)
class OfficialRun:
    """What to ask of the engine's tool: one level of a random-prompt workload, closed loop
    (``request_rate`` None) or open loop."""

    engine: str
    port: int
    concurrency: int
    """Closed loop: the requests in flight; open loop: their cap (0: none)."""
    num_prompts: int
    input_len: int
    output_len: int
    seed: int = 0
    warmup_requests: int = 1
    ignore_eos: bool = True
    model: str | None = None
    host: str = "127.0.0.1"
    dataset_path: str | None = None
    """A ShareGPT file on the host the profile names; without it nothing is downloaded."""
    request_rate: float | None = None
    """Open-loop arrivals per second (``inf``: all at once); None for a closed-loop level."""
    burstiness: float = 1.0

    @property
    def level(self) -> LoadLevel:
        return LoadLevel(self.concurrency, self.request_rate, self.burstiness)


def official_argv(run: OfficialRun, python: str = "python3") -> list[str]:
    """The tool's command line (``Dialect.bench_tool``): ``vllm bench serve`` for vLLM, the
    default engine's (``sglang.bench_serving``) when the engine is not known.

    Prompts are random with fixed lengths (SGLang's ``--random-range-ratio 1``; vLLM's random
    dataset is fixed-length by default), so the workload matches the built-in client's. The
    random dataset is the one that needs no download (SGLang's ``random-ids``: its ``random``
    samples ShareGPT text, fetched from the hub); a ShareGPT file is used only when the profile
    names one. The load options are ``official_load.load_argv``'s.
    """
    tool = registry.or_default(run.engine).bench_tool
    dataset = ["--dataset-name", tool.offline_dataset]
    if run.dataset_path:
        dataset = ["--dataset-name", "sharegpt", "--dataset-path", run.dataset_path]
    common = [
        "--host", run.host, "--port", str(run.port), *dataset,
        "--random-input-len", str(run.input_len), "--random-output-len", str(run.output_len),
        "--num-prompts", str(run.num_prompts), *load_argv(run.level, tool.backend),
        "--seed", str(run.seed),
    ]  # fmt: skip
    model = ["--model", run.model] if run.model else []
    return tool.argv(python, model, common, run.warmup_requests, run.ignore_eos)
