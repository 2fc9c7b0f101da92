"""``bringup replay``: read a saved server log and print its start-up timeline."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from typing import BinaryIO

from tui.commands.exit_codes import ExitStatus
from tui.commands.json_time import SCHEMA_VERSION
from tui.engine.logs.replay_report import replay_chunks, report_json, report_text
from tui.engine.servers import registry
from tui.engine.startup.snapshot import Snapshot
from tui.engine.startup.vocabulary import Outcome

CHUNK = 262144
"""Bytes read at a time: large enough that the engine's cost per chunk is small next to its
cost per line, small enough that a chunk's lines stay in the processor's cache."""

DESCRIPTION = """\
Read a saved SGLang or vLLM server log (a path, or - for standard input) and print what
happened: the per-rank timeline (stage, start, seconds), the outcome (ready, failed,
incomplete), the failure with an excerpt, and the decode figures. When the file holds several
runs (the server was relaunched into it), the last run is reported.

With --json, one JSON object: schema_version, t, engine, lines, ranks, outcome, last_stage,
failure (kind, rank, line, excerpt), stages (per rank: stage, start, seconds, draft),
startup_seconds, decode (lines, gen_throughput, accept_len, accept_rate) and runs_before
(docs/schemas/replay.schema.json).

Exit status: 0 whatever the outcome, 4 when the log cannot be read; with --exit-status, 0 for
a ready log, 1 for a failed one and 7 for an incomplete one."""

OUTCOME_STATUS = {
    Outcome.READY: ExitStatus.OK,
    Outcome.FAILED: ExitStatus.FAILED,
    Outcome.INCOMPLETE: ExitStatus.INCOMPLETE,
}
"""What ``--exit-status`` exits with for each outcome."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "replay",
        help="read a saved server log and print its start-up timeline",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("log", metavar="LOG", help="the server log, or - for standard input")
    parser.add_argument(
        "--engine",
        choices=registry.choices(),
        default=registry.AUTO,
        help="the engine that wrote the log (default: detect it from the first lines)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--exit-status",
        action="store_true",
        help="exit 1 for a failed log and 7 for an incomplete one (0 for a ready one)",
    )
    parser.add_argument(
        "--follow",
        action="store_true",
        help="keep reading the file as it grows (waiting for it, across truncation and "
        "rotation) until the run is ready, failed or stopped, or Ctrl-C; then report",
    )
    parser.set_defaults(handler=run)


def _chunks(stream: BinaryIO) -> Iterator[bytes]:
    while chunk := stream.read(CHUNK):
        yield chunk


def _follow(path: str, engine: str) -> Snapshot:
    import asyncio

    from tui.io.tail.local_follow import LocalFollower

    follower = LocalFollower(path, engine)
    try:
        return asyncio.run(follower.run())
    except KeyboardInterrupt:
        return follower.snapshot


def run(args: argparse.Namespace) -> int:
    name = "standard input" if args.log == "-" else args.log
    try:
        if args.follow and args.log != "-":
            snapshot = _follow(args.log, args.engine)
        elif args.log == "-":
            snapshot = replay_chunks(_chunks(sys.stdin.buffer), args.engine)
        else:
            with open(args.log, "rb") as stream:
                snapshot = replay_chunks(_chunks(stream), args.engine)
    except OSError as exc:
        print(f"bringup replay: cannot read {name}: {exc.strerror or exc}", file=sys.stderr)
        return ExitStatus.CONFIG
    if args.json:
        head = {"schema_version": SCHEMA_VERSION, "t": round(time.time(), 6)}
        print(json.dumps(head | report_json(snapshot), ensure_ascii=False))
    else:
        sys.stdout.write(report_text(snapshot))
    sys.stdout.flush()
    return OUTCOME_STATUS[snapshot.outcome] if args.exit_status else ExitStatus.OK
