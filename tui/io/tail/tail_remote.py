"""The host side of a log tail: small POSIX shell scripts and the parsing of what they print.

Every script is passed to ``sh -c`` as one fixed string; the file name and numbers travel as
positional arguments, so nothing from a profile or a log is ever spliced into shell text. Byte
strings (file names, a symbolic link's target, the first bytes of a file) come back as blocks of
``od -An -v -tx1`` lines, each block ended by a line holding only :data:`END`; the parser drops
the spaces and newlines. ``od`` prints nothing but hex digits, spaces and newlines, so no byte of
a hostile file can end a block early or break the framing.

- :data:`FOLLOW` prints a header describing the file (device, inode, size, modification time,
  where the name leads when it is a symbolic link, first bytes, the bytes just before the
  resume offset),
  then ``exec``s ``tail -c +N -f`` with its standard error merged into the stream, so
  ``tail``'s own "file truncated" notice arrives exactly where the bytes of the new content
  begin.
- :data:`PROBE_LOOP` answers the same description on request, from one long-lived shell (the
  periodic check).
- :data:`LOCATE` describes the files beside the log that may hold its previous content: the
  old inode after a rename, or the copy left by copy-truncate rotation.
- :data:`READ_RANGE` prints a byte range of a file.

A description is three short processes: one ``stat``, whose one line gives the file's identity
and size and is the quick key of :data:`PROBE_LOOP`, and one ``od`` per byte range (``od -j
-N``, a seek, not a read of the skipped bytes); a file reached through a symbolic link adds
``readlink`` and an ``od``. A check of a file whose quick key has not changed is the ``stat``
alone. The host needs a POSIX shell and GNU coreutils (``stat -c``, ``tail --pid``, ``od``)
and ``find``.
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Sequence
from dataclasses import dataclass

_DESCRIBE = r"""
export LC_ALL=C
look() { s=$(stat -L -c '%d %i %s %.9Y' -- "$1" 2>/dev/null); }
describe() {
  echo "$$ $s"
  if [ -L "$1" ]; then readlink -f -- "$1" | od -An -v -tx1; fi; echo .
  od -An -v -tx1 -N "$2" -- "$1" 2>/dev/null; echo .
  od -An -v -tx1 -j "$3" -N "$4" -- "$1" 2>/dev/null; echo .
}
"""
"""``look FILE`` sets ``s`` to the file's quick key (device, inode, size, modification time to
the nanosecond), failing when there is no such file; ``describe FILE HEAD WINDOW_START WINDOW``
then prints the description of the file just looked at: ``PID`` and the key on one line, then
three hex blocks (where a symbolic link leads, empty for a plain file; the first bytes; the
window)."""

END = b"."
"""The line that ends a hex block."""

REPORT_BLOCKS = 3
"""Hex blocks in a description: the link's target, the first bytes, the window."""

FOLLOW = (
    _DESCRIBE
    + r"""
look "$1" || { echo missing; exit 0; }
describe "$1" "$2" "$3" "$4"
exec tail -c +"$(($5 + 1))" -f --pid="$PPID" -- "$6" 2>&1
"""
)

_DESCRIBE_EACH = (
    _DESCRIBE
    + r"""
hl=$1 ws=$2 wl=$3; shift 3
for f do
  printf '%s' "$f" | od -An -v -tx1; echo .
  if look "$f"; then describe "$f" "$hl" "$ws" "$wl"; else echo missing; fi
done
"""
)

LOCATE = r"""
dir=$(dirname -- "$1"); base=$(basename -- "$1")
find "$dir" -maxdepth 1 -type f ! -name "$base" \
  \( -inum "$2" -o -name "$base.*" -o -name "$base-*" -o -name "${base}_*" \) \
  ! -name '*.gz' ! -name '*.xz' ! -name '*.bz2' ! -name '*.zst' \
  -exec sh -c "$6" sh "$3" "$4" "$5" {} + 2>/dev/null
"""

READ_RANGE = r"""
tail -c +"$(($2 + 1))" -- "$1" | head -c "$3"
"""


def script_argv(script: str, args: Sequence[str | int]) -> list[str]:
    """``sh -c SCRIPT sh ARGS...``: the argument vector that runs a script with arguments."""
    return ["sh", "-c", script, "sh", *(str(a) for a in args)]


def follow_argv(
    path: str, head: int, window_start: int, window: int, offset: int, shown: str
) -> list[str]:
    return script_argv(FOLLOW, [path, head, window_start, window, offset, shown])


def locate_argv(path: str, ino: int, head: int, window_start: int, window: int) -> list[str]:
    """The argument vector of :data:`LOCATE` (the per-file script travels as an argument)."""
    return script_argv(LOCATE, [path, ino, head, window_start, window, _DESCRIBE_EACH])


def read_range_argv(path: str, start: int, length: int) -> list[str]:
    return script_argv(READ_RANGE, [path, start, length])


@dataclass(frozen=True, slots=True)
class FileReport:
    """What a script saw of a file: identity, size, modification time, first bytes and the
    window bytes."""

    pid: int
    dev: int
    ino: int
    size: int
    head: bytes
    window: bytes
    target: str | None = None
    """Where the path leads when it is a symbolic link (fully resolved), else None."""
    modified: str = ""
    """The modification time as ``stat -c %.9Y`` prints it (seconds and nanoseconds)."""

    @property
    def identity(self) -> tuple[int, int]:
        return (self.dev, self.ino)

    @property
    def key(self) -> str:
        """The quick key the file had when it was described, as :data:`PROBE_LOOP` compares it."""
        return f"{self.dev} {self.ino} {self.size} {self.modified}"


class ReportError(ValueError):
    """A script printed something that is not a report (the host lacks a tool, most likely)."""


_STAMP = re.compile(rb"-?[0-9]+(\.[0-9]+)?")


def _unhex(data: bytes) -> bytes:
    """The bytes of ``od -An -tx1`` output (spaces and newlines are dropped)."""
    try:
        return binascii.unhexlify(b"".join(data.split()))
    except (binascii.Error, ValueError) as exc:
        raise ReportError(f"not hex: {data[:80]!r}") from exc


def _block(lines: Sequence[bytes], start: int) -> tuple[bytes, int]:
    """The bytes of the hex block that begins at ``lines[start]``, and the index past its end."""
    for index in range(start, len(lines)):
        if lines[index].strip() == END:
            return _unhex(b"".join(lines[start:index])), index + 1
    raise ReportError(f"a hex block without its end: {list(lines[start : start + 4])!r}")


def _report_at(lines: Sequence[bytes], start: int) -> tuple[FileReport, int]:
    """The description that begins at ``lines[start]``, and the index of the line after it."""
    if start >= len(lines):
        raise ReportError("a report is missing")
    fields = lines[start].split()
    if (
        len(fields) != 5
        or not all(n.isdigit() for n in fields[:4])
        or _STAMP.fullmatch(fields[4]) is None
    ):
        raise ReportError(f"bad report header: {lines[start][:80]!r}")
    pid, dev, ino, size = (int(n) for n in fields[:4])
    link, index = _block(lines, start + 1)
    head, index = _block(lines, index)
    window, index = _block(lines, index)
    target = link.removesuffix(b"\n").decode("utf-8", "surrogateescape") or None
    modified = fields[4].decode("ascii")
    return FileReport(pid, dev, ino, size, head, window, target, modified), index


def parse_report(lines: Sequence[bytes]) -> FileReport:
    """Parse the lines ``describe`` prints (its header line, then its hex blocks)."""
    return _report_at(lines, 0)[0]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A file beside the log that may hold its previous content."""

    name: str
    report: FileReport


def parse_locate(output: bytes) -> list[Candidate]:
    """Parse :data:`LOCATE` output (a name block, then a report or ``missing``, per file)."""
    lines = output.split(b"\n")
    found: list[Candidate] = []
    index = 0
    while index < len(lines) and lines[index]:
        raw, index = _block(lines, index)
        name = raw.decode("utf-8", "surrogateescape")
        if index < len(lines) and lines[index].strip() == b"missing":
            index += 1
            continue
        report, index = _report_at(lines, index)
        found.append(Candidate(name, report))
    return found


def split_header(buffer: bytes) -> tuple[list[bytes], bytes] | None:
    """Split one answer off the front of ``buffer``: (its lines, the rest), None while partial.

    The answer is a one-word line (``missing``, or :data:`PROBE_LOOP`'s ``same``) or a
    description; a description ends with the end line of its last hex block (the bytes of the
    :data:`FOLLOW` stream come after its header).
    """
    first = buffer.find(b"\n")
    if first < 0:
        return None
    word = buffer[:first].strip()
    if word in (b"missing", b"same"):
        return [word], buffer[first + 1 :]
    end = first
    for _ in range(REPORT_BLOCKS):
        end = buffer.find(b"\n" + END + b"\n", end)
        if end < 0:
            return None
        end += len(END) + 1
    return buffer[:end].split(b"\n"), buffer[end + 1 :]


def nonce_path(path: str, token: int, bits: int = 32) -> tuple[str, bytes]:
    """``path`` spelled with a pattern of ``/`` and ``/.`` that encodes ``token``, and the pattern.

    The spelling names the same file and ``tail`` repeats it in its notices, so a notice can be
    told apart from log text that merely looks like one.
    """
    head, sep, name = path.rpartition("/")
    base = (head or "/.") if sep else "."
    pattern = "".join("/." if token >> i & 1 else "/" for i in range(bits)) + "/./"
    return f"{base}{pattern}{name}", pattern.encode()


NAMELESS_NOTICES = (
    b"tail: inotify cannot be used, reverting to polling\n",
    b"tail: inotify resources exhausted\n",
)
"""Notices ``tail`` prints without naming the file."""

MAX_NOTICE = 8192
"""A candidate notice longer than this is log text (paths are at most 4096 bytes)."""


@dataclass(frozen=True, slots=True)
class Notice:
    """A message ``tail`` printed about the file (not part of the file)."""

    text: bytes

    @property
    def truncated(self) -> bool:
        return self.text.endswith(b": file truncated\n")


class NoticeScanner:
    """Separates ``tail``'s notices from file bytes in the merged :data:`FOLLOW` stream.

    A notice counts only if it names the file by its :func:`nonce_path` spelling (or is one of
    the :data:`NAMELESS_NOTICES`), so log text cannot forge one. Bytes that may be the start of
    a notice are held back until it is complete or cannot be one.
    """

    def __init__(self, shown: str, pattern: bytes) -> None:
        spelled = shown.encode("utf-8", "surrogateescape")
        named = spelled[: spelled.index(pattern) + len(pattern)]
        self._heads = (b"tail: " + named, b"tail: '" + named, *NAMELESS_NOTICES)
        self._held = b""

    def feed(self, data: bytes) -> list[bytes | Notice]:
        buffer, self._held = self._held + data, b""
        parts: list[bytes | Notice] = []
        start = search = 0
        while True:
            found = self._next_head(buffer, search)
            if found is None:
                end = len(buffer) - self._partial_head(buffer, start)
                self._held = buffer[end:]
                return _emit(parts, buffer[start:end])
            at, head = found
            newline = buffer.find(b"\n", at + len(head) - 1)
            if newline < 0 and len(buffer) - at < MAX_NOTICE:
                self._held = buffer[at:]
                return _emit(parts, buffer[start:at])
            if newline < 0:
                search = at + 1
                continue
            _emit(parts, buffer[start:at]).append(Notice(buffer[at : newline + 1]))
            start = search = newline + 1

    def flush(self) -> bytes:
        """Bytes held back (the stream ended): they were file bytes after all."""
        held, self._held = self._held, b""
        return held

    def _next_head(self, buffer: bytes, start: int) -> tuple[int, bytes] | None:
        best: tuple[int, bytes] | None = None
        for head in self._heads:
            at = buffer.find(head, start)
            if at >= 0 and (best is None or at < best[0]):
                best = (at, head)
        return best

    def _partial_head(self, buffer: bytes, start: int) -> int:
        """Length of the longest tail of ``buffer[start:]`` that begins a notice."""
        longest = max(len(head) for head in self._heads) - 1
        for size in range(min(longest, len(buffer) - start), 0, -1):
            tail = buffer[-size:]
            if any(head.startswith(tail) for head in self._heads):
                return size
        return 0


def _emit(parts: list[bytes | Notice], data: bytes) -> list[bytes | Notice]:
    if data:
        parts.append(data)
    return parts


PROBE_LOOP = (
    _DESCRIBE
    + r"""
while read -r hl ws wl key; do
  look "$1" || { echo missing; continue; }
  if [ "$s" = "$key" ]; then echo same; else describe "$1" "$hl" "$ws" "$wl"; fi
done
"""
)
"""A long-lived checker: one ``hl ws wl key`` request line in; out, ``missing``, or ``same`` when
the file's quick key (device, inode, size and modification time to the nanosecond) is ``key``,
or the description (whose header holds the new quick key).

Running checks in one shell avoids starting a login shell (and its start-up files) each time,
and the quick key answers a check of a file nobody wrote since the last one with one ``stat``
instead of the three processes of a description (the first bytes and the window bytes cannot
have changed when neither the size nor the modification time did).
"""

NO_KEY = "-"
"""The key of a request that wants the whole description."""


def probe_loop_argv(path: str) -> list[str]:
    return script_argv(PROBE_LOOP, [path])


def parse_probe_answer(output: bytes) -> FileReport | None:
    """The report in :data:`PROBE_LOOP`'s answer to one question without a key (None: the file
    is missing)."""
    parts = split_header(output)
    if parts is None:
        raise ReportError(f"a partial answer: {output[:80]!r}")
    lines = parts[0]
    return None if lines == [b"missing"] else parse_report(lines)
