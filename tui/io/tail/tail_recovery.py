"""Finding the previous content of a log after it was rotated, and reading what we missed.

When the file under the log's name is no longer the one we followed (it was renamed away,
deleted, copied and truncated ...), the files beside it are checked: the old inode under a new
name (rename rotation) or a file whose fingerprint matches what we followed (copy-truncate). The
bytes we had not read yet are read from there; what cannot be found is reported as a gap.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui.engine.logs.sanitize import printable
from tui.io.tail.tail_remote import (
    Candidate,
    FileReport,
    ReportError,
    locate_argv,
    parse_locate,
    parse_probe_answer,
    probe_loop_argv,
    read_range_argv,
)
from tui.io.tail.tail_state import FileState, TailOptions
from tui.io.transport.link_events import Chunk, Gap, MarkerKind, StreamMarker, TailItem
from tui.io.transport.transport import Transport, TransportError


@dataclass(frozen=True, slots=True)
class Previous:
    """Where the content we followed is now: renamed (same inode) or copied."""

    name: str
    size: int
    renamed: bool


async def find_previous(
    transport: Transport, path: str, state: FileState, options: TailOptions
) -> Previous | None:
    """Look beside ``path`` for the inode we followed, or for a copy with its fingerprint.

    Never raises: when the host cannot be asked, nothing is found (a later read notices a lost
    link), so bytes already counted are never held back by a failed look.
    """
    if state.identity is None:
        return None
    start, window = state.window_request()
    argv = locate_argv(path, state.identity[1], len(state.head), start, window)
    try:
        result = await transport.run(argv, timeout=options.command_timeout)
        candidates = parse_locate(result.stdout)
    except (TransportError, ReportError):
        return None
    return _pick(candidates, state)


def _pick(candidates: list[Candidate], state: FileState) -> Previous | None:
    for candidate in candidates:
        if candidate.report.identity == state.identity:
            return Previous(candidate.name, candidate.report.size, renamed=True)
    for candidate in candidates:
        if _same_content(candidate.report, state):
            return Previous(candidate.name, candidate.report.size, renamed=False)
    return None


def _same_content(report: FileReport, state: FileState) -> bool:
    return (
        report.size >= state.offset
        and report.head == bytes(state.head)
        and report.window == bytes(state.recent)
    )


async def read_missed(
    transport: Transport, previous: Previous, state: FileState, options: TailOptions
) -> list[TailItem]:
    """Read the bytes after ``state.offset`` from the previous file; a gap for what is beyond."""
    missing = previous.size - state.offset
    if missing <= 0:
        return []
    wanted = min(missing, options.recover_limit)
    argv = read_range_argv(previous.name, state.offset, wanted)
    try:
        read = (await transport.run(argv, timeout=options.command_timeout)).stdout[:wanted]
    except TransportError:
        read = b""
    items: list[TailItem] = [state.advance(read)] if read else []
    left = missing - len(read)
    if left > 0:
        items.append(Gap(left, f"{left} bytes of {printable(previous.name)} were not read back"))
    return items


def destroyed(state: FileState, shown: str, unseen: bool, upto: int | None = None) -> list[Gap]:
    """The gap for content destroyed after ``state.offset`` (or ``upto``), if any was unread.

    ``unseen``: the file was out of sight (the link was down), so whatever was written after
    the offset before the content was destroyed is lost, in an unknown amount. Otherwise a gap
    is reported when a check had seen the file longer than what was read (``tail`` was stuck;
    when checks saw it stuck, from where it stuck, as what it passed on after resuming may
    already be the new content). The size is never claimed: what was written after the last
    check is not known.
    """
    offset = state.offset if upto is None else upto
    if state.stalled_at is not None:
        offset = min(offset, state.stalled_at)
    seen = state.known_size - offset
    least = f" (at least {seen})" if seen > 0 else ""
    if unseen:
        why = (
            f"bytes written to {shown} after byte {offset} while the link was down{least} "
            "were destroyed before they could be read"
        )
        return [Gap(None, why)]
    if seen > 0:
        why = f"at least {seen} unread bytes of {shown} after byte {offset} were destroyed"
        return [Gap(None, why)]
    return []


async def lost_previous(
    transport: Transport,
    path: str,
    state: FileState,
    options: TailOptions,
    current: FileReport | None,
    unseen: bool = False,
) -> list[TailItem]:
    """Items for a log whose content moved: recovered bytes, then the marker, or a gap.

    ``current`` describes the file now under the name (None when ``tail`` reported a
    truncation of the file it holds open); ``unseen`` says the link was down meanwhile (see
    :func:`destroyed`). The caller resets ``state`` afterwards.
    """
    truncated = current is None or current.identity == state.identity
    previous = await find_previous(transport, path, state, options)
    shown = printable(path)
    if previous is None:
        items: list[TailItem] = [*destroyed(state, shown, unseen)]
        kind = MarkerKind.TRUNCATED if truncated else MarkerKind.REPLACED
        verb = "was truncated" if truncated else "was replaced by a new file"
        return [*items, StreamMarker(kind, f"{shown} {verb} at byte {state.offset}")]
    recovered = await read_missed(transport, previous, state, options)
    return [*recovered, _marker(previous, shown, truncated, recovered)]


def _marker(
    previous: Previous, shown: str, truncated: bool, recovered: list[TailItem]
) -> StreamMarker:
    name = printable(previous.name)
    count = sum(len(item.data) for item in recovered if isinstance(item, Chunk))
    tail = f"; {count} unread bytes were read from it" if count else ""
    if previous.renamed:
        return StreamMarker(MarkerKind.ROTATED, f"{shown} was renamed to {name}{tail}")
    if truncated:
        detail = f"{shown} was copied to {name} and truncated{tail}"
        return StreamMarker(MarkerKind.COPY_TRUNCATED, detail)
    return StreamMarker(
        MarkerKind.REPLACED, f"{shown} was replaced; its old content is in {name}{tail}"
    )


def relinked(state: FileState, current: FileReport) -> bool:
    """Whether the log's name is a symbolic link that now leads somewhere else."""
    return current.target is not None and current.target != state.target


def relinked_marker(path: str, old: str | None, new: str | None) -> StreamMarker:
    """The marker of a log symlink switched to another file (followed from its start)."""
    shown, target = printable(path), printable(new or "?")
    was = f" (it pointed to {printable(old)})" if old else ""
    detail = f"log symlink {shown} now points to {target}{was}; following {target} from its start"
    return StreamMarker(MarkerKind.RELINKED, detail)


async def left_behind(
    transport: Transport, path: str, state: FileState, options: TailOptions, current: FileReport
) -> list[TailItem]:
    """After the log symlink was switched while the link was down: the unread rest of the file
    it led to (when that is still the same file), or a gap; then the marker."""
    old = state.target
    previous = await old_target(transport, state, options)
    if previous is not None:
        items = await read_missed(transport, previous, state, options)
    else:
        items = [*destroyed(state, printable(path), unseen=True)]
    return [*items, relinked_marker(path, old, current.target)]


async def old_target(
    transport: Transport, state: FileState, options: TailOptions
) -> Previous | None:
    """The file the log symlink led to before it was switched, while it is still that file."""
    if state.target is None:
        return None
    report = await describe_file(transport, state.target, state, options)
    if report is None or report.identity != state.identity:
        return None
    return Previous(state.target, report.size, renamed=False)


async def describe_file(
    transport: Transport, name: str, state: FileState, options: TailOptions
) -> FileReport | None:
    """One file's report (None when it is gone or the host cannot be asked)."""
    start, window = state.window_request()
    try:
        result = await transport.run(
            probe_loop_argv(name), stdin=f"{len(state.head)} {start} {window}\n".encode(),
            timeout=options.command_timeout,
        )  # fmt: skip
        return parse_probe_answer(result.stdout)
    except (TransportError, ReportError):
        return None
