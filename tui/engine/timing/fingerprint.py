"""Launch fingerprints: which past start-ups predict this one.

Two runs with the same fingerprint (engine and version, model, drafter and speculative flags,
parallel sizes, GPU type and host) are expected to start up alike. Runs of the same model with
other flags are *similar*: they are used, ranked by how many fields they share, when no run has
the exact fingerprint.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from tui.engine.startup.snapshot import ServerInfo


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """What decides how long a start-up takes. ``None`` means "not known"."""

    engine: str = "unknown"
    version: str | None = None
    model: str | None = None
    drafter: str | None = None
    speculative: str | None = None
    tp: int = 1
    dp: int = 1
    ep: int = 1
    pp: int = 1
    nodes: int = 1
    gpu: str | None = None
    host: str | None = None

    @property
    def key(self) -> str:
        """A short stable identifier: equal fingerprints give equal keys."""
        text = json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def label(self) -> str:
        """One line a person reads: ``sglang 0.5.21 Kimi-K2.5 +eagle3 TP8 H200 @gpu1``."""
        parts = [self.engine + (f" {self.version}" if self.version else "")]
        parts.append(self.model or "unknown model")
        if self.drafter or self.speculative:
            drafter = f":{self.drafter}" if self.drafter else ""
            parts.append(f"+{self.speculative or 'draft'}{drafter}")
        parts.append(_parallel_label(self))
        if self.gpu:
            parts.append(self.gpu)
        if self.host:
            parts.append(f"@{self.host}")
        return " ".join(parts)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Fingerprint:
        """Read a fingerprint back; unknown keys are ignored and wrong types become defaults."""
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("a fingerprint is a JSON object")
        default = cls()
        values: dict[str, Any] = {
            spec.name: _typed(data.get(spec.name), getattr(default, spec.name))
            for spec in fields(cls)
        }
        return replace(default, **values)


def _typed(value: object, default: object) -> object:
    """``value`` when it has the type the field's default suggests, else ``default``."""
    if isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
    else:
        ok = isinstance(value, str) or (value is None and default is None)
    return value if ok else default


def _parallel_label(fp: Fingerprint) -> str:
    sizes = [("TP", fp.tp), ("DP", fp.dp), ("EP", fp.ep), ("PP", fp.pp)]
    text = "".join(f"{name}{size}" for name, size in sizes if size > 1 or name == "TP")
    return text + (f"x{fp.nodes}nodes" if fp.nodes > 1 else "")


def fingerprint_of(
    server: ServerInfo,
    *,
    gpu: str | None = None,
    host: str | None = None,
    speculative_flags: str | None = None,
) -> Fingerprint:
    """The fingerprint of a server as its log described it, plus what the host told us.

    ``speculative_flags`` is the launch's speculative options as one string (for example
    ``"steps=3 topk=1 draft=4"``); it is appended to the algorithm so that runs with other
    settings count as similar, not identical.
    """
    speculative = server.speculative_algorithm
    if speculative_flags:
        speculative = f"{speculative or 'draft'} {speculative_flags}"
    return Fingerprint(
        engine=server.engine,
        version=server.version,
        model=server.model,
        drafter=server.drafter,
        speculative=speculative,
        tp=server.tp_size,
        dp=server.dp_size,
        ep=server.ep_size,
        pp=server.pp_size,
        nodes=server.nnodes,
        gpu=gpu,
        host=host,
    )


_WEIGHTS = {
    "engine": 4, "model": 0, "tp": 3, "gpu": 3, "drafter": 2, "speculative": 2,
    "version": 1, "dp": 1, "ep": 1, "pp": 1, "nodes": 2, "host": 1,
}  # fmt: skip


def similarity(a: Fingerprint, b: Fingerprint) -> int:
    """How alike two fingerprints are: 0 when the models differ, else a weighted match count."""
    if a.model is None or a.model != b.model:
        return 0
    return 1 + sum(
        weight for name, weight in _WEIGHTS.items() if getattr(a, name) == getattr(b, name)
    )
