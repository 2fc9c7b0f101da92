"""Plans for the bulk path (``tui.engine.logs.bulk_read``): which lines of a batch are plain.

Batches are lines as bytes, every one printable ASCII (``tui.engine.logs.plain_bytes`` sends the
others through the text path), so a byte offset is a character offset and decoding is exact.
A line is *plain* when the per-line fast path would absorb it without the full grammar: its
stamp is valid, its key has a known shape of a known rank, the shape is confirmed when the key
alone cannot settle it, an ``other`` message is quiet, and an access line is a well-formed one
without a server error.

Keys are classified once (``Keys``, kept from batch to batch while the model's state stays the
same) into *groups* of keys that mean the same (one rank's decode lines, access lines, quiet
lines whose message starts at one column, ...), each with a one-byte *code*. A plan turns the
batch into one code per line, a ``bytes`` object, in a single pass; from there every question
the bulk path asks is a C-speed operation on bytes: ``translate`` to a 0/1 *selector* for some
groups, ``compress`` to pick their lines, ``find`` for the first of them in a bucket, ``count``
and ``rfind`` for a rank's line count and last line. The other tests run once per distinct
stamp or message, or once over the joined lines concerned. Only the lines that fail a test
are looked at one by one.
"""

from __future__ import annotations

import operator
import re
from bisect import bisect_right
from itertools import compress, islice
from typing import TYPE_CHECKING

from tui.engine.servers.monitor_traffic import MONITOR_MARK_BYTES
from tui.engine.servers.sglang.sglang_shapes import (
    ACCESS,
    DECODE,
    KEY_END,
    KEY_START,
    OTHER,
    SLOW,
    SLOW_KNOWN,
    Known,
    Shape,
    valid_stamp,
)

if TYPE_CHECKING:
    from tui.engine.logs.line_scan import Scanner

SLOW_SHARE = 8
"""When more than one line in this many is slow, the batch goes line by line."""
BUCKET_SHARE = 8
"""When there are more stamps than one per this many lines, the batch goes line by line."""
MAX_TAGS = 16
"""Ranks printing decode lines beyond which a batch goes line by line (each rank's first line
in each ten-second bucket is looked for separately)."""
MAX_KEYS = 2048
"""Keys classified before the classification starts over."""
NONE, SLOW_CODE = 0, 1
"""Codes of lines before a plan's start, and of slow lines; groups take the codes above."""
MAX_CODE = 255

_KEY = operator.itemgetter(slice(KEY_START, KEY_END))
_STAMP = operator.itemgetter(slice(0, KEY_START))
_ACCESS_MARK = b' - "'
_SERVER_ERROR = b'" 5'
_SERVER_ERROR_SEARCH = re.compile(re.escape(_SERVER_ERROR)).search
_MONITOR_SEARCH = re.compile(re.escape(MONITOR_MARK_BYTES)).search
"""Faster than ``in`` for this needle (its rare first byte is what the regex looks for)."""
STAND_IN = b"\0"
"""The key of an odd line's stand-in (no plain line holds a NUL)."""
_BRACKET = b"]"
_NUL = b"\0"
_MARKED = _ACCESS_MARK[:-1] + _NUL
_ALL_BUT_NUL_AND_NEWLINE = bytes(code for code in range(256) if code not in (0, 10))

Codes = tuple[int, ...]
Bucket = tuple[int, int, bytes]
"""Lines ``start`` to ``stop`` of a batch share a stamp: ``[`` and a ten-second bucket."""
Group = tuple[str, int, int, Shape | None]
"""Rank, kind, message start, and the shape each line must confirm (None when none)."""


class Batch:
    """A batch of complete lines, with what does not depend on the model's state."""

    __slots__ = ("base", "buckets", "lines", "odd")

    def __init__(self, lines: list[bytes], odd: dict[int, bytes], base: int) -> None:
        self.lines = lines
        """The lines, each odd one replaced by a stand-in (see ``_stand_in``)."""
        self.odd = odd
        """The lines that are not printable ASCII, by index, as they came."""
        self.base = base
        """The model's line count before the batch: ``lines[i]`` is line ``base + i + 1``."""
        for row in odd:
            lines[row] = _stand_in(lines, odd, row)
        self.buckets = _buckets(lines)
        """Each stamp's lines, when the stamps never go back in time (else None)."""


def _stand_in(lines: list[bytes], odd: dict[int, bytes], row: int) -> bytes:
    """What takes an odd line's place in a plan: a slow line (its key is ``STAND_IN``) with
    the stamp of the line before it (of the first line that is not odd, for the first line),
    so that the stamps stay in order."""
    if row:
        neighbour = lines[row - 1]
    else:
        neighbour = next((line for index, line in enumerate(lines) if index not in odd), b"")
    return neighbour[:KEY_START] + STAND_IN


def _buckets(lines: list[bytes]) -> list[Bucket] | None:
    """The lines of each stamp, found by bisection as if the stamps were in order, then
    checked: the lines from ``start`` to ``stop`` all begin with ``stamp`` when the least and
    the greatest of them do (strings with one prefix are together in sorted order)."""
    buckets: list[Bucket] = []
    start, end, previous = 0, len(lines), b""
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
    """What every key seen under one state of the model means, as one code per group of keys
    (shapes name ranks of a run, so a new state needs new ``Keys``)."""

    def __init__(self, signature: tuple[int, int, bool]) -> None:
        self.signature = signature
        self.codes: dict[bytes, int] = {STAND_IN: SLOW_CODE}
        """The code of every key seen."""
        self.groups: list[Known] = [SLOW_KNOWN, SLOW_KNOWN]
        """Each code's shape (codes 0 and 1 are not groups)."""
        self._group_codes: dict[Group, int] = {}
        self.decode: dict[str, Codes] = {}
        """Each rank's codes of decode lines."""
        self.decode_all: Codes = ()
        self.access: Codes = ()
        self.other: dict[int, Codes] = {}
        """Codes of ``other`` lines, by where their message starts."""
        self.checked: dict[Shape, Codes] = {}
        """Codes whose lines must each confirm the shape."""
        self.tags: list[str] = []
        """Ranks in the order of their index in ``tag_table``."""
        self.tag_table = bytes(256)
        """Each code's rank, as its index in ``tags`` plus one (0 for no rank)."""
        self._tables: dict[Codes, bytes] = {}

    def usable(self, signature: tuple[int, int, bool]) -> bool:
        """True while the state is the same and not too many keys were seen."""
        return signature == self.signature and len(self.codes) <= MAX_KEYS

    def code_lines(self, scanner: Scanner, lines: list[bytes], start: int) -> bytes | None:
        """The code of each line from ``start`` on (``NONE`` before it); None when a key has
        a fraction of a second or there are too many groups."""
        code = self.codes.__getitem__
        rest = islice(lines, start, None) if start else lines
        try:
            codes = bytes(map(code, map(_KEY, rest)))
        except KeyError:
            keys = set(map(_KEY, islice(lines, start, None)))
            if not self._learn(scanner, keys - self.codes.keys()):
                return None
            codes = bytes(map(code, map(_KEY, islice(lines, start, None))))
        return bytes(start) + codes if start else codes

    def table(self, wanted: Codes) -> bytes:
        """The ``translate`` table that maps the ``wanted`` codes to 1, every other to 0."""
        table = self._tables.get(wanted)
        if table is None:
            chosen = bytearray(256)
            for code in wanted:
                chosen[code] = 1
            table = self._tables[wanted] = bytes(chosen)
        return table

    def _learn(self, scanner: Scanner, keys: set[bytes]) -> bool:
        for key in keys:
            shape = scanner.known(key.decode("ascii"))
            if shape is None:
                return False
            if shape[1] == SLOW:
                self.codes[key] = SLOW_CODE
                continue
            tag, kind, at, check, full = shape
            group = (tag, kind, at, full if check else None)
            code = self._group_codes.get(group)
            if code is None:
                if len(self.groups) > MAX_CODE:
                    return False
                code = self._add(group, shape)
            self.codes[key] = code
        return True

    def _add(self, group: Group, shape: Known) -> int:
        code = self._group_codes[group] = len(self.groups)
        self.groups.append(shape)
        tag, kind, at, full = group
        if kind == DECODE:
            self.decode[tag] = (*self.decode.get(tag, ()), code)
            self.decode_all = (*self.decode_all, code)
        elif kind == ACCESS:
            self.access = (*self.access, code)
        elif kind == OTHER:
            self.other[at] = (*self.other.get(at, ()), code)
        if full is not None:
            self.checked[full] = (*self.checked.get(full, ()), code)
        if tag not in self.tags:
            self.tags.append(tag)
        table = bytearray(self.tag_table)
        table[code] = self.tags.index(tag) + 1
        self.tag_table = bytes(table)
        return code


class Plan:
    """The lines from ``start`` on, given the model's state when it was made."""

    __slots__ = ("_selectors", "buckets", "codes", "keys", "lines", "slow", "start", "tagged")

    def __init__(
        self, start: int, keys: Keys, buckets: list[Bucket], lines: list[bytes], codes: bytes
    ) -> None:
        self.start = start
        self.keys = keys
        self.buckets = buckets
        self.lines = lines
        self.codes = codes
        self.tagged = codes.translate(keys.tag_table)
        """Each line's rank (see ``Keys.tag_table``)."""
        self.slow: list[int] = []
        """Indices of the slow lines, in order."""
        self._selectors: dict[Codes, bytes] = {}

    def selector(self, wanted: Codes) -> bytes:
        """1 for each line whose code is one of ``wanted``, else 0."""
        found = self._selectors.get(wanted)
        if found is None:
            found = self._selectors[wanted] = self.codes.translate(self.keys.table(wanted))
        return found

    def present(self, wanted: Codes) -> bool:
        """True when some line from ``start`` on has one of the ``wanted`` codes."""
        return any(self.codes.find(code, self.start) >= 0 for code in wanted)

    def chosen(self, wanted: Codes, start: int, stop: int) -> list[bytes]:
        """The lines from ``start`` to ``stop`` with one of the ``wanted`` codes."""
        selector = self.selector(wanted)
        if start == 0 and stop == len(self.lines):
            return list(compress(self.lines, selector))
        return list(compress(self.lines[start:stop], selector[start:stop]))

    def indices(self, wanted: Codes, start: int, stop: int) -> list[int]:
        """Indices from ``start`` to ``stop`` of the lines with one of the ``wanted`` codes."""
        return list(compress(range(start, stop), self.selector(wanted)[start:stop]))


def make_plan(scanner: Scanner, keys: Keys, batch: Batch, start: int) -> Plan | None:
    """Classify ``batch.lines[start:]``; None when the per-line path is the better way: some
    stamp is not valid or goes back in time, a key has a fraction of a second, there are many
    groups, many ranks print decode lines or many lines are slow."""
    buckets = batch.buckets
    if buckets is None or not all(_valid(scanner, stamp) for _, _, stamp in buckets):
        return None
    codes = keys.code_lines(scanner, batch.lines, start)
    if codes is None or len(keys.decode) > MAX_TAGS:
        return None
    plan = Plan(start, keys, buckets, batch.lines, codes)
    plan.slow = _slow_lines(scanner, plan)
    if len(plan.slow) * SLOW_SHARE > len(batch.lines) - start:
        return None
    return plan


def _valid(scanner: Scanner, stamp: bytes) -> bool:
    text = stamp.decode("ascii")
    return text == scanner.stamp or valid_stamp(text)


def _slow_lines(scanner: Scanner, plan: Plan) -> list[int]:
    """Indices of every line the fast path would read through the full grammar."""
    keys, codes, end = plan.keys, plan.codes, len(plan.lines)
    slow: set[int] = set()
    found = codes.find(SLOW_CODE, plan.start)
    while found >= 0:
        slow.add(found)
        found = codes.find(SLOW_CODE, found + 1)
    for shape, group in keys.checked.items():
        if plan.present(group):
            slow.update(_unconfirmed(plan, shape, group, end))
    for at, group in keys.other.items():
        if plan.present(group):
            slow.update(_noisy(scanner, plan, at, group, end))
    if plan.present(keys.access):
        slow.update(_odd_access(plan, keys.access, end))
    return sorted(slow)


def _unconfirmed(plan: Plan, shape: Shape, group: Codes, end: int) -> list[int]:
    """Lines of codes that need each line to confirm its shape, and which do not."""
    lines = plan.chosen(group, plan.start, end)
    head = shape.head.encode("ascii")
    where = slice(shape.at, shape.at + len(head))
    confirmed = not head or set(map(operator.itemgetter(where), lines)) <= {head}
    if confirmed and shape.open:
        messages = map(operator.itemgetter(slice(shape.at, None)), lines)
        confirmed = _BRACKET not in b"\n".join(messages)
    if confirmed:
        return []
    refuted = (not shape.confirm(line.decode("ascii")) for line in lines)
    return list(compress(plan.indices(group, plan.start, end), refuted))


def _noisy(scanner: Scanner, plan: Plan, at: int, group: Codes, end: int) -> list[int]:
    """``other`` lines whose message may mean something (judged once per distinct text)."""
    message = operator.itemgetter(slice(at, None))
    lines = plan.chosen(group, plan.start, end)
    noisy = {text for text in set(map(message, lines)) if not scanner.quiet(text.decode("ascii"))}
    if not noisy:
        return []
    flags = map(noisy.__contains__, map(message, lines))
    return list(compress(plan.indices(group, plan.start, end), flags))


def _odd_access(plan: Plan, group: Codes, end: int) -> list[int]:
    """Access-shaped lines that are not well-formed requests, report a server error, or show a
    request of the monitor itself (the per-line path leaves those uncounted)."""
    lines = plan.chosen(group, plan.start, end)
    if _one_mark_each(lines):
        return []
    return [
        index
        for index, line in zip(plan.indices(group, plan.start, end), lines, strict=True)
        if _ACCESS_MARK not in line or _SERVER_ERROR in line or MONITOR_MARK_BYTES in line
    ]


def _one_mark_each(lines: list[bytes]) -> bool:
    """True when each line holds the access mark exactly once and no server error, decided for
    all lines at once (a method call per line costs more): with the quote of each mark turned
    into a NUL (which a plain line never holds; a replacement of the same length is a plain
    copy) and everything but NULs and newlines deleted, what is left must alternate."""
    if not lines:
        return True
    joined = b"\n".join(lines)
    if _SERVER_ERROR_SEARCH(joined) is not None or _MONITOR_SEARCH(joined) is not None:
        return False
    marks = joined.replace(_ACCESS_MARK, _MARKED).translate(None, _ALL_BUT_NUL_AND_NEWLINE)
    return marks == b"\0\n" * (len(lines) - 1) + _NUL
