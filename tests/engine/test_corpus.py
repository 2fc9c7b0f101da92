"""Every real log of the shared corpus replays to its hand-written label."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import shared_dir
from tests.engine.engine_helpers import run_chunks
from tui.engine.startup.snapshot import Snapshot


def _entries() -> list[dict[str, Any]]:
    found = shared_dir()
    if found is None:
        return []
    manifest = found / "corpus" / "manifest.json"
    entries: list[dict[str, Any]] = json.loads(manifest.read_text())
    return entries


def _replay(path: Path, size: int = 65536) -> Snapshot:
    data = path.read_bytes()
    snapshot, _ = run_chunks(data[i : i + size] for i in range(0, len(data), size))
    return snapshot


ENTRIES = _entries()


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["file"][:3] for e in ENTRIES])
def test_log_matches_its_label(shared: Path, entry: dict[str, Any]) -> None:
    snapshot = _replay(shared / "corpus" / "logs" / entry["file"])
    failure = snapshot.failure.kind.value if snapshot.failure else None
    last = snapshot.last_stage.value if snapshot.last_stage else None
    assert (snapshot.outcome.value, failure, last) == (
        entry["outcome"],
        entry["failure_kind"],
        entry["last_stage"],
    )
    assert snapshot.server.engine == entry["engine"]
    assert set(entry["ranks_seen"]) <= {rank.tag for rank in snapshot.ranks}
    if entry["accept_len_count"]:
        accept = snapshot.decode.accept_len
        assert len(accept) == entry["accept_len_count"]
        assert set(entry["accept_len_values"]) <= set(accept)
    assert (snapshot.decode.lines > 0) == entry["has_decode_lines"]


def test_small_chunks_give_the_same_answer(shared: Path) -> None:
    path = shared / "corpus" / "logs" / ENTRIES[3]["file"] if ENTRIES else shared
    whole = _replay(path)
    assert _replay(path, size=333) == whole


def test_corpus_is_present(shared: Path) -> None:
    assert ENTRIES, "the shared manifest lists no logs"
