"""The log view's status line: what it shows, whether it follows, and what it leaves out."""

from __future__ import annotations

from dataclasses import dataclass

BURST_LINES_PER_S = 100
"""From this rate on the status line gives it: repaints may skip lines, never the newest."""


@dataclass(frozen=True, slots=True)
class LogStatus:
    """Everything the status line says."""

    rank: str | None = None
    problems_only: bool = False
    following: bool = True
    new: int = 0
    """Lines that passed the filter since the view paused."""
    lines_per_s: float = 0.0
    """Lines arriving in the ring over the last second."""
    query: str = ""
    match: int = 0
    matches: int = 0
    hidden: int = 0
    """The monitor's own lines left out of the view."""
    monitor_shown: bool = False
    first_kept: int = 1
    """The oldest line the ring still keeps (1 while it has dropped none)."""

    def text(self) -> str:
        parts = [f"log · {self.rank or 'all ranks'}"]
        if self.problems_only:
            parts.append("warnings and errors only")
        if not self.following:
            parts.append(f"paused, {self.new:,} new")
        elif self.lines_per_s >= BURST_LINES_PER_S:
            parts.append(f"following, {round(self.lines_per_s):,} lines/s")
        else:
            parts.append("following")
        if self.query:
            parts.append(f"search {self.query!r}: {self.match}/{self.matches}")
        if self.monitor_shown:
            parts.append("monitor traffic shown")
        elif self.hidden:
            parts.append(f"{self.hidden:,} monitor lines hidden")
        if self.first_kept > 1:
            parts.append(f"kept from line {self.first_kept:,}")
        return " · ".join(parts)
