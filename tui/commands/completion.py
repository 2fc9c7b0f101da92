"""``bringup completion bash|zsh|fish``: the shell completion script, from argcomplete.

The script calls ``bringup`` itself at each TAB (argcomplete reads the real parser, every
command registered), so completion never falls behind the installed version. Profile names
come from the configuration (``$BRINGUP_CONFIG`` or the XDG file, or ``--config`` when it is
already on the line) and theme names from the shipped themes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, NoReturn

from tui.commands.exit_codes import ExitStatus

SHELLS = ("bash", "zsh", "fish")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "completion",
        help="print the shell completion script for bash, zsh or fish",
        description=(
            'Print a completion script. bash: eval "$(bringup completion bash)" in ~/.bashrc; '
            'zsh: eval "$(bringup completion zsh)" in ~/.zshrc; fish: bringup completion fish '
            "> ~/.config/fish/completions/bringup.fish."
        ),
    )
    parser.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from argcomplete.shell_integration import shellcode

    sys.stdout.write(shellcode(["bringup"], shell=args.shell))
    sys.stdout.flush()
    return ExitStatus.OK


def profile_names(config: Path | None = None) -> list[str]:
    """The configured profiles' names; none when the configuration does not load."""
    from tui.config import ConfigError, load_config

    try:
        return sorted(load_config(config).profiles)
    except (ConfigError, OSError):
        return []


def theme_names() -> list[str]:
    """The shipped themes' names."""
    from tui.app.monitor.themes import load_themes

    return sorted(theme.name for theme in load_themes().themes)


def _profiles(parsed_args: argparse.Namespace, **_: Any) -> list[str]:
    return profile_names(getattr(parsed_args, "config", None))


def _themes(**_: Any) -> list[str]:
    return theme_names()


COMPLETERS = {"profile": _profiles, "theme": _themes}
"""What an argument with this ``dest`` completes from."""


def complete(parser: argparse.ArgumentParser) -> NoReturn:
    """Answer the shell's completion request (argcomplete's environment) and exit."""
    import argcomplete

    _attach(parser)
    argcomplete.autocomplete(parser, exit_method=sys.exit)
    sys.exit(ExitStatus.OK)


def _attach(parser: argparse.ArgumentParser) -> None:
    for action in parser._actions:
        completer = COMPLETERS.get(action.dest)
        if completer is not None:
            action.completer = completer  # type: ignore[attr-defined]
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _attach(child)
