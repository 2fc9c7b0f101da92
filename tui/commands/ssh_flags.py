"""The SSH options every command that connects takes, and what they change in a profile.

``--ssh-config`` and ``--known-hosts`` replace the profile's files; ``--accept-new`` and
``--insecure-accept-any-host-key`` win over ``StrictHostKeyChecking`` and the profile's
``host_key_policy``. Whether a person can be asked (a key's passphrase, MFA answers, an unknown
host key under ``StrictHostKeyChecking ask``) is decided here too: only with a terminal on
standard input and standard error, never with ``--json``, never once a screen is drawn.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from tui.config import Profile, SshChoices
from tui.io.transport.ssh_prompts import terminal_present


def add_ssh_arguments(parser: argparse.ArgumentParser) -> None:
    """``--ssh-config``, ``--known-hosts``, ``--accept-new``, ``--insecure-accept-any-host-key``."""
    group = parser.add_argument_group("SSH (see docs/configuration.md)")
    group.add_argument(
        "--ssh-config", type=Path, metavar="PATH", help="ssh client config, the only one read"
    )
    group.add_argument(
        "--known-hosts", type=Path, metavar="PATH", help="known_hosts file (not UserKnownHostsFile)"
    )
    keys = group.add_mutually_exclusive_group()
    keys.add_argument(
        "--accept-new",
        action="store_true",
        help="record an unknown host key on first use, refuse a changed one",
    )
    keys.add_argument(
        "--insecure-accept-any-host-key",
        action="store_true",
        help="accept any host key, even a changed one (StrictHostKeyChecking no)",
    )


def ssh_choices(args: argparse.Namespace, *, screen: bool = False) -> SshChoices:
    """The choices the flags in ``args`` make; ``screen``: a screen will own the terminal."""
    accept_any = bool(getattr(args, "insecure_accept_any_host_key", False))
    policy = "no" if accept_any else "accept-new" if getattr(args, "accept_new", False) else None
    prompts = not screen and not getattr(args, "json", False) and terminal_present()
    return SshChoices(policy, accept_any, prompts)


def with_ssh_flags(args: argparse.Namespace, profile: Profile, *, screen: bool = False) -> Profile:
    """``profile`` with the command line's SSH files and choices on top."""
    return replace(
        profile,
        ssh_config=getattr(args, "ssh_config", None) or profile.ssh_config,
        known_hosts=getattr(args, "known_hosts", None) or profile.known_hosts,
        ssh_choices=ssh_choices(args, screen=screen),
    )
