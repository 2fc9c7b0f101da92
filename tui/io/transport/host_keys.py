"""Host-key verification against OpenSSH ``known_hosts`` files.

asyncssh matches the presented key against the files (plain and hashed entries, ``@revoked``,
``@cert-authority``); this module decides what happens to a key the files do not vouch for:

- a host the files do not mention is refused with its SHA256 fingerprint and the exact command
  that trusts it, unless the policy is ``accept-new``, which records the key on first use;
- a host the files list with a different key is always refused with a warning: the key changed.

Verification is never switched off: there is no policy that accepts a changed key.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

import asyncssh

HostKeyPolicy = Literal["strict", "accept-new"]
POLICIES: tuple[str, ...] = get_args(HostKeyPolicy)
DEFAULT_KNOWN_HOSTS = Path("~/.ssh/known_hosts")
GLOBAL_KNOWN_HOSTS = Path("/etc/ssh/ssh_known_hosts")


def check_policy(value: str) -> HostKeyPolicy:
    """Return ``value`` as a policy, or raise ValueError naming the allowed ones."""
    if value == "strict":
        return "strict"
    if value == "accept-new":
        return "accept-new"
    raise ValueError(f"host_key_policy must be one of {', '.join(POLICIES)}, not {value!r}")


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
    """The ``known_hosts`` files consulted; new keys are recorded in the first one."""

    paths: tuple[Path, ...]

    @property
    def primary(self) -> Path:
        return self.paths[0]

    def load(self) -> asyncssh.SSHKnownHosts:
        known = asyncssh.SSHKnownHosts()
        for path in self.paths:
            resolved = path.expanduser()
            if resolved.is_file():
                known.load(resolved.read_text(encoding="utf-8", errors="replace"))
        return known

    def record(self, host: str, port: int, key: asyncssh.SSHKey) -> None:
        target = self.primary.expanduser()
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        line = f"{host_pattern(host, port)} {key.export_public_key().decode().strip()}\n"
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
            'or set host_key_policy = "accept-new" in the profile to record it on first use.'
        ),
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

    def __init__(self, known: KnownHosts, policy: HostKeyPolicy) -> None:
        self._known = known
        self._policy = policy
        self.refusal: HostKeyRefusal | None = None
        self.recorded = False
        self.lost_reason = ""

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost_reason = str(exc) if exc is not None else ""

    def validate_host_public_key(
        self, host: str, addr: str, port: int, key: asyncssh.SSHKey
    ) -> bool:
        fingerprint = key.get_fingerprint("sha256")
        trusted, authorities, *_ = self._known.load().match(host, addr, port)
        if trusted or authorities:
            self.refusal = refusal_for_changed(host, port, fingerprint, self._known.primary)
            return False
        if self._policy == "accept-new":
            self._known.record(host, port, key)
            self.recorded = True
            return True
        self.refusal = refusal_for_unknown(host, port, fingerprint, self._known.primary)
        return False
