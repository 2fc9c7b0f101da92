"""Host-key verification against OpenSSH ``known_hosts`` files.

asyncssh matches the presented key against the files (plain and hashed entries, ``@revoked``,
``@cert-authority``); this module decides what happens to a key the files do not vouch for:

- a host the files do not mention is refused with its SHA256 fingerprint and the exact command
  that trusts it (``strict``, ``StrictHostKeyChecking yes``), recorded on first use
  (``accept-new``), or, under ``ask``, left for the caller to ask about on the terminal;
- a host the files list with a different key is refused with a warning: the key changed.

Only ``StrictHostKeyChecking no`` together with the command line's
``--insecure-accept-any-host-key`` accepts any key (new ones are recorded, as ``ssh`` does).
Keys are recorded hashed (``|1|salt|hash``, as ``ssh-keygen -H`` writes them) under
``HashKnownHosts yes``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

import asyncssh

HostKeyPolicy = Literal["strict", "accept-new", "ask", "no"]
POLICIES: tuple[HostKeyPolicy, ...] = get_args(HostKeyPolicy)
SALT_BYTES = 20
"""The salt length of a hashed entry: that of SHA-1, as OpenSSH uses."""


def check_policy(value: str) -> HostKeyPolicy:
    """Return ``value`` as a policy, or raise ValueError naming the allowed ones."""
    for policy in POLICIES:
        if value == policy:
            return policy
    raise ValueError(f"host_key_policy must be one of {', '.join(POLICIES)}, not {value!r}")


def hashed_name(name: str, salt: bytes | None = None) -> str:
    """``name`` as a hashed known_hosts name: ``|1|`` base64 salt ``|`` base64 HMAC-SHA1."""
    salt = os.urandom(SALT_BYTES) if salt is None else salt
    digest = hmac.new(salt, name.encode(), hashlib.sha1).digest()
    return f"|1|{base64.b64encode(salt).decode()}|{base64.b64encode(digest).decode()}"


def host_pattern(host: str, port: int) -> str:
    """The ``known_hosts`` name of a host: ``host`` on port 22, ``[host]:port`` otherwise."""
    return host if port == 22 else f"[{host}]:{port}"


@dataclass(frozen=True, slots=True)
class HostKeyRefusal:
    """Why a host key was not accepted, and what the user can do about it."""

    host: str
    port: int
    fingerprint: str
    changed: bool
    message: str
    hint: str


@dataclass(frozen=True, slots=True)
class KnownHosts:
    """The ``known_hosts`` files consulted (``UserKnownHostsFile``, then
    ``GlobalKnownHostsFile``); new keys are recorded in the first user file, hashed when
    ``hashed``."""

    paths: tuple[Path, ...]
    global_paths: tuple[Path, ...] = ()
    hashed: bool = False

    @property
    def primary(self) -> Path:
        return self.paths[0] if self.paths else Path(os.devnull)

    def load(self) -> asyncssh.SSHKnownHosts:
        known = asyncssh.SSHKnownHosts()
        for path in (*self.paths, *self.global_paths):
            resolved = path.expanduser()
            if resolved.is_file():
                known.load(resolved.read_text(encoding="utf-8", errors="replace"))
        return known

    def record(self, host: str, port: int, key: asyncssh.SSHKey) -> None:
        target = self.primary.expanduser()
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        name = host_pattern(host, port)
        name = hashed_name(name) if self.hashed else name
        line = f"{name} {key.export_public_key().decode().strip()}\n"
        existing = target.read_bytes() if target.is_file() else b""
        prefix = b"" if not existing or existing.endswith(b"\n") else b"\n"
        with target.open("ab") as handle:
            handle.write(prefix + line.encode())


def refusal_for_unknown(host: str, port: int, fingerprint: str, known: Path) -> HostKeyRefusal:
    keyscan = shlex.join(["ssh-keyscan", "-p", str(port), host])
    return HostKeyRefusal(
        host=host,
        port=port,
        fingerprint=fingerprint,
        changed=False,
        message=f"the host key of {host_pattern(host, port)} is not known ({fingerprint})",
        hint=(
            f"Compare {fingerprint} with the host's own key (on the host: "
            "ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub), then trust it with:\n"
            f"  {keyscan} >> {shlex.quote(str(known))}\n"
            "or record it on first use: --accept-new, StrictHostKeyChecking accept-new in the "
            'ssh config, or host_key_policy = "accept-new" in the profile.'
        ),
    )


def refusal_without_terminal(refusal: HostKeyRefusal) -> HostKeyRefusal:
    """``refusal`` of an unknown key under ``StrictHostKeyChecking ask`` with no one to ask."""
    return HostKeyRefusal(
        host=refusal.host,
        port=refusal.port,
        fingerprint=refusal.fingerprint,
        changed=False,
        message=(
            f"{refusal.message}; StrictHostKeyChecking ask needs a terminal to ask on, and "
            "this command has none (no terminal on standard input, or --json)"
        ),
        hint=f"Run the command once from a terminal, or: {refusal.hint}",
    )


def refusal_for_changed(host: str, port: int, fingerprint: str, known: Path) -> HostKeyRefusal:
    remove = shlex.join(["ssh-keygen", "-R", host_pattern(host, port), "-f", str(known)])
    return HostKeyRefusal(
        host=host,
        port=port,
        fingerprint=fingerprint,
        changed=True,
        message=(
            f"WARNING: the host key of {host_pattern(host, port)} has CHANGED "
            f"(it now presents {fingerprint}); the connection was refused"
        ),
        hint=(
            "Someone may be intercepting the connection, or the host was reinstalled. "
            "Only after verifying the new key with the host's administrator, remove the old "
            f"entry with:\n  {remove}"
        ),
    )


class HostKeyGate(asyncssh.SSHClient):
    """Decides on host keys ``known_hosts`` does not vouch for; remembers any refusal."""

    def __init__(self, known: KnownHosts, policy: HostKeyPolicy, accept_any: bool = False) -> None:
        self._known = known
        self._policy = policy
        self._accept_any = accept_any and policy == "no"
        self.refusal: HostKeyRefusal | None = None
        self.unknown_key: asyncssh.SSHKey | None = None
        """Under ``ask``: the key of an unknown host, for the caller to ask about."""
        self.trusted: asyncssh.SSHKey | None = None
        """A key the user trusted when asked: accepted even if it could not be recorded."""
        self.recorded = False
        self.lost_reason = ""

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost_reason = str(exc) if exc is not None else ""

    def validate_host_public_key(
        self, host: str, addr: str, port: int, key: asyncssh.SSHKey
    ) -> bool:
        fingerprint = key.get_fingerprint("sha256")
        if self.trusted is not None and self.trusted.public_data == key.public_data:
            return True
        trusted, authorities, *_ = self._known.load().match(host, addr, port)
        if trusted or authorities:
            self.refusal = refusal_for_changed(host, port, fingerprint, self._known.primary)
            return self._accept_any
        if self._policy == "accept-new" or self._accept_any:
            self._known.record(host, port, key)
            self.recorded = True
            return True
        self.refusal = refusal_for_unknown(host, port, fingerprint, self._known.primary)
        if self._policy == "ask":
            self.unknown_key = key
        return False
