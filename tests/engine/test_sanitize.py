"""Sanitizing untrusted log bytes: escapes, redraws, controls, invalid UTF-8, long lines."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tui.engine.logs.sanitize import (
    cap_line,
    overlay,
    printable,
    sanitize_bytes,
    sanitize_line,
    sanitize_text,
    split_lines,
)

FORBIDDEN = re.compile("[\x1b\x7f\x80-\x9f]")
C0_EXCEPT_TAB = re.compile("[\x00-\x08\x0a-\x1f]")


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[1;36m(APIServer pid=1)\x1b[0;0m INFO", "(APIServer pid=1) INFO"),
        ("title\x1b]0;pwned\x07 after", "title after"),
        ("clip\x1b]52;c;aGVsbG8=\x1b\\ done", "clip done"),
        ("link \x1b]8;;http://evil\x07text\x1b]8;;\x07", "link text"),
        ("clear\x1b[2J\x1b[H screen", "clear screen"),
        ("report \x1b[21t title", "report  title"),
        ("dcs \x1bPq#0;2;0;0;0\x1b\\ end", "dcs  end"),
        ("apc \x1b_payload\x1b\\ end", "apc  end"),
        ("c1 csi \u009b31m red", "c1 csi  red"),
        ("c1 osc \u009d0;t\u009c x", "c1 osc  x"),
        ("unterminated \x1b[31", "unterminated "),
        ("lone escape \x1b", "lone escape "),
        ("bell\x07 nul\x00 del\x7f", "bell\ufffd nul\ufffd del"),
        ("tab\tkept", "tab\tkept"),
    ],
)
def test_escapes_and_controls_are_neutralised(raw: str, shown: str) -> None:
    assert sanitize_line(raw) == shown


def test_markup_like_text_is_left_verbatim() -> None:
    for text in ("[rank0]:[W] x", "[gpu_model_runner.py:1608] y", "[@click=app.quit]x[/]"):
        assert sanitize_line(text) == text


def test_carriage_return_redraws_collapse_like_a_terminal() -> None:
    bar = "\rLoading:   0% | 0/2\rLoading:  50% | 1/2\rLoading: 100% | 2/2"
    assert sanitize_line(bar) == "Loading: 100% | 2/2"
    assert sanitize_line("abcdef\rXY") == "XYcdef"
    assert sanitize_line("line ending\r") == "line ending"
    assert overlay(["long text", "", "ab"]) == "abng text"


def test_split_lines_reports_every_redraw_of_a_line() -> None:
    lines, redrawn = split_lines("a\n\rx 1/2\rx 2/2\nc")
    assert lines == ["a", "x 2/2", "c"]
    assert redrawn == {1: ["", "x 1/2", "x 2/2"]}


def test_invalid_utf8_is_replaced() -> None:
    assert sanitize_bytes(b"ok \xff\xfe end") == "ok \ufffd\ufffd end"
    assert sanitize_bytes(b"red \xc2\x9b31m text") == "red  text"


def test_long_lines_keep_the_head_and_say_how_much_was_cut() -> None:
    assert cap_line("x" * 30, 10) == "x" * 10 + " [… 20 characters cut]"
    capped = sanitize_text("short\n" + "y" * 50, limit=20)
    assert capped.split("\n") == ["short", "y" * 20 + " [… 30 characters cut]"]


@given(st.binary(max_size=512))
def test_any_bytes_give_safe_text(data: bytes) -> None:
    text = sanitize_bytes(data)
    assert FORBIDDEN.search(text) is None
    for line in text.split("\n"):
        assert C0_EXCEPT_TAB.search(line) is None
    assert text.count("\n") == data.count(b"\n")


@given(st.text(max_size=300))
def test_any_text_gives_safe_lines(text: str) -> None:
    lines, redrawn = split_lines(text)
    assert len(lines) == text.count("\n") + 1
    for line in lines:
        assert FORBIDDEN.search(line) is None
        assert C0_EXCEPT_TAB.search(line) is None
    for segments in redrawn.values():
        assert all(FORBIDDEN.search(segment) is None for segment in segments)


def test_printable_replaces_every_control_but_tab_and_cuts_at_the_limit() -> None:
    assert printable("a\tb") == "a\tb"
    assert printable("x\x1b]0;t\x07\ny\x7f\x9b") == "x\ufffd]0;t\ufffd\ufffdy\ufffd\ufffd"
    assert printable("abcdef", limit=4) == "abc…"
    assert printable("abcd", limit=4) == "abcd"
