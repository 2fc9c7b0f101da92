"""Find the lines of a chunk that need cleaning, so that the others can stay bytes.

A serving log is almost all printable ASCII. Such lines need no decoding beyond the bytes
themselves and no sanitizing, so the bulk path reads them as bytes (splitting, slicing and
counting bytes costs about half what the same work costs on text). ``odd_spans`` finds the
lines that do need the text path: a line holding a control character other than tab (an escape
sequence, a ``\\r`` redraw, NUL, DEL) or any byte outside ASCII (UTF-8 text, invalid UTF-8, the
8-bit C1 controls). Every search runs at C speed: one ``translate`` over the chunk keeps only
the odd bytes, then ``bytes.find`` looks for each distinct one (or, when there are many, an
ASCII decode stops at the first byte outside ASCII).
"""

from __future__ import annotations

import codecs
from collections.abc import Callable

from tui.engine.logs.sanitize import MAX_LINE_CHARS, may_hold_long_line

Span = tuple[int, int]
"""Byte offsets of one line, its newline included: ``data[start:stop]``."""

BYTES_PER_ODD_LINE = 1024
"""When odd lines are more common than one in this many bytes, the text path is as fast."""
MAX_FINDS = 16
"""Distinct odd bytes looked for one by one; beyond this, the bytes outside ASCII are found by
decoding."""
_PLAIN = bytes([0x09, 0x0A, *range(0x20, 0x7F)])


def odd_spans(
    data: bytes, start: int = 0, stop: int | None = None, limit: int = MAX_LINE_CHARS
) -> list[Span] | None:
    """The spans of the lines of ``data[start:stop]`` that need the text path, in order, as
    offsets in ``data``; None when all those lines should take it (a line may be longer than
    ``limit``, or odd lines are common). ``start`` is 0 or follows a newline; the byte before
    ``stop`` is a newline."""
    stop = len(data) if stop is None else stop
    if may_hold_long_line(data, limit, b"\n", start, stop):
        return None
    odd = set(data.translate(None, _PLAIN))
    if len(odd) > MAX_FINDS:
        finders = [_finder(data, code, stop) for code in odd if code < 0x80]
        finders.append(_non_ascii_finder(data, stop))
    else:
        finders = [_finder(data, code, stop) for code in odd]
    spans: list[Span] = []
    upcoming = [find(start) for find in finders]
    most = (stop - start) // BYTES_PER_ODD_LINE + 1
    while live := [at for at in upcoming if at >= 0]:
        at = min(live)
        first = data.rfind(b"\n", 0, at) + 1
        after = data.find(b"\n", at) + 1
        spans.append((first, after))
        if len(spans) > most:
            return None
        upcoming = [find(after) if 0 <= found < after else found
                    for find, found in zip(finders, upcoming, strict=True)]  # fmt: skip
    return spans


def _finder(data: bytes, code: int, stop: int) -> Callable[[int], int]:
    needle = bytes((code,))
    return lambda start: data.find(needle, start, stop)


def _non_ascii_finder(data: bytes, stop: int) -> Callable[[int], int]:
    """The offset of the first byte outside ASCII from ``start`` until ``stop``, or -1."""
    view = memoryview(data)

    def find(start: int) -> int:
        try:
            codecs.ascii_decode(view[start:stop])
        except UnicodeDecodeError as error:
            return start + error.start
        return -1

    return find
