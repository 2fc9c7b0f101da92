"""Shapes of SGLang lines, so that a busy log is classified by one dictionary look-up per line.

A serving SGLang server prints the same few line shapes over and over: ``[ts TP0] Decode
batch, ...``, ``[ts TP0] Prefill batch, ...``, ``[ts] INFO:     1.2.3.4:5 - "POST ..."``. What
such a line means is decided by its first 40 characters: characters 0 to 18 are the timestamp
down to the ten seconds (checked once per distinct value, see ``STAMP``) and characters 19 to 39
(the *key*) hold the last digit of the seconds, the rank tags and the start of the message.
``shape_of`` reads a key once and says what every line with that key is; the scanner caches the
answer per key.

A shape is only a shortcut for the full grammar, never a different reading: the envelope is
matched by ``sglang.ENVELOPE`` itself, and when the key alone cannot settle the reading (the
message head is cut off by the end of the key, or the envelope's tag region runs past it) the
shape asks for a per-line ``confirm``.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from tui.engine.servers.common_patterns import full_timestamp, is_exception_line, maybe_failure
from tui.engine.servers.sglang import sglang_grammar as sglang

KEY_START = 19
KEY_END = 40
STAMP = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d")
"""The first 19 characters of an SGLang line: ``[``, then the timestamp down to ten seconds."""

SLOW, DECODE, PREFILL, ACCESS, OTHER = range(5)
"""Kinds of shape: SLOW lines go through the full grammar; OTHER lines are quiet when their
message is (see ``quiet_message``)."""

_HEADS = ((DECODE, "Decode batch"), (PREFILL, "Prefill batch"), (ACCESS, "INFO: "))
_FAKE_STAMP = "[2000-01-01 00:00:0"
_REGION = re.compile(r"[ \w\[\]]*")


class Shape(NamedTuple):
    """What every line with one key is: its rank, kind, where its message starts, and whether
    each line must still be confirmed (``head`` at ``at``, no ``]`` in the message)."""

    tag: str
    kind: int
    at: int
    check: bool
    head: str = ""
    open: bool = False

    def confirm(self, line: str) -> bool:
        """True when ``line`` really has this shape (only needed when ``check`` is set)."""
        if self.head and not line.startswith(self.head, self.at):
            return False
        return not self.open or line.find("]", self.at) < 0


SLOW_SHAPE = Shape("", SLOW, 0, False)
Known = tuple[str, int, int, bool, Shape]
"""A cached shape spread out (a plain tuple unpacks faster): rank, kind, message start,
whether each line must be confirmed, and the shape itself."""
SLOW_KNOWN: Known = ("", SLOW, 0, False, SLOW_SHAPE)
_FRACTION = re.compile(r"[.,]\d{1,6}")


def fraction_length(line: str) -> int:
    """Length of the fraction of a second after the time (``.123``), 0 when there is none.

    Lines with a fraction have the shape of the same line without it, with the message start
    moved: the envelope pattern can only read the fraction whole.
    """
    if line[KEY_START + 1 : KEY_START + 2] not in (".", ","):
        return 0
    match = _FRACTION.match(line, KEY_START + 1)
    return 0 if match is None else match.end() - KEY_START - 1


def valid_stamp(text: str) -> bool:
    """True when ``text`` (a line's first 19 characters) starts a readable SGLang timestamp."""
    return STAMP.fullmatch(text) is not None and full_timestamp(text[1:] + "0") is not None


def shape_of(key: str) -> Shape:
    """The shape of every SGLang line whose characters 19 to 39 are ``key``."""
    line = _FAKE_STAMP + key
    whole = len(line) < KEY_END  # the line ends inside the key
    match = sglang.ENVELOPE.match(line)
    if match is None or (match.end() >= KEY_END and not whole):
        return SLOW_SHAPE
    at = match.end()
    tag = sglang.tag_of(line[KEY_START + 1 : match.end("tags")]) or sglang.MAIN
    region = _REGION.match(line, KEY_START + 1)
    region_open = not whole and region is not None and region.end() == len(line)
    kind, head = _kind(line[at:], whole)
    if kind == OTHER and not _quiet_envelope(line[KEY_START:at]):
        return SLOW_SHAPE
    region_open = region_open and kind != OTHER  # a quiet message holds no ``]`` at all
    return Shape(tag, kind, at, bool(head) or region_open, head, region_open)


def _kind(start: str, whole: bool) -> tuple[int, str]:
    """The kind of a message that starts with ``start``, and the head each line must confirm
    when ``start`` is cut short by the end of the key."""
    for kind, head in _HEADS:
        if start.startswith(head):
            return kind, ""
        if not whole and head.startswith(start):
            return kind, head
    return OTHER, ""


def _quiet_envelope(envelope: str) -> bool:
    """False when the rank tags themselves hold a word that a rule or failure looks for."""
    return "KV Cache" not in envelope and not maybe_failure(envelope)


def quiet_message(message: str) -> bool:
    """True when an SGLang message can mean nothing: no rule, no failure, not the end of a
    traceback, and no ``]`` (which could make the rank tags read differently)."""
    return sglang.is_boring(message, 0) and "]" not in message and not is_exception_line(message)
