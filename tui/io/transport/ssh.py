"""SSH connections to GPU hosts, configured the way ``ssh`` itself would be.

Host aliases, ``User``, ``Port``, ``IdentityFile``, ``IdentityAgent`` and ``ProxyJump`` come from
the OpenSSH client configuration (``~/.ssh/config`` or an explicit file); keys and the agent are
used as ``ssh`` uses them. Host keys are verified against ``known_hosts`` (see
:mod:`tui.io.transport.host_keys`); jump hosts are verified the same way. Keep-alives and a connect
timeout are always set, so a dead link is noticed within about half a minute.

Every failure is raised as a :class:`ConnectError` whose ``kind`` says whether retrying can
help (``unreachable``) or not (``auth``, ``host-key``).
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import asyncssh

from tui.io.transport.dead_link import keepalive_kwargs
from tui.io.transport.deadline import within
from tui.io.transport.host_keys import (
    DEFAULT_KNOWN_HOSTS,
    GLOBAL_KNOWN_HOSTS,
    HostKeyGate,
    HostKeyPolicy,
    KnownHosts,
)
from tui.io.transport.link_events import ConnectFailureKind
from tui.io.transport.ssh_stream import open_ssh_stream
from tui.io.transport.transport import CommandResult, CommandStream, CommandTimedOut, LinkLost

DEFAULT_CONFIG = Path("~/.ssh/config")
MAX_JUMPS = 4
PREFERRED_CIPHERS = (
    "aes128-gcm@openssh.com",
    "aes256-gcm@openssh.com",
    "chacha20-poly1305@openssh.com",
    "aes128-ctr",
    "aes256-ctr",
)
"""Cipher preference when the ssh config names none: AES-GCM decrypts fastest in asyncssh."""
CLOSE_WAIT = 2.0


@dataclass(frozen=True, slots=True)
class SshTarget:
    """Where to connect and how; anything left as None comes from the ssh configuration."""

    host: str
    user: str | None = None
    port: int | None = None
    config_path: Path | None = None
    known_hosts: Path | None = None
    host_key_policy: HostKeyPolicy = "strict"
    identity_files: tuple[Path, ...] = ()
    use_agent: bool = True
    connect_timeout: float = 10.0
    keepalive_interval: float = 10.0
    keepalive_count_max: int = 3
    login_timeout: float = 30.0

    @property
    def label(self) -> str:
        user = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port else ""
        return f"{user}{self.host}{port}"


def parse_host_spec(spec: str) -> tuple[str, str | None, int | None]:
    """Split ``alias``, ``host``, ``user@host``, ``user@host:port`` or ``[v6addr]:port``."""
    text = spec.strip()
    if not text:
        raise ValueError("the host is empty")
    user: str | None = None
    if "@" in text:
        user, text = text.rsplit("@", 1)
        if not user:
            raise ValueError(f"no user name before '@' in {spec!r}")
    port: int | None = None
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        if not sep:
            raise ValueError(f"missing ']' in {spec!r}")
        if rest:
            port = _parse_port(rest.removeprefix(":"), spec)
    elif text.count(":") == 1:
        host, port_text = text.split(":")
        port = _parse_port(port_text, spec)
    else:
        host = text
    if not host:
        raise ValueError(f"no host name in {spec!r}")
    return host, user, port


def _parse_port(text: str, spec: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(f"invalid port {text!r} in {spec!r}")
    return int(text)


class ConnectError(Exception):
    """A connection could not be made; ``hint`` tells the user what to do."""

    def __init__(self, kind: ConnectFailureKind, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.hint = hint


@dataclass
class SshLink:
    """An open connection and the jump-host connections it runs through."""

    conn: asyncssh.SSHClientConnection
    jumps: list[asyncssh.SSHClientConnection]
    label: str
    gate: HostKeyGate

    def close(self) -> None:
        for conn in [self.conn, *reversed(self.jumps)]:
            conn.close()

    async def wait_closed(self) -> None:
        await self.conn.wait_closed()

    async def wait_lost(self) -> str:
        """Wait until the connection ends; return why it ended."""
        await self.conn.wait_closed()
        return self.gate.lost_reason or "the connection was closed"


def _config_arg(target: SshTarget) -> list[str] | tuple[()]:
    if target.config_path is not None:
        path = target.config_path.expanduser()
        if not path.is_file():
            raise ConnectError(ConnectFailureKind.UNREACHABLE, f"ssh config {path} does not exist")
        return [str(path)]
    return () if DEFAULT_CONFIG.expanduser().is_file() else []


async def _resolve(target: SshTarget) -> asyncssh.SSHClientConnectionOptions:
    options: asyncssh.SSHClientConnectionOptions = (
        await asyncssh.SSHClientConnectionOptions.construct(
            config=_config_arg(target),
            host=target.host,
            port=target.port if target.port is not None else (),
            username=target.user if target.user is not None else (),
        )
    )
    return options


def _known_hosts(target: SshTarget, options: asyncssh.SSHClientConnectionOptions) -> KnownHosts:
    if target.known_hosts is not None:
        return KnownHosts((target.known_hosts,))
    configured = options.config.get("UserKnownHostsFile")
    names = configured if isinstance(configured, list) else []
    paths = [Path(str(p)) for p in names if str(p).lower() != "none"]
    return KnownHosts((*(paths or [DEFAULT_KNOWN_HOSTS]), GLOBAL_KNOWN_HOSTS))


def _jump_targets(target: SshTarget, proxy_jump: object) -> list[SshTarget]:
    if not isinstance(proxy_jump, str) or proxy_jump.strip().lower() in ("", "none"):
        return []
    hops = []
    for spec in proxy_jump.split(","):
        host, user, port = parse_host_spec(spec)
        hops.append(replace(target, host=host, user=user, port=port, identity_files=()))
    return hops


async def connect(target: SshTarget) -> SshLink:
    """Open a connection (through any ``ProxyJump`` hosts); raise :class:`ConnectError`."""
    jumps: list[asyncssh.SSHClientConnection] = []
    try:
        options = await _resolve(target)
        for hop in _jump_targets(target, options.tunnel)[:MAX_JUMPS]:
            jumps.append((await _connect_one(hop, jumps[-1] if jumps else None))[0])
        conn, gate = await _connect_one(target, jumps[-1] if jumps else None)
    except BaseException:
        for jump in reversed(jumps):
            jump.close()
        raise
    return SshLink(conn, jumps, f"{options.username}@{options.host}:{options.port}", gate)


async def _connect_one(
    target: SshTarget, tunnel: asyncssh.SSHClientConnection | None
) -> tuple[asyncssh.SSHClientConnection, HostKeyGate]:
    try:
        options = await _resolve(target)
    except (OSError, asyncssh.Error, ValueError) as exc:
        raise ConnectError(
            ConnectFailureKind.UNREACHABLE, f"{target.label}: ssh config: {exc}"
        ) from exc
    known = _known_hosts(target, options)
    gate = HostKeyGate(known, target.host_key_policy)
    connecting = asyncssh.connect(
        target.host,
        tunnel=tunnel,
        options=options,
        known_hosts=known.load(),
        client_factory=lambda: gate,
        **_auth_kwargs(target),
        **_cipher_kwargs(options),
        connect_timeout=target.connect_timeout,
        login_timeout=target.login_timeout,
        **keepalive_kwargs(target.keepalive_interval, target.keepalive_count_max),
    )
    try:
        limit = target.connect_timeout + target.login_timeout
        return await within(connecting, limit), gate
    except (OSError, asyncssh.Error, asyncio.TimeoutError) as exc:
        raise _refusal(exc, target, options, gate) from exc


def _refusal(
    exc: Exception,
    target: SshTarget,
    options: asyncssh.SSHClientConnectionOptions,
    gate: HostKeyGate,
) -> ConnectError:
    """The :class:`ConnectError` for why a connection attempt failed."""
    where = f"{options.host}:{options.port}"
    if isinstance(exc, asyncssh.HostKeyNotVerifiable):
        if gate.refusal is None:
            return ConnectError(ConnectFailureKind.HOST_KEY, f"{target.label}: {exc.reason}")
        return ConnectError(ConnectFailureKind.HOST_KEY, gate.refusal.message, gate.refusal.hint)
    if isinstance(exc, asyncssh.PermissionDenied):
        return ConnectError(
            ConnectFailureKind.AUTH,
            f"{options.username}@{where} refused authentication",
            "Check the user name, the IdentityFile and that the key is in the host's "
            "authorized_keys (ssh -v shows which keys were offered).",
        )
    reason = str(exc) or type(exc).__name__
    return ConnectError(ConnectFailureKind.UNREACHABLE, f"{where} unreachable: {reason}")


def _cipher_kwargs(options: asyncssh.SSHClientConnectionOptions) -> dict[str, object]:
    """Prefer AES-GCM (hardware-accelerated here) unless the ssh config chose ``Ciphers``."""
    if options.config.get("Ciphers") is not None:
        return {}
    return {"encryption_algs": PREFERRED_CIPHERS}


def _auth_kwargs(target: SshTarget) -> dict[str, object]:
    kwargs: dict[str, object] = {}
    if target.identity_files:
        kwargs["client_keys"] = [str(p.expanduser()) for p in target.identity_files]
    if not target.use_agent:
        kwargs["agent_path"] = None
    return kwargs


def _status(result: asyncssh.SSHCompletedProcess) -> int:
    return result.exit_status if result.exit_status is not None and result.exit_status >= 0 else -1


def _send_input(process: asyncssh.SSHClientProcess[bytes], data: bytes) -> None:
    """Give a command its input and end it. A command may end (and its channel close) before
    it reads any: that is not a lost link, and its exit status says what happened."""
    with contextlib.suppress(BrokenPipeError):
        if data:
            process.stdin.write(data)
        process.stdin.write_eof()


class SshTransport:
    """Runs commands, streams and port forwards over one SSH connection."""

    def __init__(self, link: SshLink) -> None:
        self._link = link
        self._forwards: dict[tuple[str, int], asyncssh.SSHListener] = {}

    @property
    def label(self) -> str:
        return self._link.label

    @property
    def link(self) -> SshLink:
        return self._link

    async def run(
        self, argv: Sequence[str], *, stdin: bytes = b"", timeout: float | None = None
    ) -> CommandResult:
        try:
            process = await self._link.conn.create_process(shlex.join(argv), encoding=None)
        except (OSError, asyncssh.Error) as exc:
            raise LinkLost(str(exc) or type(exc).__name__) from exc
        try:
            _send_input(process, stdin)
            result = await within(process.wait(), timeout)
        except asyncio.TimeoutError:
            process.close()
            raise CommandTimedOut(f"{argv[0]} did not finish within {timeout} s") from None
        except (OSError, asyncssh.Error) as exc:
            raise LinkLost(str(exc) or type(exc).__name__) from exc
        if result.exit_status is None and result.exit_signal is None:
            raise LinkLost(f"the connection dropped while {argv[0]} ran")
        return CommandResult(_status(result), _bytes(result.stdout), _bytes(result.stderr))

    async def open_stream(self, argv: Sequence[str], *, stdin: bool = False) -> CommandStream:
        stream = await open_ssh_stream(self._link.conn, shlex.join(argv))
        if not stdin:
            await stream.close_input()
        return stream

    async def forward(self, host: str, port: int) -> int:
        listener = self._forwards.get((host, port))
        if listener is None:
            try:
                listener = await self._link.conn.forward_local_port("127.0.0.1", 0, host, port)
            except (OSError, asyncssh.Error) as exc:
                raise LinkLost(str(exc) or type(exc).__name__) from exc
            self._forwards[(host, port)] = listener
        return listener.get_port()

    async def close(self) -> None:
        for listener in self._forwards.values():
            listener.close()
        self._forwards.clear()
        self._link.close()
        with contextlib.suppress(OSError, asyncssh.Error, asyncio.TimeoutError):
            await within(self._link.wait_closed(), CLOSE_WAIT)


def _bytes(data: object) -> bytes:
    if isinstance(data, bytes):
        return data
    return data.encode() if isinstance(data, str) else b""
