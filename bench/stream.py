"""How fast and how lean the live log stream is, over a loopback SSH server.

Three figures, each against a throwaway OpenSSH ``sshd`` on 127.0.0.1 (the embedded asyncssh
server where ``sshd`` is not installed):

- **latency**: from a line appended to the log to its JSON event printed by
  ``bringup wait --json`` (the ``t`` it stamps, and when a reader of its output got it);
  p50, p99 and the maximum over ``--samples`` lines written one at a time;
- **catch-up**: attaching to an existing ``--catchup-lines`` log: bytes per second delivered by
  the tail (connection already open), against ``ssh HOST cat LOG > /dev/null`` on the same file
  (its connection set-up subtracted); and the whole ``bringup wait`` pipeline, engine included;
- **memory**: peak resident memory of a process streaming ``--memory-lines`` lines through the
  tail, and of ``bringup wait --json`` reading the same log to its end.

Usage::

    python bench/stream.py [--samples 200] [--catchup-lines 1000000]
                           [--memory-lines 10000000] [--skip latency,catchup,memory]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.sshd import TestServer, start_server
from tui.io.transport.host_session import HostSession, SshConnector
from tui.io.transport.link_events import Chunk

HEADER = b"[2025-01-01 00:00:00] server_args=ServerArgs(model_path='bench/model', tp_size=8)\n"
READY = b"[2025-01-01 00:09:00] The server is fired up and ready to roll!\n"
PAD = "x" * 24


def bulk_line(i: int) -> str:
    """A decode-statistics line of about 150 bytes, as SGLang prints many of them."""
    return (
        f"[2025-01-01 00:05:00 TP{i % 8}] Decode batch. #running-req: 32, #token: {i % 9000}, "
        f"token usage: 0.12, gen throughput (token/s): {i % 997}.25, #queue-req: 0, {PAD}\n"
    )


def write_log(path: Path, lines: int) -> int:
    """Write HEADER, ``lines`` bulk lines and READY; return the size."""
    with path.open("wb") as handle:
        handle.write(HEADER)
        for start in range(0, lines, 10_000):
            block = "".join(bulk_line(i) for i in range(start, min(lines, start + 10_000)))
            handle.write(block.encode())
        handle.write(READY)
    return path.stat().st_size


def wait_command(server: TestServer, log: Path) -> list[str]:
    return [
        sys.executable, "-m", "tui", "wait", "--host", server.alias,
        "--ssh-config", str(server.ssh_config), "--log", str(log), "--log-only", "--json",
        "--timeout", "2h",
    ]  # fmt: skip


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


# ---------------------------------------------------------------------------- latency


class EventReader:
    """Reads ``bringup wait --json`` output in a thread; remembers when each path arrived."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.arrived: dict[str, tuple[float, float]] = {}
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._read, args=(process,), daemon=True)
        self._thread.start()

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            now = time.time()
            record = json.loads(line)
            if record.get("event") == "request_logged":
                with self._cond:
                    self.arrived[record["path"]] = (record["t"], now)
                    self._cond.notify_all()

    def wait_for(self, path: str, timeout: float) -> tuple[float, float] | None:
        with self._cond:
            self._cond.wait_for(lambda: path in self.arrived, timeout)
            return self.arrived.get(path)


def access_line(path: str, index: int) -> bytes:
    """An access-log line; each ``index`` gets its own ten-second slot of log time, because
    the engine reports at most one request per slot."""
    clock = time.strftime("%H:%M:%S", time.gmtime(index * 10))
    request = f'"GET {path} HTTP/1.1" 200 OK'
    return f"[2025-01-02 {clock}] INFO:     127.0.0.1:40000 - {request}\n".encode()


def measure_latency(server: TestServer, work: Path, samples: int) -> None:
    log = work / "latency.log"
    log.write_bytes(HEADER)
    process = subprocess.Popen(wait_command(server, log), stdout=subprocess.PIPE, text=True)
    reader = EventReader(process)
    fd = os.open(log, os.O_WRONLY | os.O_APPEND)
    try:
        for attempt in range(200):
            os.write(fd, access_line(f"/warm/{attempt}", attempt))
            if reader.wait_for(f"/warm/{attempt}", 0.1):
                break
        emitted, received = [], []
        for i in range(samples):
            written = time.time()
            os.write(fd, access_line(f"/sample/{i}", 200 + i))
            seen = reader.wait_for(f"/sample/{i}", 10)
            if seen is None:
                continue
            emitted.append((seen[0] - written) * 1000)
            received.append((seen[1] - written) * 1000)
            time.sleep(0.02)
    finally:
        os.close(fd)
        process.terminate()
        process.wait()
    print(f"latency, line written -> JSON event ({len(emitted)} of {samples} lines):")
    for name, values in (("stamped by wait", emitted), ("read by a consumer", received)):
        if values:
            print(
                f"  {name:<20} p50 {percentile(values, 0.5):6.2f} ms   "
                f"p99 {percentile(values, 0.99):6.2f} ms   max {max(values):6.2f} ms"
            )


# ---------------------------------------------------------------------------- catch-up


async def tail_all(server: TestServer, log: Path, size: int) -> float:
    """Seconds for the tail (on an open connection) to deliver ``size`` bytes."""
    session = HostSession(SshConnector(server.target()))
    await session.start()
    received = 0
    started = time.perf_counter()
    async for item in session.tail(str(log)):
        if isinstance(item, Chunk):
            received += len(item.data)
            if received >= size:
                break
    took = time.perf_counter() - started
    await session.close()
    return took


def best_of(runs: int, work: Callable[[], float]) -> float:
    return min(work() for _ in range(runs))


def timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def measure_catchup(server: TestServer, work: Path, lines: int) -> None:
    log = work / "catchup.log"
    size = write_log(log, lines)
    mb = size / 1e6

    def rate(name: str, seconds: float) -> None:
        print(f"  {name:<38} {mb / seconds:7.1f} MB/s  {lines / seconds:11,.0f} lines/s")

    print(f"catch-up on an existing log of {lines:,} lines ({mb:.0f} MB):")
    tail = best_of(3, lambda: asyncio.run(tail_all(server, log, size)))
    rate("bringup tail (connection open)", tail)
    ssh = shutil.which("ssh")
    if ssh is not None:
        base = [ssh, "-F", str(server.ssh_config), server.alias]
        handshake = best_of(3, lambda: timed([*base, "true"]))
        cat = best_of(3, lambda: timed([*base, "cat", str(log)])) - handshake
        rate("ssh HOST cat LOG > /dev/null", cat)
        gcm = [ssh, "-c", "aes128-gcm@openssh.com", *base[1:], "cat", str(log)]
        same = best_of(3, lambda: timed(gcm)) - handshake
        rate("ssh -c aes128-gcm@openssh.com cat", same)
        ratios = f"{cat / tail:.2f} (ssh's default cipher), {same / tail:.2f} (same cipher)"
        print(f"  tail rate / ssh cat rate: {ratios}")
    started = time.perf_counter()
    subprocess.run(wait_command(server, log), stdout=subprocess.DEVNULL, check=True)
    rate("bringup wait, log engine included", time.perf_counter() - started)


# ---------------------------------------------------------------------------- memory


CHILD = r"""
import asyncio, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from tests.sshd import TestServer
from tui.io.transport.link_events import Chunk
from tui.io.transport.host_session import HostSession, SshConnector
from tui.io.transport.ssh import SshTarget

async def main() -> None:
    target = SshTarget(sys.argv[2], config_path=Path(sys.argv[3]))
    session = HostSession(SshConnector(target))
    await session.start()
    size, received = int(sys.argv[5]), 0
    async for item in session.tail(sys.argv[4]):
        if isinstance(item, Chunk):
            received += len(item.data)
            if received >= size:
                break
    await session.close()

asyncio.run(main())
"""


def peak_rss_mb(command: list[str]) -> tuple[float, float]:
    """Run ``command``; return its peak resident memory (MB, sampled) and its duration."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    peak = 0
    status = Path(f"/proc/{process.pid}/status")
    while process.poll() is None:
        try:
            text = status.read_text()
        except OSError:
            break
        for line in text.splitlines():
            if line.startswith("VmRSS:"):
                peak = max(peak, int(line.split()[1]))
        time.sleep(0.05)
    process.wait()
    return peak / 1024, time.perf_counter() - started


def measure_memory(server: TestServer, work: Path, lines: int) -> None:
    log = work / "memory.log"
    size = write_log(log, lines)
    print(f"resident memory streaming {lines:,} lines ({size / 1e6:.0f} MB):")
    child = [sys.executable, "-c", CHILD, str(REPO), server.alias, str(server.ssh_config)]
    rss, took = peak_rss_mb([*child, str(log), str(size)])
    print(f"  tail only                          peak {rss:7.1f} MB   ({took:.0f} s)")
    rss, took = peak_rss_mb(wait_command(server, log))
    print(f"  bringup wait --json (engine)       peak {rss:7.1f} MB   ({took:.0f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--catchup-lines", type=int, default=1_000_000)
    parser.add_argument("--memory-lines", type=int, default=10_000_000)
    parser.add_argument("--skip", default="", help="comma-separated: latency,catchup,memory")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    work = Path(tempfile.mkdtemp(prefix="bringup-stream-bench-"))
    server = start_server(work / "sshd")
    print(f"server: {server.kind} sshd on 127.0.0.1:{server.port}; CPUs: {os.cpu_count()}")
    try:
        if "latency" not in skip:
            measure_latency(server, work, args.samples)
        if "catchup" not in skip:
            measure_catchup(server, work, args.catchup_lines)
        if "memory" not in skip:
            measure_memory(server, work, args.memory_lines)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
