"""Every way a log is rotated or rewritten is noticed, marked, and loses no bytes (over SSH)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from pathlib import Path

from tests.io.helpers import collecting, eventually
from tests.sshd import frozen, proc_stats
from tui.io.tail.log_tail import LogTail, TailOptions
from tui.io.transport.host_session import HostSession
from tui.io.transport.link_events import MarkerKind


def real(path: Path) -> str:
    """``path`` with every symbolic link resolved, as the host's ``readlink -f`` prints it."""
    return os.path.realpath(path)


FAST = TailOptions(probe_interval=0.3, wait_interval=0.1, drain_idle=0.2)
A = b"".join(b"[2025-01-01 00:00:0%d TP0] first file line %d\n" % (i % 10, i) for i in range(40))
B = b"[2025-01-01 00:01:00 TP0] second file\n" * 3


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(data)


def truncate(path: Path) -> None:
    with path.open("r+b") as handle:
        handle.truncate(0)


async def test_truncation_is_marked_and_the_new_content_read_from_zero(
    session: HostSession, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(A)
    async with collecting(session.tail(str(log), options=FAST)) as got:
        await eventually(lambda: got.current == A, state=got)
        truncate(log)
        append(log, B)
        await eventually(lambda: len(got.segments) == 2 and got.current == B, state=got)
    assert [bytes(s) for s in got.segments] == [A, B]
    assert got.kinds == [MarkerKind.TRUNCATED]
    assert got.gaps == []
    assert got.offsets_ok


async def test_copy_truncate_reads_unread_bytes_back_from_the_copy(
    session: HostSession, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(A)
    async with collecting(session.tail(str(log), options=FAST)) as got:
        await eventually(lambda: got.current == A, state=got)
        append(log, b"written just before rotation\n")
        shutil.copyfile(log, tmp_path / "server.log.1")
        truncate(log)
        append(log, B)
        await eventually(lambda: len(got.segments) == 2 and got.current == B, state=got)
    assert [bytes(s) for s in got.segments] == [A + b"written just before rotation\n", B]
    assert got.kinds == [MarkerKind.COPY_TRUNCATED]
    assert "server.log.1" in got.markers[0].detail


async def test_rename_and_recreate_drains_the_old_file_first(
    session: HostSession, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(A)
    async with collecting(session.tail(str(log), options=FAST)) as got:
        await eventually(lambda: got.current == A, state=got)
        os.rename(log, tmp_path / "server.log.1")
        append(tmp_path / "server.log.1", b"late line in the old file\n")
        log.write_bytes(B)
        await eventually(lambda: len(got.segments) == 2 and got.current == B, state=got)
    assert [bytes(s) for s in got.segments] == [A + b"late line in the old file\n", B]
    assert got.kinds == [MarkerKind.ROTATED]
    assert "server.log.1" in got.markers[0].detail


async def test_delete_and_recreate_is_marked_as_replaced(
    session: HostSession, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(A)
    async with collecting(session.tail(str(log), options=FAST)) as got:
        await eventually(lambda: got.current == A, state=got)
        log.unlink()
        await eventually(lambda: MarkerKind.DELETED in got.kinds)
        log.write_bytes(B)
        await eventually(lambda: len(got.segments) == 2 and got.current == B, state=got)
    assert [bytes(s) for s in got.segments] == [A, B]
    assert got.kinds == [MarkerKind.DELETED, MarkerKind.REPLACED]


async def test_truncated_then_regrown_past_the_offset_is_read_again_from_zero(
    session: HostSession, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(B)
    longer = b"[2025-01-01 00:02:00 TP0] restarted server, a longer first line\n" * 5
    async with collecting(session.tail(str(log), options=FAST)) as got:
        await eventually(lambda: got.current == B)
        log.write_bytes(longer)
        await eventually(lambda: len(got.segments) == 2 and got.current == longer)
    assert bytes(got.segments[0]).startswith(B)
    assert got.kinds[-1] in (MarkerKind.REWRITTEN, MarkerKind.TRUNCATED)
    repeated = len(got.segments[0]) - len(B)
    if repeated:
        assert got.kinds == [MarkerKind.REWRITTEN]
        bound = re.search(r"up to (\d+) bytes", got.markers[0].detail)
        assert bound is not None
        assert repeated <= int(bound.group(1))


async def test_a_missing_log_is_waited_for(session: HostSession, tmp_path: Path) -> None:
    log = tmp_path / "later.log"
    async with collecting(session.tail(str(log), options=FAST)) as got:
        await eventually(lambda: got.kinds == [MarkerKind.WAITING])
        log.write_bytes(B)
        await eventually(lambda: got.current == B)
    assert got.kinds == [MarkerKind.WAITING, MarkerKind.APPEARED]


async def test_text_that_imitates_a_tail_notice_is_data(
    session: HostSession, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    forged = f"tail: {log}: file truncated\ntail: '{log}' has been replaced\n".encode()
    log.write_bytes(A + forged + B)
    async with collecting(session.tail(str(log), options=FAST)) as got:
        await eventually(lambda: got.current == A + forged + B)
    assert got.markers == []


def tail_processes(spelling: str) -> list[int]:
    """The remote ``tail`` processes of one log tail (found by its file name spelling)."""
    found = []
    for pid, _fields in proc_stats():
        with contextlib.suppress(OSError):
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if argv[0] == b"tail" and spelling.encode() in argv:
                found.append(pid)
    return found


async def test_a_stuck_tail_across_a_rewrite_reports_the_lost_bytes_as_a_gap(
    session: HostSession, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(A)
    log_tail = LogTail(str(log), options=FAST)
    unread = b"[2025-01-01 00:00:30 TP0] never read by the stuck tail\n" * 20
    rewritten = b"[2025-01-01 00:02:00 TP0] relaunched, a longer first file\n" * 60
    async with collecting(session.follow(log_tail)) as got:
        await eventually(lambda: got.current == A, state=got)
        stuck = tail_processes(log_tail.spelling)
        assert len(stuck) == 1
        with frozen(stuck):
            append(log, unread)
            await eventually(lambda: log_tail.state.known_size == len(A + unread), state=got)
            log.write_bytes(rewritten)
            await eventually(lambda: got.gaps != [], state=got)
        await eventually(lambda: got.current == rewritten, state=got)
    assert [bytes(s) for s in got.segments] == [A, rewritten]
    assert [gap.size for gap in got.gaps] == [None]
    assert f"at least {len(unread)} unread bytes" in got.gaps[0].reason
    assert got.order == ["bytes", "gap", MarkerKind.REWRITTEN, "bytes"]


def point(link: Path, target: Path) -> None:
    """Switch ``link`` to ``target`` at once, as ``ln -sfn`` does."""
    fresh = link.with_name(link.name + ".new")
    fresh.symlink_to(target.name)
    os.replace(fresh, link)


async def test_a_switched_log_symlink_is_named_and_the_new_target_read_from_its_start(
    session: HostSession, tmp_path: Path
) -> None:
    first, second, log = tmp_path / "run-1.log", tmp_path / "run-2.log", tmp_path / "server.log"
    first.write_bytes(A)
    log.symlink_to(first.name)
    async with collecting(session.tail(str(log), options=FAST)) as got:
        await eventually(lambda: got.current == A, state=got)
        second.write_bytes(B)
        point(log, second)
        append(first, b"late line in the old target\n")
        await eventually(lambda: len(got.segments) == 2 and got.current == B, state=got)
    assert [bytes(s) for s in got.segments] == [A + b"late line in the old target\n", B]
    assert got.kinds == [MarkerKind.RELINKED]
    detail = got.markers[0].detail
    assert f"log symlink {log} now points to {real(second)}" in detail
    assert f"it pointed to {real(first)}" in detail
    assert "renamed" not in detail
    assert got.gaps == []


async def test_a_stuck_tail_resumed_at_once_after_a_rewrite_still_reports_the_gap(
    session: HostSession, tmp_path: Path
) -> None:
    """Resumed before any check saw the rewrite, ``tail`` passes on new bytes as if they were
    old ones; the checks that saw it stuck still place the loss where it stuck."""
    log = tmp_path / "server.log"
    log.write_bytes(A)
    log_tail = LogTail(str(log), options=FAST)
    unread = b"[2025-01-01 00:00:30 TP0] never read by the stuck tail\n" * 20
    rewritten = b"[2025-01-01 00:02:00 TP0] relaunched, a much longer first file\n" * 80
    async with collecting(session.follow(log_tail)) as got:
        await eventually(lambda: got.current == A, state=got)
        with frozen(tail_processes(log_tail.spelling)):
            append(log, unread)
            await eventually(lambda: log_tail.state.stalled_at == len(A), state=got)
            log.write_bytes(rewritten)
        await eventually(lambda: len(got.segments) == 2 and got.current == rewritten, state=got)
    assert [gap.size for gap in got.gaps] == [None]
    assert f"at least {len(unread)} unread bytes" in got.gaps[0].reason
    assert f"after byte {len(A)} " in got.gaps[0].reason
    assert got.order[-3:] == ["gap", got.kinds[-1], "bytes"]
    assert got.kinds[-1] in (MarkerKind.REWRITTEN, MarkerKind.TRUNCATED)
