"""Lines a library prints in its own format inside an engine's log: compile and JIT phases
(``jit_phases``) and rendezvous counts (``rendezvous_lines``). Tried only on lines no rule of
the engine claimed."""

from __future__ import annotations

from tui.engine.servers.hits import Hit
from tui.engine.servers.jit_phases import phase_hit
from tui.engine.servers.rendezvous_lines import rendezvous_hit


def library_hits(msg: str) -> tuple[Hit, ...]:
    """What a library's line means, if anything."""
    phase = phase_hit(msg)
    if phase is not None:
        return (phase,)
    rendezvous = rendezvous_hit(msg)
    return () if rendezvous is None else (rendezvous,)
