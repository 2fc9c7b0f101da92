"""Turn untrusted log bytes into text that is safe to show and to parse.

Every byte of a server log is hostile until proven otherwise. The functions here:

- replace invalid UTF-8 with U+FFFD (decoding never raises);
- strip terminal escape sequences: CSI (colours, cursor moves, screen clears), OSC (window
  titles, clipboard writes, hyperlinks), DCS/SOS/PM/APC strings and the other two-byte escapes,
  in their 7-bit (``ESC [``) and 8-bit (U+009B) spellings;
- collapse carriage-return redraws the way a terminal shows them: each ``\\r`` returns to the
  start of the line and the next segment overwrites what was there (tqdm bars update in place);
- map the remaining C0 controls (except tab) to U+FFFD and drop DEL and C1 controls;
- cap absurdly long lines, keeping the head and saying how much was cut.

``printable`` is the one rule for short text shown on one line of a widget (a rank tag, a
file name, a reason, a value quoted in an error): every control character but tab becomes
U+FFFD, and with a limit long text is cut.

The output never contains ESC, DEL or a C1 control (U+0080 to U+009F), whatever the input.
"""

from __future__ import annotations

import re
from typing import AnyStr

MAX_LINE_CHARS = 32_768
"""Lines longer than this keep their head and end with a note saying how much was cut."""

REPLACEMENT = "\ufffd"

_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI, tolerating a missing final byte
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # strings
    r"|\x1b[ -/]*[0-~]?"  # every other escape, and a lone ESC
)
# Anything a clean line may not contain: C0 controls except tab and newline, DEL and C1.
_SUSPECT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROLS: dict[int, str | None] = {
    **{code: REPLACEMENT for code in range(0x20) if code not in (0x09, 0x0A)},
    0x7F: None,
    **dict.fromkeys(range(0x80, 0xA0)),
}

# Anything that may not reach one line of a widget: every control character but tab (C0, DEL, C1).
_UNPRINTABLE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")
_UNPRINTABLE_CODES = (*range(0x00, 0x09), *range(0x0A, 0x20), *range(0x7F, 0xA0))
_UNPRINTABLE_SHOWN = dict.fromkeys(_UNPRINTABLE_CODES, REPLACEMENT)


def printable(text: str, limit: int | None = None) -> str:
    """``text`` safe for one line of a terminal: every control character but tab, newlines
    included, replaced by U+FFFD (looked for first: a search costs a fifth of a translation, and
    clean text is the rule); with ``limit``, longer text is cut to ``limit`` characters ending
    in an ellipsis."""
    if _UNPRINTABLE.search(text) is not None:
        text = text.translate(_UNPRINTABLE_SHOWN)
    if limit is not None and len(text) > limit:
        return text[: max(limit - 1, 0)] + "…"
    return text


# Bytes that need cleaning wherever they are: C0 controls except tab and newline, and DEL (each
# is looked for with one ``in`` test; the only C1 controls UTF-8 can spell start with 0xC2).
_CONTROL_BYTES = bytes([*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F])
_C1_BYTES = re.compile(rb"\xc2[\x80-\x9f]")


def suspect_chars(data: bytes) -> str | None:
    """The characters of ``data`` that need cleaning, found at C speed: ``""`` when there are
    none, the distinct control characters (``"\\r"`` for a tqdm bar) when only C0 controls and
    DEL occur, and None when a C1 control may occur (then only a regex finds them)."""
    if b"\xc2" in data and _C1_BYTES.search(data) is not None:
        return None
    return "".join(map(chr, filter(data.__contains__, _CONTROL_BYTES)))


def clean_segment(text: str) -> str:
    """Strip escapes and neutralise controls in text that holds no ``\\r`` or ``\\n``."""
    if _SUSPECT.search(text) is None:
        return text
    return _ESCAPES.sub("", text).translate(_CONTROLS)


def overlay(segments: list[str]) -> str:
    """What a terminal shows after writing each segment from column 0 over the previous ones."""
    shown = segments[0]
    for segment in segments[1:]:
        if len(segment) >= len(shown):
            shown = segment
        elif segment:
            shown = segment + shown[len(segment) :]
    return shown


def cap_line(text: str, limit: int = MAX_LINE_CHARS) -> str:
    """Keep the first ``limit`` characters of an absurdly long line and say how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]} [… {len(text) - limit} characters cut]"


def redraws(raw: str) -> list[str]:
    """The cleaned ``\\r``-separated segments of one raw line, in the order they were drawn."""
    return [clean_segment(segment) for segment in raw.split("\r")]


def sanitize_line(raw: str, limit: int = MAX_LINE_CHARS) -> str:
    """One raw line (no ``\\n``) as a terminal would show it, safe and capped."""
    if _SUSPECT.search(raw) is None:
        return cap_line(raw, limit)
    if "\r" in raw:
        return cap_line(overlay(redraws(raw)), limit)
    return cap_line(clean_segment(raw), limit)


def split_lines(
    text: str, limit: int = MAX_LINE_CHARS, suspect: bool | None = None, chars: str | None = None
) -> tuple[list[str], dict[int, list[str]]]:
    """Split decoded text on ``\\n`` into safe lines.

    Returns the lines and, for each line that was redrawn with ``\\r``, its cleaned segments
    (the caller may want every intermediate tqdm state, not only the last one). The number of
    lines is always ``text.count("\\n") + 1``: sanitizing never adds or removes a line.
    ``suspect=False`` says the caller already knows that nothing needs cleaning (``suspect_chars``
    gave ``""``); ``chars`` names the only characters that do (see
    ``suspect_chars``), so that their lines are found with ``str.find`` instead of a regex.
    """
    lines = text.split("\n")
    segmented: dict[int, list[str]] = {}
    if suspect is False or (suspect is None and _SUSPECT.search(text) is None):
        if may_hold_long_line(text, limit, "\n") and max(map(len, lines)) > limit:
            lines = [cap_line(line, limit) for line in lines]
        return lines, segmented
    suspects = _lines_holding(text, chars) if chars else _suspect_lines(text)
    for index in suspects:
        line = lines[index]
        if "\r" in line:
            segments = redraws(line)
            segmented[index] = segments
            lines[index] = cap_line(overlay(segments), limit)
        else:
            lines[index] = cap_line(clean_segment(line), limit)
    if len(text) > limit and max(map(len, lines)) > limit:
        done = set(suspects)
        for index, line in enumerate(lines):
            if len(line) > limit and index not in done:
                lines[index] = cap_line(line, limit)
    return lines, segmented


def may_hold_long_line(
    text: AnyStr, limit: int, newline: AnyStr, start: int = 0, stop: int | None = None
) -> bool:
    """False when no line of ``text[start:stop]`` (text or bytes) is longer than ``limit``,
    decided with a few finds.

    A line longer than ``limit`` covers a whole aligned window of ``limit // 2`` items, so when
    every such window holds a newline, no line is too long.
    """
    stop = len(text) if stop is None else stop
    if stop - start <= limit:
        return False
    window = max(limit // 2, 1)
    starts = range(start, stop, window)
    return any(text.find(newline, at, min(at + window, stop)) < 0 for at in starts)


def _lines_holding(text: str, chars: str) -> list[int]:
    """Indexes of the lines of ``text`` that hold one of ``chars``, in order (one ``str.find``
    per character and such line; the clean lines in between are skipped at C speed)."""
    found: list[int] = []
    upcoming = {char: text.find(char) for char in chars}
    index, counted = 0, 0
    while live := [at for at in upcoming.values() if at >= 0]:
        at = min(live)
        index += text.count("\n", counted, at)
        counted = at
        found.append(index)
        start = text.find("\n", at) + 1
        if start == 0:
            break
        for char, position in upcoming.items():
            if 0 <= position < start:
                upcoming[char] = text.find(char, start)
    return found


def _suspect_lines(text: str) -> list[int]:
    """Indexes of the lines of ``text`` that hold a character needing cleaning.

    One regex search per such line; the clean lines in between are skipped at C speed.
    """
    found: list[int] = []
    index, counted, start = 0, 0, 0
    while (match := _SUSPECT.search(text, start)) is not None:
        at = match.start()
        index += text.count("\n", counted, at)
        counted = at
        found.append(index)
        start = text.find("\n", at) + 1
        if start == 0:
            break
    return found


def sanitize_text(text: str, limit: int = MAX_LINE_CHARS) -> str:
    """Multi-line text made safe line by line; newlines are kept."""
    return "\n".join(split_lines(text, limit)[0])


def sanitize_bytes(data: bytes, limit: int = MAX_LINE_CHARS) -> str:
    """Bytes from anywhere (a log, an HTTP body) as safe text; never raises."""
    return sanitize_text(data.decode("utf-8", "replace"), limit)
