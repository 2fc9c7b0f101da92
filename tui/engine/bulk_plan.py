"""Plans for the bulk path (``tui.engine.bulk``): which lines of a batch are plain.

A line is *plain* when the per-line fast path would absorb it without the full grammar: its
stamp is valid, its key has a known shape of a known rank, the shape is confirmed when the key
alone cannot settle it, an ``other`` message is quiet, and an access line is a well-formed one
without a server error. Keys are classified once (``Keys``, kept from batch to batch while the
model's state stays the same); the other tests run once per distinct stamp or message, or as a
``map`` over the lines concerned. Only the lines that fail a test are looked at one by one.
"""

from __future__ import annotations

import operator
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import compress, islice, repeat
from typing import TYPE_CHECKING

from tui.engine.grammar.shapes import (
    ACCESS,
    DECODE,
    KEY_END,
    KEY_START,
    OTHER,
    SLOW,
    Known,
    Shape,
    valid_stamp,
)

if TYPE_CHECKING:
    from tui.engine.scan import Scanner

SLOW_SHARE = 8
"""When more than one line in this many is slow, the batch goes line by line."""
BUCKET_SHARE = 8
"""When there are more stamps than one per this many lines, the batch goes line by line."""
MAX_TAGS = 16
"""Ranks printing decode lines beyond which a batch goes line by line (each rank's first line
in each ten-second bucket is looked for separately)."""
MAX_KEYS = 2048
"""Keys classified before the classification starts over."""
_KEY = operator.itemgetter(slice(KEY_START, KEY_END))
_STAMP = operator.itemgetter(slice(0, KEY_START))
_ACCESS_MARK = ' - "'
_SERVER_ERROR = '" 5'


Bucket = tuple[int, int, str]
"""Lines ``start`` to ``stop`` of a batch share a stamp: ``[`` and a ten-second bucket."""


class Batch:
    """A batch of complete lines, with what does not depend on the model's state."""

    __slots__ = ("base", "buckets", "counts", "keys", "lines")

    def __init__(self, lines: list[str], base: int) -> None:
        self.lines = lines
        self.base = base
        """The model's line count before the batch: ``lines[i]`` is line ``base + i + 1``."""
        self.keys = list(map(_KEY, lines))
        self.counts = Counter(self.keys)
        self.buckets = _buckets(lines)
        """Each stamp's lines, when the stamps never go back in time (else None)."""

    def indices(self, wanted: set[str], start: int) -> list[int]:
        """Indices from ``start`` on of the lines whose key is in ``wanted``."""
        found = map(wanted.__contains__, self._from(self.keys, start))
        return list(compress(range(start, len(self.lines)), found))

    def chosen(self, wanted: set[str], start: int) -> list[str]:
        """The lines from ``start`` on whose key is in ``wanted``."""
        found = map(wanted.__contains__, self._from(self.keys, start))
        return list(compress(self._from(self.lines, start), found))

    @staticmethod
    def _from(items: list[str], start: int) -> Iterable[str]:
        return islice(items, start, None) if start else items


def _buckets(lines: list[str]) -> list[Bucket] | None:
    """The lines of each stamp, found by bisection as if the stamps were in order, then
    checked: the lines from ``start`` to ``stop`` all begin with ``stamp`` when the least and
    the greatest of them do (strings with one prefix are together in sorted order)."""
    buckets: list[Bucket] = []
    start, end, previous = 0, len(lines), ""
    while start < end:
        stamp = lines[start][:KEY_START]
        stop = bisect_right(lines, stamp, start, end, key=_STAMP)
        run = lines[start:stop]
        if stamp <= previous or not (min(run).startswith(stamp) and max(run).startswith(stamp)):
            return None
        if len(buckets) * BUCKET_SHARE > end:
            return None
        buckets.append((start, stop, stamp))
        start, previous = stop, stamp
    return buckets


class Keys:
    """What every key seen under one state of the model means, grouped the way the bulk path
    asks (shapes name ranks of a run, so a new state needs new ``Keys``)."""

    def __init__(self, signature: tuple[int, int, bool]) -> None:
        self.signature = signature
        self.known: dict[str, Known] = {}
        """The shape of every key of a plain line."""
        self.slow: set[str] = set()
        self.decode: dict[str, set[str]] = {}
        """Each rank's keys of decode lines."""
        self.decode_keys: set[str] = set()
        self.access: set[str] = set()
        self.other: dict[int, set[str]] = {}
        """Keys of ``other`` lines, by where their message starts."""
        self.checked: dict[Shape, set[str]] = {}
        """Keys whose lines must each confirm the shape."""
        self.tags: dict[str, set[str]] = {}
        """Each rank's keys."""

    def usable(self, signature: tuple[int, int, bool]) -> bool:
        """True while the state is the same and not too many keys were seen."""
        return signature == self.signature and len(self.known) + len(self.slow) <= MAX_KEYS

    def learn(self, scanner: Scanner, keys: set[str]) -> bool:
        """Classify the keys not seen yet; False when one has a fraction of a second."""
        for key in keys - self.known.keys() - self.slow:
            shape = scanner.known(key)
            if shape is None:
                return False
            if shape[1] == SLOW:
                self.slow.add(key)
            else:
                self._add(key, shape)
        return True

    def _add(self, key: str, shape: Known) -> None:
        tag, kind, at, check, full = self.known[key] = shape
        self.tags.setdefault(tag, set()).add(key)
        if kind == DECODE:
            self.decode.setdefault(tag, set()).add(key)
            self.decode_keys.add(key)
        elif kind == ACCESS:
            self.access.add(key)
        elif kind == OTHER:
            self.other.setdefault(at, set()).add(key)
        if check:
            self.checked.setdefault(full, set()).add(key)


@dataclass(frozen=True, slots=True)
class Plan:
    """The lines from ``start`` on, given the model's state when it was made."""

    start: int
    keys: Keys
    buckets: list[Bucket]
    slow: list[int]
    """Indices of the slow lines, in order."""


def make_plan(scanner: Scanner, keys: Keys, batch: Batch, start: int) -> Plan | None:
    """Classify ``batch.lines[start:]``; None when the per-line path is the better way: some
    stamp is not valid or goes back in time, a key has a fraction of a second, many ranks
    print decode lines or many lines are slow."""
    buckets = batch.buckets
    if buckets is None or not all(_valid(scanner, stamp) for _, _, stamp in buckets):
        return None
    distinct = set(islice(batch.keys, start, None)) if start else set(batch.counts)
    if not keys.learn(scanner, distinct) or len(keys.decode) > MAX_TAGS:
        return None
    slow = _slow_lines(scanner, keys, batch, start, distinct)
    if len(slow) * SLOW_SHARE > len(batch.lines) - start:
        return None
    return Plan(start, keys, buckets, slow)


def _valid(scanner: Scanner, stamp: str) -> bool:
    return stamp == scanner.stamp or valid_stamp(stamp)


def _slow_lines(
    scanner: Scanner, keys: Keys, batch: Batch, start: int, distinct: set[str]
) -> list[int]:
    """Indices of every line the fast path would read through the full grammar."""
    slow: set[int] = set()
    if not keys.slow.isdisjoint(distinct):
        slow.update(batch.indices(keys.slow, start))
    for shape, group in keys.checked.items():
        if not group.isdisjoint(distinct):
            slow.update(_unconfirmed(batch, start, shape, group))
    for at, group in keys.other.items():
        if not group.isdisjoint(distinct):
            slow.update(_noisy(scanner, batch, start, at, group))
    if not keys.access.isdisjoint(distinct):
        slow.update(_odd_access(batch, start, keys.access))
    return sorted(slow)


def _unconfirmed(batch: Batch, start: int, shape: Shape, group: set[str]) -> Iterator[int]:
    """Lines of keys that need each line to confirm its shape, and which do not."""
    lines = batch.chosen(group, start)
    at = repeat(shape.at)
    confirmed = not shape.head or all(map(str.startswith, lines, repeat(shape.head), at))
    if confirmed and shape.open:
        confirmed = max(map(str.find, lines, repeat("]"), repeat(shape.at)), default=-1) < 0
    if not confirmed:
        yield from compress(batch.indices(group, start), (not shape.confirm(x) for x in lines))


def _noisy(scanner: Scanner, batch: Batch, start: int, at: int, group: set[str]) -> Iterator[int]:
    """``other`` lines whose message may mean something (judged once per distinct text)."""
    messages = list(map(operator.itemgetter(slice(at, None)), batch.chosen(group, start)))
    noisy = {message for message in set(messages) if not scanner.quiet(message)}
    if noisy:
        yield from compress(batch.indices(group, start), map(noisy.__contains__, messages))


def _odd_access(batch: Batch, start: int, group: set[str]) -> Iterator[int]:
    """Access-shaped lines that are not well-formed requests, or report a server error."""
    lines = batch.chosen(group, start)
    if all(map(operator.contains, lines, repeat(_ACCESS_MARK))) and not any(
        map(operator.contains, lines, repeat(_SERVER_ERROR))
    ):
        return
    for index, line in zip(batch.indices(group, start), lines, strict=True):
        if _ACCESS_MARK not in line or _SERVER_ERROR in line:
            yield index
