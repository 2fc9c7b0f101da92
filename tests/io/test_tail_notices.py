"""``tail``'s notices are told apart from file bytes, whatever the bytes and chunk boundaries."""

from __future__ import annotations

import itertools

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tui.io.tail.tail_remote import (
    NAMELESS_NOTICES,
    Notice,
    NoticeScanner,
    nonce_path,
    split_header,
)

SHOWN, PATTERN = nonce_path("/var/log/sglang/server.log", 0x5EED)
TRUNCATED = f"tail: {SHOWN}: file truncated\n".encode()


def scan(pieces: list[bytes]) -> tuple[bytes, list[bytes]]:
    scanner = NoticeScanner(SHOWN, PATTERN)
    data, notices = b"", []
    for piece in pieces:
        for part in scanner.feed(piece):
            if isinstance(part, Notice):
                notices.append(part.text)
            else:
                data += part
    return data + scanner.flush(), notices


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts})
    edges = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(edges)]


def ordinary(data: bytes) -> bool:
    """Bytes that are not one of the notices ``tail`` prints without a file name (those are
    recognised wherever they appear, and reported as notices rather than passed on)."""
    return not any(notice in data for notice in NAMELESS_NOTICES)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000), st.lists(st.integers(0, 2000), max_size=8))
def test_file_bytes_pass_unchanged_in_any_chunking(data: bytes, cuts: list[int]) -> None:
    assume(ordinary(data))
    assert scan(split(data, cuts)) == (data, [])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.binary(max_size=300), min_size=2, max_size=5),
    st.lists(st.integers(0, 3000), max_size=8),
)
def test_real_notices_are_taken_out_wherever_they_fall(
    pieces: list[bytes], cuts: list[int]
) -> None:
    stream = TRUNCATED.join(pieces)
    assume(ordinary(stream))
    data, notices = scan(split(stream, cuts))
    assert data == b"".join(pieces)
    assert notices == [TRUNCATED] * (len(pieces) - 1)


def test_forged_notices_are_file_bytes() -> None:
    forged = b"tail: /var/log/sglang/server.log: file truncated\ntail: x: file truncated\n"
    assert scan([forged]) == (forged, [])


def test_a_quoted_name_is_recognised_and_text_before_it_kept() -> None:
    quoted = f"tail: '{SHOWN}' has become inaccessible: No such file or directory\n".encode()
    data, notices = scan([b"tail: tail: " + quoted + b"after\n"])
    assert (data, notices) == (b"tail: tail: after\n", [quoted])


def test_nameless_notices_are_recognised() -> None:
    data, notices = scan([b"a\n" + NAMELESS_NOTICES[0] + b"b\n"])
    assert (data, notices) == (b"a\nb\n", [NAMELESS_NOTICES[0]])
    assert Notice(TRUNCATED).truncated
    assert not Notice(NAMELESS_NOTICES[0]).truncated


def test_the_nonce_spelling_names_the_same_file() -> None:
    import os

    assert os.path.normpath(SHOWN) == "/var/log/sglang/server.log"
    assert os.path.normpath(nonce_path("server.log", 7)[0]) == "server.log"
    assert os.path.normpath(nonce_path("/server.log", 7)[0]) == "/server.log"


def test_a_follow_header_is_split_off_the_stream() -> None:
    header = b"12 3 4 5 1735689600.123456789\n.\n 68 69\n.\n"
    assert split_header(header) is None
    assert split_header(header + b".\n.DATA\n.\n") == (
        [b"12 3 4 5 1735689600.123456789", b".", b" 68 69", b".", b"."],
        b".DATA\n.\n",
    )
    assert split_header(b"missing\n") == ([b"missing"], b"")
