"""SSH targets as written in a profile: ``alias``, ``host``, ``user@host``, ``user@host:port``;
and what the command line chose for SSH on top of the profile and the ssh config."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

_USER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
_HOST = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
_IPV6 = re.compile(r"\[([0-9A-Fa-f:.%A-Za-z]+)\]")


class SshAddress(NamedTuple):
    """Who to log in as (None: the SSH config decides), where, and on which port."""

    user: str | None
    host: str
    port: int | None

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        text = f"{self.user}@{host}" if self.user else host
        return f"{text}:{self.port}" if self.port is not None else text


def parse_ssh_target(text: str) -> SshAddress:
    """Split ``user@host:port`` into its parts; IPv6 addresses go in brackets (``[::1]:22``).

    Raises ``ValueError`` naming the problem. A host may not start with ``-`` so that no
    target can be mistaken for an ``ssh`` option.
    """
    user: str | None = None
    rest = text
    if "@" in rest:
        user, rest = rest.rsplit("@", 1)
        if not _USER.fullmatch(user):
            raise ValueError(f"invalid user name {user!r}")
    host, port = _split_port(rest)
    if not host:
        raise ValueError("missing host name")
    return SshAddress(user, host, port)


def _split_port(text: str) -> tuple[str, int | None]:
    bracketed = _IPV6.match(text)
    if bracketed is not None:
        host, tail = bracketed.group(1), text[bracketed.end() :]
    else:
        host, colon, port = text.partition(":")
        tail = colon + port
        if host and not _HOST.fullmatch(host):
            raise ValueError(f"invalid host name {host!r}")
    if not tail:
        return host, None
    if not re.fullmatch(r":\d{1,5}", tail) or not 1 <= int(tail[1:]) <= 65535:
        raise ValueError(f"invalid port {tail[1:]!r} (expected 1-65535)")
    return host, int(tail[1:])


@dataclass(frozen=True, slots=True)
class SshChoices:
    """The command line's SSH choices: they win over the ssh config and the profile."""

    host_key_policy: str | None = None
    """``accept-new`` (``--accept-new``), ``no`` (``--insecure-accept-any-host-key``) or None."""
    accept_any_host_key: bool = False
    """The user means ``StrictHostKeyChecking no``: any host key is accepted."""
    prompts: bool = False
    """A person is at the terminal: passphrases, MFA answers and unknown keys may be asked."""
