"""The text encoding of a log stream, decided from its first bytes.

Logs are UTF-8, but not all: PowerShell's ``>`` writes UTF-16 (little-endian, with a byte order
mark), so a server started from Windows or WSL leaves a log whose every other byte is NUL. A
stream that starts with a UTF-16 mark, or whose first bytes are ASCII interleaved with NULs, is
decoded as UTF-16 and handed on as UTF-8; a UTF-8 mark is dropped. Anything else passes
untouched, so the usual case costs one test per chunk.
"""

from __future__ import annotations

import codecs

SNIFF_BYTES = 64
"""Bytes of the stream's start that decide its encoding (fewer when a line ends sooner)."""
_UTF8_MARK = codecs.BOM_UTF8
_UTF16_MARKS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def _utf16_without_mark(head: bytes) -> str | None:
    """``utf-16-le`` or ``-be`` when ``head`` reads as ASCII text in UTF-16, else None."""
    pairs = len(head) // 2
    if pairs < 4:
        return None
    even, odd = head[0 : pairs * 2 : 2], head[1 : pairs * 2 : 2]
    if odd.count(0) == pairs and even.count(0) == 0:
        return "utf-16-le"
    if even.count(0) == pairs and odd.count(0) == 0:
        return "utf-16-be"
    return None


class StreamDecoder:
    """Turns a log stream's chunks into UTF-8 bytes (see the module's notes)."""

    def __init__(self) -> None:
        self._head: bytes | None = b""
        """The stream's first bytes while its encoding is still open; None once decided."""
        self._decoder: codecs.IncrementalDecoder | None = None

    @property
    def passing(self) -> bool:
        """True once the stream is known to be UTF-8: chunks go through untouched."""
        return self._head is None and self._decoder is None

    def convert(self, data: bytes, final: bool = False) -> bytes:
        """The UTF-8 bytes for ``data``; bytes held to decide (or to end a character) come
        later, or now when ``final``."""
        if self._head is not None:
            data = self._head + data
            if len(data) < SNIFF_BYTES and b"\n" not in data and not final:
                self._head = data
                return b""
            self._head = None
            data = self._decide(data)
        if self._decoder is None:
            return data
        text = self._decoder.decode(data, final)
        return text.encode("utf-8", "replace")

    def _decide(self, head: bytes) -> bytes:
        if head.startswith(_UTF8_MARK):
            return head[len(_UTF8_MARK) :]
        if head.startswith(_UTF16_MARKS):
            self._decoder = codecs.getincrementaldecoder("utf-16")("replace")
            return head
        encoding = _utf16_without_mark(head[:SNIFF_BYTES])
        if encoding is not None:
            self._decoder = codecs.getincrementaldecoder(encoding)("replace")
        return head
