"""The latest decode figures of a run, kept as raw text and read only when someone looks.

A busy SGLang server prints a ``Decode batch`` line per rank every few iterations, for days, and
the snapshot offers only the latest ``RING`` figures of each kind. Reading every figure would
cost more than reading the lines themselves, so SGLang decode lines are kept as *blocks* (lines
joined by newlines, one block per batch) and each figure is read only when a summary asks for
it, newest first, until ``RING`` are found.

A figure is a *slot*: each occurrence of its label (``accept len: ``) in a decode line. A slot
whose number is not a finite number holds ``None`` (a gap). Blocks that no longer hold any of
the latest ``RING`` slots of any kind are dropped; when a kind is so rare that the blocks kept
hold fewer than ``RING`` of its slots, the slots of the dropped blocks are read into a small
*floor* first, so the latest slots are always at hand and memory stays bounded.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable

from tui.engine.servers.common_patterns import to_float
from tui.engine.servers.sglang.sglang_grammar import DECODE_LABELS

RING = 512
"""Slots kept per kind of figure."""
GEN, ACCEPT, RATE = range(3)
"""Kinds of figure, in the order of ``LABELS``."""
LABELS = DECODE_LABELS
"""What precedes each kind of figure in an SGLang ``Decode batch`` line."""
TAIL_LINES = 8 * RING
"""Lines kept in blocks before the older blocks are dropped (or read into the floor)."""
_NUMBER = re.compile(r"[\d.]+")

Slot = float | None
Slots = tuple[Slot, ...]
Figures = tuple[Slots, Slots, Slots]
"""The latest slots of each kind (gen throughput, accept len, accept rate), oldest first."""


def slot_value(text: str) -> Slot:
    """The number that starts ``text`` (what follows a label), or None when there is none."""
    match = _NUMBER.match(text)
    return None if match is None else to_float(match[0])


class Block:
    """SGLang decode lines joined by newlines; counts its slots once, reads them on demand."""

    __slots__ = ("_counts", "lines", "text")

    def __init__(self, text: str, lines: int) -> None:
        self.text = text
        self.lines = lines
        self._counts: list[int | None] = [None, None, None]

    def count(self, kind: int) -> int:
        """How many slots of ``kind`` the block holds (labels, readable or not)."""
        known = self._counts[kind]
        if known is None:
            known = self._counts[kind] = self.text.count(LABELS[kind])
        return known

    def slots(self, kind: int, limit: int) -> list[Slot]:
        """The last ``limit`` slots of ``kind``, oldest first."""
        if limit <= 0 or not self.count(kind):
            return []
        pieces = self.text.split(LABELS[kind])[1:]
        return [slot_value(piece) for piece in pieces[-limit:]]


def latest(blocks: Iterable[Block], kind: int, floor: Slots = (), limit: int = RING) -> Slots:
    """The latest ``limit`` slots of ``kind``, oldest first: from ``blocks`` (given newest
    first), then from ``floor`` (slots older than every block)."""
    parts: list[list[Slot]] = []
    found = 0
    for block in blocks:
        if found >= limit:
            break
        part = block.slots(kind, limit - found)
        parts.append(part)
        found += len(part)
    older = list(floor[max(0, len(floor) - (limit - found)) :])
    return tuple(older + [slot for part in reversed(parts) for slot in part])


def read_figures(newest: tuple[Block, ...], floors: Figures) -> Figures:
    """The latest slots of every kind, from blocks (newest first) above their floors."""
    return (
        latest(newest, GEN, floors[GEN]),
        latest(newest, ACCEPT, floors[ACCEPT]),
        latest(newest, RATE, floors[RATE]),
    )


class FigureTail:
    """Blocks of raw decode lines above a floor of slots already read, per kind."""

    def __init__(self) -> None:
        self.blocks: deque[Block] = deque()
        self.floors: tuple[deque[Slot], ...] = tuple(deque(maxlen=RING) for _ in LABELS)
        self.version = 0
        """Changes whenever a floor changes."""
        self._lines = 0
        self._copied = -1
        self._floor_copy: Figures = ((), (), ())

    def clear(self) -> None:
        self.blocks.clear()
        for floor in self.floors:
            floor.clear()
        self._lines = 0
        self.version += 1

    def add_block(self, block: Block) -> None:
        """Keep a block of decode lines; drop (or read) the older ones when there are many."""
        self.blocks.append(block)
        self._lines += block.lines
        if self._lines > TAIL_LINES and len(self.blocks) > 1:
            self._fold()

    def add_value(self, kind: int, value: float) -> None:
        """A figure read elsewhere (vLLM): it follows every slot kept so far."""
        if self.blocks:
            self._seal()
        self.floors[kind].append(value)
        self.version += 1

    def view(self) -> tuple[tuple[Block, ...], Figures]:
        """The blocks (newest first) and floors as they are now, for ``read_figures`` later:
        blocks never change, and the floors are copied only after they changed."""
        if self._copied != self.version:
            self._copied = self.version
            gen, accept, rate = self.floors
            self._floor_copy = (tuple(gen), tuple(accept), tuple(rate))
        return tuple(reversed(self.blocks)), self._floor_copy

    def _fold(self) -> None:
        """Drop every block but the newest ones holding ``RING`` lines; a kind whose slots in
        the blocks kept are fewer than ``RING`` takes the newest it lacks into its floor."""
        kept: list[Block] = []
        lines = 0
        while self.blocks and lines < RING:
            kept.append(self.blocks.pop())
            lines += kept[-1].lines
        dropped = list(reversed(self.blocks))
        for kind, floor in enumerate(self.floors):
            lacking = RING - sum(block.count(kind) for block in kept)
            if lacking <= 0:
                floor.clear()
            else:
                floor.extend(latest(dropped, kind, limit=lacking))
        self.blocks = deque(reversed(kept))
        self._lines = lines
        self.version += 1

    def _seal(self) -> None:
        """Read every block into the floors (a figure given as a value comes after them)."""
        newest = list(reversed(self.blocks))
        for kind, floor in enumerate(self.floors):
            floor.extend(latest(newest, kind))
        self.blocks.clear()
        self._lines = 0
        self.version += 1
