"""What the screen says about each node of a multi-node server, built as Content (no markup).

One summary row above each node's grid (``node 1 · gpu-b · 8 ranks · weight loading · behind
00:42 · clock +3 s · has not reached the rendezvous``), and the header's reminder that health
checks and benchmarks reach node 0 only (the other nodes answer a dummy ``/health``).
"""

from __future__ import annotations

from textual.content import Content

from tui.app.widgets import cell_format as fmt
from tui.engine.cluster.cluster_engine import skew_label
from tui.engine.logs.sanitize import printable
from tui.engine.startup.snapshot import NodeSummary, Snapshot

TRAFFIC_NOTE = "health and benchmarks: node 0 only"


def node_title(node: int, summary: NodeSummary | None, now: float) -> Content:
    """The row above node ``node``'s ranks; just ``node N`` until the engine summarised it."""
    if summary is None:
        return Content.styled(f"node {node}", "bold")
    parts: list[str | tuple[str, str]] = [(f"node {node}", "bold")]
    plural = "" if summary.ranks == 1 else "s"
    count = f"{summary.ranks} rank{plural}" if summary.ranks else "no rank has logged yet"
    facts = [printable(summary.host)[:40], count]
    if summary.stage is not None and not summary.ready:
        facts.append(summary.stage.label)
    for fact in facts:
        parts.extend([" · ", fact])
    if summary.behind_since is not None:
        parts.extend([" · ", (f"behind {fmt.clock(now - summary.behind_since)}", _style(summary))])
    skew = skew_label(summary.clock_skew)
    if skew:
        parts.extend([" · ", (skew, "$rank-stalled")])
    if summary.note and (summary.stage is None or summary.note != summary.stage.label):
        parts.extend([" · ", (printable(summary.note), _style(summary))])
    return Content.assemble(*parts)


def _style(summary: NodeSummary) -> str:
    if summary.failed or summary.missing:
        return "bold $rank-failed"
    if summary.ready:
        return "$rank-ready"
    if summary.behind_since is not None or not summary.joined:
        return "bold $rank-stalled"
    return "$text-muted"


def traffic_note(snapshot: Snapshot) -> str:
    """The header's reminder for a multi-node server (empty for one node)."""
    return TRAFFIC_NOTE if len(snapshot.nodes) > 1 else ""
