"""Prometheus text exposition read into the engine's plain samples, by ``prometheus_client``'s
parser (its package also holds an HTTP server, which is why parsing happens here and not in
the pure engine).

An engine answers the same series, in the same order, at every scrape; only their values move.
``ExpositionReader`` therefore has the parser read an answer only when its series differ from
the last one the parser read (the first scrape, a restart, a new label); otherwise it keeps the
names and labels the parser gave and reads each value with ``float``, which takes every value
the format allows (``+Inf``, ``NaN``, exponents). Parsing labels character by character was
most of a scrape's cost in the monitor.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from prometheus_client.parser import text_string_to_metric_families

from tui.engine.metrics.samples import Labels, MetricSample, MetricScrape

MAX_BYTES = 4_000_000
"""A larger answer is not read (a real engine's is tens of kilobytes)."""


class ExpositionError(ValueError):
    """The text is not the Prometheus exposition format; the message says where."""


SERIES_SUFFIXES = ("", "_bucket", "_sum", "_count")


def series_names(names: Iterable[str]) -> frozenset[str]:
    """The sample names a family of each name sends (a histogram's buckets, sum and count)."""
    return frozenset(f"{name}{suffix}" for name in names for suffix in SERIES_SUFFIXES)


def _kept(line: str, wanted: frozenset[str]) -> bool:
    """A line of a wanted series (or its ``# HELP`` and ``# TYPE``), or a blank one."""
    if line.startswith("#"):
        words = line.split(" ", 3)
        return len(words) < 3 or words[1] not in ("HELP", "TYPE") or words[2] in wanted
    end = len(line)
    for stop in ("{", " "):
        found = line.find(stop)
        if 0 <= found < end:
            end = found
    return not line.strip() or line[:end] in wanted


def _kept_text(text: str, wanted: frozenset[str] | None) -> str:
    if len(text) > MAX_BYTES:
        raise ExpositionError(f"/metrics answered {len(text)} characters, more than {MAX_BYTES}")
    if wanted is None:
        return text
    return "".join(line for line in text.splitlines(keepends=True) if _kept(line, wanted))


def _parsed(text: str) -> list[tuple[str, Labels, float]]:
    """Every sample of ``text`` as the parser reads it, ``_created`` series included."""
    try:
        return [
            (sample.name, tuple(sorted(sample.labels.items())), float(sample.value))
            for family in text_string_to_metric_families(text)
            for sample in family.samples
        ]
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        raise ExpositionError(f"/metrics is not Prometheus text: {exc}") from exc


def _scrape(at: float, samples: Iterable[tuple[str, Labels, float]]) -> MetricScrape:
    kept = (MetricSample(*sample) for sample in samples if not sample[0].endswith("_created"))
    return MetricScrape(at, tuple(kept))


def parse_exposition(text: str, at: float, wanted: frozenset[str] | None = None) -> MetricScrape:
    """Every sample of ``text`` (only those named in ``wanted``, when given: the parser then
    reads only their lines), taken at ``at``; ``_created`` series are left out."""
    return _scrape(at, _parsed(_kept_text(text, wanted)))


def _split(line: str) -> tuple[str, str] | None:
    """A sample line as its series (name and labels, as written) and its value; None for a
    comment or a blank line."""
    if not line or line.startswith("#"):
        return None
    end = line.rfind("}") + 1 if "{" in line else line.find(" ")
    if end <= 0:
        return None
    words = line[end:].split()
    return (line[:end], words[0]) if words else None


def _values(lines: list[tuple[str, str]]) -> list[float] | None:
    try:
        return [float(value) for _, value in lines]
    except ValueError:
        return None


def _same(left: float, right: float) -> bool:
    return left == right or (math.isnan(left) and math.isnan(right))


class ExpositionReader:
    """Reads one server's answers, the parser reading only those whose series changed."""

    def __init__(self, wanted: frozenset[str] | None = None) -> None:
        self.wanted = wanted
        self._series: tuple[str, ...] = ()
        """The series (as written) of the last answer the parser read, in order."""
        self._names: tuple[tuple[str, Labels], ...] = ()
        """What the parser made of each of them."""
        self.parsed = 0
        """Answers the parser read (the others reused its names and labels)."""

    def read(self, text: str, at: float) -> MetricScrape:
        kept = _kept_text(text, self.wanted)
        lines = [split for line in kept.splitlines() if (split := _split(line)) is not None]
        series = tuple(name for name, _ in lines)
        if series and series == self._series:
            values = _values(lines)
            if values is not None:
                known = zip(self._names, values, strict=True)
                return _scrape(at, ((name, labels, v) for (name, labels), v in known))
        samples = _parsed(kept)
        self.parsed += 1
        self._remember(lines, samples)
        return _scrape(at, samples)

    def _remember(
        self, lines: list[tuple[str, str]], samples: list[tuple[str, Labels, float]]
    ) -> None:
        """Keep the parser's names for these series, if its samples line up one for one with
        the lines (same count, same values); otherwise the next answer is parsed again."""
        self._series, self._names = (), ()
        values = _values(lines)
        if values is None or len(values) != len(samples):
            return
        pairs = zip(values, samples, strict=True)
        if not all(_same(mine, theirs) for mine, (_, _, theirs) in pairs):
            return
        self._series = tuple(series for series, _ in lines)
        self._names = tuple((name, labels) for name, labels, _ in samples)
