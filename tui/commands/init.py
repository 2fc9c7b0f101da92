"""``bringup init``: write a commented example configuration."""

from __future__ import annotations

import argparse
import os
import sys
from importlib import resources
from pathlib import Path

from tui.commands.exit_codes import ExitStatus
from tui.config import default_config_path


def example_text() -> str:
    """The commented example configuration shipped with the package."""
    return resources.files("tui.config").joinpath("example.toml").read_text(encoding="utf-8")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "init",
        help="write a commented example configuration",
        description="Write a commented example configuration file.",
    )
    parser.add_argument(
        "--path",
        type=Path,
        default=None,
        help="where to write it (default: $BRINGUP_CONFIG or ~/.config/bringup/config.toml)",
    )
    parser.add_argument("--force", action="store_true", help="overwrite an existing file")
    parser.set_defaults(handler=run)


def _target(path: Path | None) -> Path:
    if path is not None:
        return path
    configured = os.environ.get("BRINGUP_CONFIG")
    return Path(configured).expanduser() if configured else default_config_path()


def run(args: argparse.Namespace) -> int:
    path = _target(args.path)
    if path.exists() and not args.force:
        print(f"bringup init: {path} already exists (use --force to overwrite)", file=sys.stderr)
        return ExitStatus.FAILED
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(example_text(), encoding="utf-8")
    except OSError as exc:
        print(f"bringup init: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
        return ExitStatus.FAILED
    print(f"wrote {path}")
    return ExitStatus.OK
