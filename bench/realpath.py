"""The real ``bringup watch`` command in a real terminal, measured from outside.

Each case runs ``python -m tui watch`` in a tmux pane of 160x48 on a private tmux server, following
a log that this script appends 8 ranks of SGLang decode lines to, either on this machine
(``--local``) or over SSH to a throwaway OpenSSH server on 127.0.0.1 (the embedded server where
OpenSSH is not installed), at 0, 500, 4,000 and 20,000 lines/s, with the log view closed (main)
and open (log). For each case it reports, measured from ``/proc``:

- ``cpu``: CPU share of one core of the whole process tree (bringup and every descendant:
  ``utime + stime`` and the reaped children's ``cutime + cstime``) over the window;
- ``rss``: resident memory of the tree at the end of the window;
- ``caught up``: seconds from the last write (a marker line) until ``tmux capture-pane`` shows
  that line (``never`` when it did not within the limit).

The baseline is measured in the same run: ``tail -f`` of the same file in a second pane of the
same tmux server, beside each case. Two more cases measure idle serving: ``watch`` over SSH of a
simulated server once READY (health, generation probe, telemetry and the tail all live), and
``bringup demo`` once READY and its benchmark are done (the simulated servers are speculative and
export ``/metrics``, so the scrape is live too), each measured over 30 s once the serving line
says the scrape has backed off (``idle · every 10 s``: nothing moved in three scrapes).
``memory`` feeds lines as fast as the writer goes
for a while, or until ``--memory-lines`` are written (10,000,000 for the target), and reports the
tree's RSS at the end and its growth per line carried on to 10 M lines.

    python -m bench.realpath            # every case, two repeats (about fifteen minutes)
    python -m bench.realpath --quick    # short windows, one repeat, fewer cases
    python -m bench.realpath --only memory --memory-lines 10000000   # the real 10 M lines
    python -m bench.realpath --help
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.net import free_port
from tests.sshd import TestServer, proc_stats, start_server
from tests.ui.startup_log import up_to

RANKS = 8
RATES = (0, 500, 4_000, 20_000)
VIEWS = ("main", "log")
SOURCES = ("local", "ssh")
TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
CATCH_UP_LIMIT = 15.0
IDLE_WINDOW = 30.0
"""Seconds the idle cases are measured over (a 0.1 % difference is 3 clock ticks in it)."""
IDLE_MARK = "idle · every"
"""What the serving line says once the scrape of an idle server has backed off."""
SIZE = ("-x", "160", "-y", "48")
TARGETS = "busy 4,000 lines/s: main < 25 %, log < 35 %; caught up < 0.5 s; idle serving < 1 %"


def decode_line(n: int) -> str:
    """One SGLang decode-statistics line of rank ``n % 8``."""
    minutes, seconds = divmod(n // 4000 % 3600, 60)
    return (
        f"[2026-01-01 11:{minutes:02d}:{seconds:02d} TP{n % RANKS}] Decode batch, "
        f"#running-req: 12, #token: {3456 + n % 997}, token usage: 0.05, accept len: 2.51, "
        f"gen throughput (token/s): {800 + n % 97}.33, #queue-req: 0\n"
    )


class Writer(threading.Thread):
    """Appends decode lines to ``path`` at ``rate`` lines/s (0: none; -1: as fast as it can),
    in batches every 20 ms."""

    def __init__(self, path: Path, rate: int) -> None:
        super().__init__(daemon=True)
        self.path = path
        self.rate = rate
        self.written = 0
        self.stopped = threading.Event()

    def run(self) -> None:
        if self.rate == 0:
            return
        started = time.monotonic()
        with self.path.open("a") as log:
            while not self.stopped.is_set():
                due = 2_000 if self.rate < 0 else int((time.monotonic() - started) * self.rate)
                batch = due - self.written if self.rate > 0 else due
                if batch > 0:
                    log.write("".join(decode_line(self.written + i) for i in range(batch)))
                    log.flush()
                    self.written += batch
                if self.rate > 0:
                    self.stopped.wait(0.02)

    def finish(self) -> None:
        self.stopped.set()
        self.join()


# --- the process tree -------------------------------------------------------------------------


def tree(root: int) -> list[int]:
    """``root`` and every live descendant."""
    parents: dict[int, list[int]] = {}
    for pid, fields in proc_stats():
        parents.setdefault(int(fields[1]), []).append(pid)
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(parents.get(pid, []))
    return found


def cpu_ticks(root: int) -> int:
    """Clock ticks the tree has used: each process's own and its reaped children's."""
    total = 0
    for pid in tree(root):
        with contextlib.suppress(OSError):
            stat = Path(f"/proc/{pid}/stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            total += sum(int(value) for value in fields[11:15])
    return total


def rss_mb(root: int) -> float:
    pages = 0
    for pid in tree(root):
        with contextlib.suppress(OSError, IndexError):
            pages += int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    return pages * PAGE / 1e6


# --- tmux -----------------------------------------------------------------------------------


class Terminal:
    """A private tmux server; each session one 160x48 pane."""

    def __init__(self) -> None:
        self.socket = f"bringup-realpath-{os.getpid()}"
        self.verbose = False

    def tmux(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=False
        )

    def open(self) -> None:
        """A session that lives as long as the run: the server never exits between cases."""
        self.tmux("new-session", "-d", "-s", "keep", *SIZE, "sleep 86400")

    def start(self, name: str, argv: list[str], env: dict[str, str]) -> int:
        assignments = [f"{key}={value}" for key, value in env.items()]
        command = shlex.join(["env", "-u", "COLUMNS", "-u", "LINES", *assignments, *argv])
        self.tmux("new-session", "-d", "-s", name, *SIZE, "-c", str(ROOT), command)
        return int(self.tmux("display-message", "-p", "-t", name, "#{pane_pid}").stdout)

    def show(self, name: str) -> None:
        """Print the pane when asked (``--show``), to see what a figure was measured on."""
        if self.verbose:
            print(self.screen(name))

    def screen(self, name: str) -> str:
        return self.tmux("capture-pane", "-p", "-t", name).stdout

    def keys(self, name: str, *keys: str) -> None:
        self.tmux("send-keys", "-t", name, *keys)

    def wait_for(self, name: str, *texts: str, timeout: float = 120.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen(name)
            if all(text in screen for text in texts):
                return True
            time.sleep(0.2)
        return False

    def close(self, name: str, pid: int) -> None:
        self.keys(name, "q")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.05)
        self.tmux("kill-session", "-t", name)

    def stop(self) -> None:
        self.tmux("kill-server")


def _alive(pid: int) -> bool:
    """The process runs: it exists and has not exited (a zombie its parent, the tmux server,
    has not reaped yet has exited)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2 :][:1] != "Z"


# --- cases ----------------------------------------------------------------------------------


@dataclass
class Figures:
    case: str
    cpu: float
    rss: float
    caught_up: float | None
    base_cpu: float | None = None
    base_caught_up: float | None = None
    followed: bool = True
    """Whether lines were written and a catch-up measured (not for the idle cases)."""

    def row(self) -> str:
        def seconds(value: float | None) -> str:
            if not self.followed:
                return "-"
            return "never" if value is None else f"{value:.2f} s"

        base = "" if self.base_cpu is None else f"{self.base_cpu:6.1f} %"
        base_seen = "" if self.base_cpu is None else seconds(self.base_caught_up)
        return (
            f"{self.case:<26} {self.cpu:6.1f} % {self.rss:7.1f} MB {seconds(self.caught_up):>9}"
            f"   {base:>8} {base_seen:>9}"
        )


HEADER = f"{'case':<26} {'cpu':>8} {'rss':>10} {'caught up':>9}   {'tail -f':>8} {'caught up':>9}"


def _env(folder: Path) -> dict[str, str]:
    return {
        "TERM": "tmux-256color",
        "BRINGUP_DATA_DIR": str(folder / "data"),
        "PYTHONPATH": str(ROOT),
    }


def _watch_argv(source: str, log: Path, folder: Path, server: TestServer | None,
                port: int) -> list[str]:  # fmt: skip
    argv = [sys.executable, "-m", "tui", "watch"]
    if source == "local":
        return [*argv, "--local", "--log", str(log), "--port", str(port)]
    assert server is not None
    config = folder / "config.toml"
    config.write_text(
        "[profiles.bench]\n"
        f'host = "{server.alias}"\n'
        f'log = "{log}"\n'
        f"port = {port}\n"
        f'ssh_config = "{server.ssh_config}"\n'
    )
    return [*argv, "bench", "--config", str(config)]


def _seen(terminal: Terminal, names: dict[str, str], marker: str) -> dict[str, float | None]:
    """Seconds until each pane shows ``marker`` (polled every 20 ms)."""
    started = time.monotonic()
    found: dict[str, float | None] = dict.fromkeys(names)
    while time.monotonic() - started < CATCH_UP_LIMIT and None in found.values():
        for key, name in names.items():
            if found[key] is None and marker in terminal.screen(name):
                found[key] = time.monotonic() - started
        time.sleep(0.02)
    return found


def measure_follow(terminal: Terminal, folder: Path, source: str, view: str, rate: int,
                   window: float, server: TestServer | None) -> Figures:  # fmt: skip
    """One case: bringup and ``tail -f`` follow the same log for ``window`` seconds at ``rate``."""
    log = folder / f"{source}-{view}-{rate}.log"
    log.write_bytes(up_to("ready"))
    argv = _watch_argv(source, log, folder, server, free_port())
    app = terminal.start("app", argv, _env(folder))
    tail = terminal.start("tail", ["tail", "-n", "0", "-F", str(log)], {})
    try:
        terminal.wait_for("app", "TP7", "ready")
        if view == "log":
            terminal.keys("app", "l")
            terminal.wait_for("app", "following", timeout=10)
        time.sleep(1.0)
        writer = Writer(log, rate)
        writer.start()
        time.sleep(min(2.0, window / 2))
        terminal.show("app")
        before = (cpu_ticks(app), cpu_ticks(tail), time.monotonic())
        time.sleep(window)
        after = (cpu_ticks(app), cpu_ticks(tail), time.monotonic())
        rss = rss_mb(app)
        writer.finish()
        marker = f"marker-{rate}-{os.getpid()}-{int(time.time())}"
        with log.open("a") as handle:
            handle.write(f"[2026-01-01 12:00:00 TP0] {marker}\n")
        seen = _seen(terminal, {"app": "app", "tail": "tail"}, marker)
        span = after[2] - before[2]
        return Figures(
            f"{source} {view} {rate:,}/s",
            100.0 * (after[0] - before[0]) / TICK / span,
            rss,
            seen["app"],
            100.0 * (after[1] - before[1]) / TICK / span,
            seen["tail"],
        )
    finally:
        terminal.close("app", app)
        terminal.tmux("kill-session", "-t", "tail")


def _sim_argv(port: int, folder: Path) -> list[str]:
    return [
        sys.executable, "-m", "tui.sim", "--model-path", "moonshotai/Kimi-K2.5",
        "--tp-size", str(RANKS), "--port", str(port), "--time-scale", "0.02",
        "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d/eagle3",
        "--enable-metrics",
        "--pid-file", str(folder / "sim.pid"), "--state-file", str(folder / "gpus.json"),
    ]  # fmt: skip


def measure_serving(terminal: Terminal, folder: Path, window: float,
                    server: TestServer) -> Figures:  # fmt: skip
    """``watch`` over SSH of a simulated server, READY and idle: every poll is live."""
    port = free_port()
    log = folder / "serving.log"
    with log.open("wb") as output:
        sim = subprocess.Popen(_sim_argv(port, folder), stdout=output, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, cwd=ROOT,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    argv = _watch_argv("ssh", log, folder, server, port)
    config = folder / "config.toml"
    smi = ["env", f"PYTHONPATH={ROOT}", sys.executable, "-m", "tui.sim.nvidia_smi",
           "--state-file", str(folder / "gpus.json")]  # fmt: skip
    text = config.read_text() + f"nvidia_smi = {json.dumps(smi)}\n"
    config.write_text(text + '[profiles.bench.bench]\nmode = "off"\n')  # the monitor alone
    app = terminal.start("app", argv, _env(folder))
    try:
        terminal.wait_for("app", "READY", "generation ok", timeout=180)
        _settle_idle(terminal)
        terminal.show("app")
        before = (cpu_ticks(app), time.monotonic())
        time.sleep(window)
        after = (cpu_ticks(app), time.monotonic())
        cpu = 100.0 * (after[0] - before[0]) / TICK / (after[1] - before[1])
        return Figures("ssh serving idle", cpu, rss_mb(app), None, followed=False)
    finally:
        terminal.close("app", app)
        sim.terminate()
        sim.wait(10)


def measure_demo(terminal: Terminal, folder: Path, window: float) -> Figures:
    """``bringup demo`` once READY and its benchmark are done."""
    private = folder / "demo-tmp"
    private.mkdir(exist_ok=True)
    env = {**_env(folder), "TMPDIR": str(private)}
    app = terminal.start("app", [sys.executable, "-m", "tui", "demo"], env)
    try:
        terminal.wait_for("app", "READY", "generation ok", timeout=180)
        _until(lambda: _bench_done(terminal.screen("app")), 180.0)
        _settle_idle(terminal)
        terminal.show("app")
        before = (cpu_ticks(app), time.monotonic())
        time.sleep(window)
        after = (cpu_ticks(app), time.monotonic())
        cpu = 100.0 * (after[0] - before[0]) / TICK / (after[1] - before[1])
        figures = Figures("demo idle after bench", cpu, rss_mb(app), None, followed=False)
        started = time.monotonic()
        terminal.keys("app", "q")
        prompt = _until(lambda: not _alive(app), 30.0)
        print(f"  demo: q to exit {time.monotonic() - started:.2f} s (exited: {prompt})")
        if not prompt:
            terminal.show("app")
        return figures
    finally:
        terminal.tmux("kill-session", "-t", "app")


def _settle_idle(terminal: Terminal) -> None:
    """Wait until the screen is idle: the serving line says the scrape has backed off (three
    scrapes in a row saw nothing move), then a few seconds more."""
    idle = terminal.wait_for("app", IDLE_MARK, timeout=60.0)
    print(f"  serving line says {IDLE_MARK!r}: {idle}")
    time.sleep(3.0)


def _bench_done(screen: str) -> bool:
    """The demo's benchmark has run: its line is there and no longer says running."""
    line = next((row for row in screen.splitlines() if "Benchmark #1" in row), "")
    return bool(line) and "running" not in line


def _until(done: object, timeout: float) -> bool:
    assert callable(done)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if done():
            return True
        time.sleep(0.02)
    return False


def measure_memory(terminal: Terminal, folder: Path, seconds: float,
                   lines: int | None = None) -> Figures:  # fmt: skip
    """Lines as fast as the writer goes, for ``seconds`` (or until ``lines`` are written); the
    RSS at the end, and its growth per line carried on to 10 M lines."""
    log = folder / "memory.log"
    log.write_bytes(up_to("ready"))
    app = terminal.start("app", _watch_argv("local", log, folder, None, free_port()),
                         _env(folder))  # fmt: skip
    try:
        terminal.wait_for("app", "TP7", "ready")
        time.sleep(2.0)
        start_rss = rss_mb(app)
        writer = Writer(log, -1)
        writer.start()
        started = time.monotonic()
        if lines is None:
            time.sleep(seconds)
        while lines is not None and writer.written < lines:
            time.sleep(0.5)
        writer.finish()
        took = time.monotonic() - started
        marker = f"marker-memory-{os.getpid()}"
        with log.open("a") as handle:
            handle.write(f"[2026-01-01 12:00:00 TP0] {marker}\n")
        shown = terminal.wait_for("app", marker, timeout=max(120.0, took))
        time.sleep(2.0)
        end_rss = rss_mb(app)
        per_line = max(0.0, end_rss - start_rss) / max(1, writer.written)
        projected = start_rss + per_line * 10_000_000
        print(
            f"  memory: {writer.written:,} lines in {took:.0f} s, RSS {start_rss:.1f} -> "
            f"{end_rss:.1f} MB, last line shown: {shown}; linear growth to 10 M lines would "
            f"give {projected:.0f} MB" + ("" if writer.written >= 10_000_000 else " (extrapolated)")
        )
        return Figures(f"memory {writer.written // 1000:,}k lines", 0.0, end_rss, None,
                       followed=False)  # fmt: skip
    finally:
        terminal.close("app", app)


# --- the run --------------------------------------------------------------------------------


@contextlib.contextmanager
def workspace() -> Iterator[tuple[Terminal, Path, TestServer]]:
    folder = Path(tempfile.mkdtemp(prefix="bringup-realpath-"))
    terminal = Terminal()
    terminal.open()
    server = start_server(folder / "sshd")
    try:
        yield terminal, folder, server
    finally:
        server.stop()
        terminal.stop()
        shutil.rmtree(folder, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 s windows, one repeat")
    parser.add_argument("--repeats", type=int, default=None, help="runs of every case")
    parser.add_argument("--only", nargs="*", default=None,
                        help="case kinds: follow serving demo memory")  # fmt: skip
    parser.add_argument("--rates", nargs="*", type=int, default=list(RATES), help="lines/s")
    parser.add_argument("--sources", nargs="*", default=list(SOURCES), choices=SOURCES)
    parser.add_argument("--views", nargs="*", default=list(VIEWS), choices=VIEWS)
    parser.add_argument("--show", action="store_true", help="print each pane as measured")
    parser.add_argument("--memory-lines", type=int, default=None,
                        help="memory case: lines to write (10000000: the target)")  # fmt: skip
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        print("tmux is not installed", file=sys.stderr)
        return 2
    window = 3.0 if args.quick else 8.0
    repeats = args.repeats or (1 if args.quick else 2)
    kinds = args.only or ["follow", "serving", "demo", "memory"]
    print(f"targets: {TARGETS}")
    for repeat in range(repeats):
        rows: list[Figures] = []
        with workspace() as (terminal, folder, server):
            terminal.verbose = args.show
            print(f"run {repeat + 1} of {repeats} (ssh: {server.kind} sshd on 127.0.0.1)")
            if "follow" in kinds:
                for source in args.sources:
                    for view in args.views:
                        for rate in args.rates:
                            figures = measure_follow(
                                terminal, folder, source, view, rate, window, server
                            )
                            rows.append(figures)
                            print("  " + rows[-1].row(), flush=True)
            if "serving" in kinds:
                rows.append(measure_serving(terminal, folder, max(window, IDLE_WINDOW), server))
            if "demo" in kinds:
                rows.append(measure_demo(terminal, folder, max(window, IDLE_WINDOW)))
            if "memory" in kinds:
                seconds = 5.0 if args.quick else 20.0
                rows.append(measure_memory(terminal, folder, seconds, args.memory_lines))
        print(HEADER)
        for row in rows:
            print(row.row())
    return 0


if __name__ == "__main__":
    sys.exit(main())
