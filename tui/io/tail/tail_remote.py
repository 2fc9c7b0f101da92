"""The host side of a log tail: small POSIX shell scripts and the parsing of what they print.

Every script is passed to ``sh -c`` as one fixed string; the file name and numbers travel as
positional arguments, so nothing from a profile or a log is ever spliced into shell text. Byte
strings (file names, the first bytes of a file) come back hex-encoded by ``od`` so that no byte
of a hostile file can break the framing.

- :data:`FOLLOW` prints a header describing the file (device, inode, size, where the name
  leads when it is a symbolic link, first bytes, the bytes just before the resume offset),
  then ``exec``s ``tail -c +N -f`` with its standard error merged into the stream, so
  ``tail``'s own "file truncated" notice arrives exactly where the bytes of the new content
  begin.
- :data:`PROBE_LOOP` answers the same description on request, from one long-lived shell (the
  periodic check).
- :data:`LOCATE` describes the files beside the log that may hold its previous content: the
  old inode after a rename, or the copy left by copy-truncate rotation.
- :data:`READ_RANGE` prints a byte range of a file.

Each description reads its byte ranges with ``od -j -N`` (a seek, not a read of the skipped
bytes), five short processes; a check of a file whose quick key has not changed is one
``stat``. The host needs a POSIX shell and GNU coreutils (``stat -c``, ``tail --pid``, ``od``)
and ``find``.
"""

from __future__ import annotations

import binascii
from collections.abc import Sequence
from dataclasses import dataclass

_DESCRIBE = r"""
export LC_ALL=C
describe() {
  s=$(stat -L -c '%d %i %s' -- "$1" 2>/dev/null) || return 1
  t=-
  if [ -L "$1" ]; then t=$(readlink -f -- "$1" | od -An -v -tx1 | tr -d ' \n'); fi
  echo "$$ $s ${t:--}"
  od -An -v -tx1 -N "$2" -- "$1" 2>/dev/null | tr -d ' \n'; echo
  od -An -v -tx1 -j "$3" -N "$4" -- "$1" 2>/dev/null | tr -d ' \n'; echo
}
"""

FOLLOW = (
    _DESCRIBE
    + r"""
describe "$1" "$2" "$3" "$4" || { echo missing; exit 0; }
exec tail -c +"$(($5 + 1))" -f --pid="$PPID" -- "$6" 2>&1
"""
)

_DESCRIBE_EACH = (
    _DESCRIBE
    + r"""
hl=$1 ws=$2 wl=$3; shift 3
for f do
  printf '%s' "$f" | od -An -v -tx1 | tr -d ' \n'; echo
  describe "$f" "$hl" "$ws" "$wl" || echo missing
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
    """What a script saw of a file: identity, size, first bytes and the window bytes."""

    pid: int
    dev: int
    ino: int
    size: int
    head: bytes
    window: bytes
    target: str | None = None
    """Where the path leads when it is a symbolic link (fully resolved), else None."""

    @property
    def identity(self) -> tuple[int, int]:
        return (self.dev, self.ino)


class ReportError(ValueError):
    """A script printed something that is not a report (the host lacks a tool, most likely)."""


def _unhex(line: bytes) -> bytes:
    try:
        return binascii.unhexlify(line.strip())
    except (binascii.Error, ValueError) as exc:
        raise ReportError(f"not hex: {line[:80]!r}") from exc


def parse_report(lines: Sequence[bytes]) -> FileReport:
    """Parse the three lines ``describe`` prints."""
    if len(lines) < 3:
        raise ReportError(f"short report: {list(lines)!r}")
    fields = lines[0].split()
    numbers, link = fields[:4], fields[4:]
    if len(numbers) != 4 or not all(n.isdigit() for n in numbers) or len(link) > 1:
        raise ReportError(f"bad report header: {lines[0][:80]!r}")
    pid, dev, ino, size = (int(n) for n in numbers)
    target = None
    if link and link[0] != b"-":
        target = _unhex(link[0]).removesuffix(b"\n").decode("utf-8", "surrogateescape")
    return FileReport(pid, dev, ino, size, _unhex(lines[1]), _unhex(lines[2]), target)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A file beside the log that may hold its previous content."""

    name: str
    report: FileReport


def parse_locate(output: bytes) -> list[Candidate]:
    """Parse :data:`LOCATE` output (a name line, then a report or ``missing``, per file)."""
    lines = output.split(b"\n")
    found: list[Candidate] = []
    index = 0
    while index + 1 < len(lines) and lines[index]:
        name = _unhex(lines[index]).decode("utf-8", "surrogateescape")
        if lines[index + 1].strip() == b"missing":
            index += 2
            continue
        found.append(Candidate(name, parse_report(lines[index + 1 : index + 4])))
        index += 4
    return found


def split_header(buffer: bytes) -> tuple[list[bytes], bytes] | None:
    """Split a :data:`FOLLOW` header off the stream: (header lines, rest), or None if partial."""
    first = buffer.find(b"\n")
    if first < 0:
        return None
    if buffer[:first].strip() == b"missing":
        return [b"missing"], buffer[first + 1 :]
    second = buffer.find(b"\n", first + 1)
    third = buffer.find(b"\n", second + 1) if second >= 0 else -1
    if third < 0:
        return None
    return buffer[:third].split(b"\n"), buffer[third + 1 :]


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
  q=$(stat -L -c '%d %i %s %.9Y' -- "$1" 2>/dev/null) || { echo missing; continue; }
  if [ "$q" = "$key" ]; then echo same; continue; fi
  echo "$q"
  describe "$1" "$hl" "$ws" "$wl" || echo missing
done
"""
)
"""A long-lived checker: one ``hl ws wl key`` request line in; out, ``missing``, or ``same`` when
the file's quick key (device, inode, size and modification time to the nanosecond) is ``key``,
or the new quick key and then the description.

Running checks in one shell avoids starting a login shell (and its start-up files) each time,
and the quick key answers a check of a file nobody wrote since the last one with one ``stat``
instead of the five processes of a description (the first bytes and the window bytes cannot have
changed when neither the size nor the modification time did).
"""

NO_KEY = "-"
"""The key of a request that wants the whole description."""


def probe_loop_argv(path: str) -> list[str]:
    return script_argv(PROBE_LOOP, [path])


def parse_probe_answer(output: bytes) -> FileReport | None:
    """The report in :data:`PROBE_LOOP`'s answer to one question without a key (None: the file
    is missing)."""
    lines = output.split(b"\n")
    if lines[0].strip() == b"missing" or (len(lines) > 1 and lines[1].strip() == b"missing"):
        return None
    return parse_report(lines[1:4])
