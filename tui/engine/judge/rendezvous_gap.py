"""Which ranks or nodes a distributed rendezvous is missing, in words for the verdict."""

from __future__ import annotations

import re

from tui.engine.startup.log_events import MAIN
from tui.engine.startup.snapshot import Rendezvous, Snapshot

_RANK_NUMBER = re.compile(r"(?:^|[\s_])(?:TP|rank=?|Rank ?)(\d{1,6})\b")
MAX_LISTED = 16


def rendezvous_gap(snapshot: Snapshot) -> str:
    """``2/8 ranks joined the rendezvous; missing ranks 2-7 (node 1: gpu-b)``, or ``""``."""
    found = snapshot.rendezvous
    if found is None or not (found.missing or found.peers):
        return ""
    parts: list[str] = []
    if found.missing:
        parts.append(f"{found.joined}/{found.expected} ranks joined the rendezvous")
        parts.append(_missing(snapshot, found))
    if found.peers:
        plural = "s" if len(found.peers) > 1 else ""
        parts.append(f"peer{plural} gone or unreachable: {', '.join(found.peers)}")
    return "; ".join(part for part in parts if part)


def _missing(snapshot: Snapshot, found: Rendezvous) -> str:
    nodes = [node for node in snapshot.nodes if node.missing]
    where = ", ".join(f"node {node.node} ({node.host})" if node.host else f"node {node.node}"
                      for node in nodes)  # fmt: skip
    ranks = _missing_ranks(snapshot, found)
    if ranks:
        return f"missing ranks {ranks}" + (f" ({where})" if where else "")
    if where:
        return f"missing {where}"
    nnodes, expected = snapshot.server.nnodes, found.expected or 0
    if nnodes > 1 and expected % nnodes == 0 and found.missing % (expected // nnodes) == 0:
        absent = found.missing // (expected // nnodes)
        return f"{found.missing} missing: {absent} of {nnodes} nodes never joined"
    return f"{found.missing} missing"


def _missing_ranks(snapshot: Snapshot, found: Rendezvous) -> str:
    """The global ranks not seen in the log, when the ranks it shows are exactly those that
    joined (their tags name their global rank)."""
    seen: set[int] = set()
    for rank in snapshot.ranks:
        match = _RANK_NUMBER.search(rank.tag) if rank.tag != MAIN else None
        if match is not None:
            seen.add(int(match[1]))
    expected = found.expected or 0
    if len(seen) != found.joined or any(number >= expected for number in seen):
        return ""
    return _ranges([number for number in range(expected) if number not in seen])


def _ranges(numbers: list[int]) -> str:
    """``2-7, 9``."""
    spans: list[str] = []
    start = previous = numbers[0] if numbers else 0
    for number in [*numbers[1:], None]:
        if number is not None and number == previous + 1:
            previous = number
            continue
        spans.append(str(start) if start == previous else f"{start}-{previous}")
        if number is not None:
            start = previous = number
    return ", ".join(spans[:MAX_LISTED]) if numbers else ""
