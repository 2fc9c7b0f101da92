"""What a check of the followed file costs the host, and what its framing withstands.

The file checker runs under the real shells with ``PATH`` holding only wrappers that note their
name and run the real program: every program a check starts is counted, and a script that
reached for a program without a wrapper would fail.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from tui.io.tail.tail_remote import (
    FileReport,
    locate_argv,
    parse_locate,
    parse_probe_answer,
    probe_loop_argv,
    split_header,
)

TEXT = b"[2025-01-01 00:00:00 TP0] Decode batch, #running-req: 1\n" * 4
TOOLS = ("stat", "od", "readlink", "tr", "cat", "head", "tail", "dd", "sed", "cut", "printf")
"""Programs a check might reach for (a wrapper each; the shells' builtins need none)."""
LOCATE_TOOLS = ("dirname", "basename", "find", "sh")
"""What :data:`~tui.io.tail.tail_remote.LOCATE` runs besides."""
SHELLS = [name for name in ("dash", "bash") if shutil.which(name)]


class Host:
    """A directory of counting wrappers and the shell that runs the scripts with them."""

    def __init__(self, folder: Path, shell: str) -> None:
        self.bin = folder / "bin"
        self.bin.mkdir()
        self.log = folder / "started"
        self.shell = shutil.which(shell) or shell
        for name in (*TOOLS, *LOCATE_TOOLS):
            real = shutil.which(name)
            if real is not None:
                self._wrap(name, real)

    def _wrap(self, name: str, real: str) -> None:
        wrapper = self.bin / name
        wrapper.write_text(
            f"#!{self.shell}\n"
            f"printf '%s\\n' {shlex.quote(name)} >> {shlex.quote(str(self.log))}\n"
            f'exec {shlex.quote(real)} "$@"\n'
        )
        wrapper.chmod(0o755)

    def run(self, argv: list[str], stdin: bytes = b"") -> bytes:
        """Run a script's argument vector under this host's shell and wrappers; its output."""
        done = subprocess.run(
            [self.shell, *argv[1:]],
            input=stdin,
            capture_output=True,
            env={"PATH": str(self.bin)},
            timeout=30,
            check=True,
        )
        assert not done.stderr, done.stderr
        return done.stdout

    def started(self) -> Counter[str]:
        """The programs started so far, by name (and forgets them)."""
        names = self.log.read_text().split() if self.log.exists() else []
        self.log.unlink(missing_ok=True)
        return Counter(names)


@pytest.fixture(params=SHELLS)
def host(request: pytest.FixtureRequest, tmp_path: Path) -> Host:
    return Host(tmp_path, request.param)


def ask(host: Host, path: Path, *keys: str) -> bytes:
    """The file checker's answers to one request per key (the first and the last 16 bytes)."""
    window = f"16 {path.stat().st_size - 16} 16"
    return host.run(probe_loop_argv(str(path)), "".join(f"{window} {k}\n" for k in keys).encode())


def full(host: Host, path: Path) -> FileReport:
    report = parse_probe_answer(ask(host, path, "-"))
    assert report is not None
    return report


def test_a_full_check_is_one_stat_and_two_od_and_an_unchanged_file_one_stat(
    host: Host, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(TEXT)
    report = full(host, log)
    assert (report.head, report.window, report.size) == (TEXT[:16], TEXT[-16:], len(TEXT))
    assert report.target is None
    assert host.started() == Counter({"stat": 1, "od": 2})

    answer = ask(host, log, report.key)
    assert answer == b"same\n"
    assert host.started() == Counter({"stat": 1})

    with log.open("ab") as handle:
        handle.write(TEXT)
    assert full(host, log).size == 2 * len(TEXT)
    assert host.started() == Counter({"stat": 1, "od": 2})


def test_a_log_reached_through_a_symlink_adds_readlink_and_an_od(
    host: Host, tmp_path: Path
) -> None:
    target = tmp_path / "server-1.log"
    target.write_bytes(TEXT)
    log = tmp_path / "server.log"
    log.symlink_to(target.name)
    assert full(host, log).target == str(target.resolve())
    assert host.started() == Counter({"stat": 1, "od": 3, "readlink": 1})


def test_hostile_names_and_bytes_stay_inside_their_blocks(host: Host, tmp_path: Path) -> None:
    """File bytes and names that spell the framing's own lines come back as they are."""
    forged = b"\n.\nmissing\nsame\n.\n12 3 4 5 6\n.\n"
    folder = tmp_path / "a\n.\nsame\nb"
    folder.mkdir()
    target = folder / "server.log.1\n.\nmissing\n"
    target.write_bytes(forged + TEXT)
    log = folder / "server.log"
    log.symlink_to(target.name)

    report = full(host, log)
    assert report.target == str(target.resolve())
    assert report.head == (forged + TEXT)[:16]
    assert report.window == TEXT[-16:]

    end = report.size - 16
    found = parse_locate(host.run(locate_argv(str(log), report.ino, 16, end, 16)))
    assert [(c.name, c.report.head, c.report.window) for c in found] == [
        (str(target), (forged + TEXT)[:16], TEXT[-16:])
    ]


def test_a_follow_header_leaves_the_stream_after_it() -> None:
    """The bytes after a header are the file's, even when they spell an end line."""
    header = b"7 1 2 3 4.5\n.\n 68 69\n.\n.\n"
    assert split_header(header + b".\n.\n") == (
        [b"7 1 2 3 4.5", b".", b" 68 69", b".", b"."],
        b".\n.\n",
    )
    assert split_header(header[:-2]) is None
