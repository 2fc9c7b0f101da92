"""Logs written in UTF-16 (PowerShell's ``>``) or with a UTF-8 mark read like any other."""

from __future__ import annotations

import codecs

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.engine.engine_helpers import run_chunks, run_text
from tui.engine.logs.encoding import StreamDecoder
from tui.engine.logs.log_engine import LogEngine
from tui.engine.startup.vocabulary import FailureKind, Stage

LOG = (
    "(APIServer pid=1) INFO 06-17 11:25:22 [api_utils.py:273] non-default args: {'model': 'm'}\n"
    "(EngineCore pid=2) INFO 06-17 11:25:40 [gpu_model_runner.py:1] Model loading took 2.1 GiB\n"
    "(EngineCore pid=2) ERROR 06-17 11:25:50 [core.py:1] EngineCore failed to start.\n"
    "(EngineCore pid=2) ERROR 06-17 11:25:50 [core.py:1] ValueError: No available memory for "
    "the cache blocks. Try increasing `gpu_memory_utilization`.\n"
    "(APIServer pid=1) RuntimeError: Engine core initialization failed. See root cause above.\n"
)

ENCODED = {
    "utf-16 with mark": codecs.BOM_UTF16_LE + LOG.encode("utf-16-le"),
    "utf-16-be with mark": codecs.BOM_UTF16_BE + LOG.encode("utf-16-be"),
    "utf-16 without mark": LOG.encode("utf-16-le"),
    "utf-8 with mark": codecs.BOM_UTF8 + LOG.encode(),
}


@pytest.mark.parametrize("data", ENCODED.values(), ids=ENCODED.keys())
def test_a_log_in_another_encoding_reads_as_the_same_log(data: bytes) -> None:
    expected, _ = run_text(LOG)
    snapshot, _ = run_chunks([data[i : i + 7] for i in range(0, len(data), 7)])
    assert snapshot == expected
    assert snapshot.failure is not None
    assert (snapshot.failure.kind, snapshot.last_stage) == (FailureKind.OOM, Stage.KV_CACHE)


def test_a_short_first_line_is_read_before_more_arrives() -> None:
    decoder = StreamDecoder()
    assert decoder.convert(b"ok\n") == b"ok\n"
    assert decoder.passing


def test_a_run_of_nuls_is_not_taken_for_utf_16() -> None:
    decoder = StreamDecoder()
    data = b"\0" * 100 + b"[2026-01-01 00:00:00 TP0] Load weight begin.\n"
    assert decoder.convert(data) == data


@given(st.lists(st.binary(max_size=40), max_size=12))
def test_any_bytes_after_a_utf_16_mark_never_raise(chunks: list[bytes]) -> None:
    snapshot, _ = run_chunks([codecs.BOM_UTF16_LE, *chunks])
    assert snapshot.lines >= 0
    engine = LogEngine(keep_lines=True)
    kept = [
        line.text for chunk in [codecs.BOM_UTF16_LE, *chunks] for line in engine.feed(chunk).lines
    ]
    assert not any(ord(c) < 32 and c != "\t" for text in kept for c in text)  # still sanitized
