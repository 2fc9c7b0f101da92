"""The ``bringup`` command line: argument parsing and dispatch only, no logic of its own."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Callable, Sequence

from tui import __version__
from tui.commands.exit_codes import ExitStatus, exit_table
from tui.commands.signals import HEADLESS, ended_by_signal, terminate_as_interrupt

# Each name is a module in ``tui.commands`` (or the one ``MODULES`` gives) that defines
# ``register(subparsers)``; the registered parser sets ``handler`` (a callable taking the
# parsed namespace, returning an exit code). Modules are imported only when their command is
# chosen, so ``bringup sim`` and ``bringup replay`` never import Textual.
COMMANDS: tuple[tuple[str, str], ...] = (
    ("init", "write a commented example configuration"),
    ("replay", "read a saved server log and print its start-up timeline"),
    ("history", "how long past start-ups took, per launch fingerprint"),
    ("bench", "benchmark a running server (table or JSON)"),
    ("stats", "the engine's serving figures from /metrics, one line per interval"),
    ("runs", "list or export recorded runs and benchmark results"),
    ("launch", "start the profile's server on its hosts"),
    ("kill", "stop the profile's newest run (SIGTERM, grace period, SIGKILL)"),
    ("restart", "stop the profile's newest run, then launch it again"),
    ("sim", "run a simulated SGLang/vLLM server"),
    ("watch", "watch a server start: every rank, the verdict, health and failures"),
    ("demo", "the monitor against a simulated GPU host (no setup needed)"),
    ("wait", "wait headless until a server is ready (0), failed or stopped (1), timeout (6)"),
    ("completion", "print the shell completion script for bash, zsh or fish"),
)

MODULES = {"stats": "serving_stats"}
"""Commands whose module has another name (module names are unique across ``tui``)."""

Handler = Callable[[argparse.Namespace], int]


def _build_parser(selected: str | None) -> argparse.ArgumentParser:
    """The parser; only the ``selected`` command's module is imported (every module when
    ``selected`` is ``"*"``, for shell completion)."""
    parser = argparse.ArgumentParser(
        prog="bringup",
        description="Launch, watch and benchmark SGLang and vLLM servers on remote GPU hosts.",
        epilog=exit_table(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-V", "--version", action="version", version=f"bringup {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, summary in COMMANDS:
        if selected in (name, "*"):
            module = importlib.import_module(f"tui.commands.{MODULES.get(name, name)}")
            module.register(sub)
        else:
            sub.add_parser(name, help=summary, add_help=False)
    for command in sub.choices.values():
        command.epilog = exit_table()
        command.formatter_class = argparse.RawDescriptionHelpFormatter
    return parser


def _selected_command(argv: Sequence[str]) -> str | None:
    names = {name for name, _ in COMMANDS}
    first = next((arg for arg in argv if not arg.startswith("-")), None)
    return first if first in names else None


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit status (``tui.commands.exit_codes``)."""
    if argv is None and "_ARGCOMPLETE" in os.environ:
        from tui.commands.completion import complete

        complete(_build_parser("*"))
    args_list = list(sys.argv[1:] if argv is None else argv)
    selected = _selected_command(args_list)
    try:
        with terminate_as_interrupt(selected in HEADLESS):
            return _dispatch(selected, args_list)
    except BrokenPipeError:
        return _stdout_closed()
    except KeyboardInterrupt:
        return ended_by_signal()
    except Exception:  # the table's 5: a bug, reported with its traceback
        from tui.engine.logs.sanitize import sanitize_text

        print(sanitize_text(traceback.format_exc()), file=sys.stderr, end="")
        return ExitStatus.ERROR


def _dispatch(selected: str | None, args_list: list[str]) -> int:
    parser = _build_parser(selected)
    if selected is None:
        parser.parse_args(args_list)
        parser.print_help()
        return ExitStatus.OK
    if selected == "sim":
        # The simulator takes a real server's command line, unknown flags included.
        module = importlib.import_module("tui.commands.sim")
        run: Callable[[list[str]], int] = module.run_argv
        return run(args_list[args_list.index("sim") + 1 :])
    args = parser.parse_args(args_list)
    handler: Handler = args.handler
    return handler(args)


def _stdout_closed() -> int:
    """The reader of standard output went away (``| head``): end quietly with 0.

    As the Python documentation recommends, standard output is pointed at ``/dev/null`` so the
    interpreter's last flush at exit does not raise a second ``BrokenPipeError``."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return ExitStatus.OK
