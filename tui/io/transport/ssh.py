"""SSH connections to GPU hosts, configured the way ``ssh`` itself would be.

Every option asyncssh understands comes from the OpenSSH client configuration (see
:mod:`tui.io.transport.ssh_options`): host aliases, ``User``, ``Port``, ``IdentityFile``,
``IdentityAgent``, ``ProxyJump``, ``ConnectTimeout``, ``ServerAliveInterval``, ciphers and the
rest; bringup's own keep-alive and connect-timeout defaults apply only where it is silent. Host
keys are verified against the ``known_hosts`` files under ``StrictHostKeyChecking`` (see
:mod:`tui.io.transport.host_keys`); jump hosts are verified the same way.

With ``prompts`` (a terminal, before any screen) a key's passphrase, a password, keyboard-
interactive (MFA) answers and, under ``StrictHostKeyChecking ask``, an unknown host key are
asked on the terminal; without it they are refused with a message that says what was needed.

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
import httpcore

from tui.io.transport import ssh_prompts
from tui.io.transport.dead_link import keepalive_kwargs
from tui.io.transport.deadline import within
from tui.io.transport.host_keys import (
    HostKeyPolicy,
    KnownHosts,
    refusal_without_terminal,
)
from tui.io.transport.link_events import ConnectFailureKind
from tui.io.transport.login_gate import LoginGate
from tui.io.transport.ssh_channels import open_channel
from tui.io.transport.ssh_options import (
    EffectiveSsh,
    SshConfigError,
    config_paths,
    effective,
    load_options,
    parse_host_spec,
)
from tui.io.transport.ssh_stream import open_ssh_stream
from tui.io.transport.transport import CommandResult, CommandStream, CommandTimedOut, LinkLost

__all__ = ["ConnectError", "SshLink", "SshTarget", "SshTransport", "connect", "parse_host_spec"]

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
PROMPT_LOGIN_TIMEOUT = 300.0
"""Time to log in when a person answers prompts (the server's own ``LoginGraceTime`` rules)."""
DEFAULT_KEY_NAMES = ("id_ed25519", "id_ecdsa", "id_ed25519_sk", "id_ecdsa_sk", "id_rsa")


@dataclass(frozen=True, slots=True)
class SshTarget:
    """Where to connect and how; anything left as None comes from the ssh configuration."""

    host: str
    user: str | None = None
    port: int | None = None
    config_path: Path | None = None
    known_hosts: Path | None = None
    host_key_policy: HostKeyPolicy | None = None
    """The command line's policy: it wins over ``StrictHostKeyChecking``."""
    default_policy: HostKeyPolicy = "strict"
    """The profile's policy, for when the ssh config has no ``StrictHostKeyChecking``."""
    accept_any_host_key: bool = False
    """The user said they mean ``StrictHostKeyChecking no`` (without it, ``no`` is refused)."""
    prompts: bool = False
    """Whether passphrases, passwords, MFA answers and unknown keys may be asked on the terminal."""
    identity_files: tuple[Path, ...] = ()
    client_keys: tuple[asyncssh.SSHKey, ...] = ()
    """Keys already unlocked (by an earlier prompt): used instead of the key files."""
    use_agent: bool = True
    connect_timeout: float | None = None
    keepalive_interval: float | None = None
    keepalive_count_max: int | None = None
    login_timeout: float = 30.0

    @property
    def label(self) -> str:
        user = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port else ""
        return f"{user}{self.host}{port}"


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
    gate: LoginGate
    unlocked: tuple[asyncssh.SSHKey, ...] = ()
    """Keys unlocked by a passphrase typed for this connection (reused when reconnecting)."""

    def close(self) -> None:
        for conn in [self.conn, *reversed(self.jumps)]:
            conn.close()

    async def wait_closed(self) -> None:
        await self.conn.wait_closed()

    async def wait_lost(self) -> str:
        """Wait until the connection ends; return why it ended."""
        await self.conn.wait_closed()
        return self.gate.lost_reason or "the connection was closed"


async def effective_options(target: SshTarget) -> EffectiveSsh:
    """What a connection to ``target`` uses: the command line's choices, then the ssh config,
    then bringup's defaults. Raises :class:`ConnectError` for a configuration it cannot use."""
    try:
        paths = config_paths(target.config_path)
        options, extras = await load_options(paths, target.host, target.user, target.port)
        return effective(
            options,
            extras,
            connect_timeout=target.connect_timeout,
            keepalive_interval=target.keepalive_interval,
            keepalive_count_max=target.keepalive_count_max,
            host_key_policy=target.host_key_policy,
            default_policy=target.default_policy,
            known_hosts=target.known_hosts,
        )
    except SshConfigError as error:
        raise ConnectError(ConnectFailureKind.UNREACHABLE, f"{target.label}: {error}") from error


async def connect(target: SshTarget) -> SshLink:
    """Open a connection (through any ``ProxyJump`` hosts); raise :class:`ConnectError`."""
    jumps: list[asyncssh.SSHClientConnection] = []
    try:
        settings = await effective_options(target)
        if len(settings.jumps) > MAX_JUMPS:
            raise ConnectError(
                ConnectFailureKind.UNREACHABLE,
                f"{target.label}: ProxyJump lists {len(settings.jumps)} hosts "
                f"(at most {MAX_JUMPS})",
            )
        for jump in settings.jumps:
            hop = replace(
                target, host=jump.host, user=jump.user, port=jump.port,
                identity_files=(), client_keys=(),
            )  # fmt: skip
            jumps.append((await _connect_one(hop, jumps[-1] if jumps else None))[0])
        conn, gate, unlocked = await _connect_one(target, jumps[-1] if jumps else None)
    except BaseException:
        for jump_conn in reversed(jumps):
            jump_conn.close()
        raise
    label = f"{settings.user}@{settings.host}:{settings.port}"
    return SshLink(conn, jumps, label, gate, unlocked)


def _known_hosts(settings: EffectiveSsh) -> KnownHosts:
    return KnownHosts(
        settings.user_known_hosts, settings.global_known_hosts, settings.hash_known_hosts
    )


def _refuse_no(target: SshTarget, settings: EffectiveSsh) -> None:
    if settings.host_key_policy == "no" and not target.accept_any_host_key:
        raise ConnectError(
            ConnectFailureKind.HOST_KEY,
            f"{target.label}: the ssh config says StrictHostKeyChecking no, which accepts any "
            "host key (also a changed one); bringup does not connect that way unless told to",
            "Use StrictHostKeyChecking accept-new (record a new key, refuse a changed one), "
            "or pass --insecure-accept-any-host-key if you mean to accept any key.",
        )


async def _connect_one(
    target: SshTarget, tunnel: asyncssh.SSHClientConnection | None
) -> tuple[asyncssh.SSHClientConnection, LoginGate, tuple[asyncssh.SSHKey, ...]]:
    settings = await effective_options(target)
    _refuse_no(target, settings)
    known = _known_hosts(settings)
    keys = await _client_keys(target, settings)
    trusted: asyncssh.SSHKey | None = None
    while True:
        gate = LoginGate(
            known, settings.host_key_policy, target.accept_any_host_key,
            f"{settings.user}@{settings.host}", target.prompts,
        )  # fmt: skip
        gate.trusted = trusted
        try:
            return await _open(target, tunnel, settings, known, gate, keys), gate, keys.unlocked
        except (OSError, asyncssh.Error, asyncio.TimeoutError) as exc:
            if trusted is not None or not await _trusted_on_asking(target, gate, known):
                raise _refusal(exc, target, settings, gate, keys) from exc
            trusted = gate.unknown_key


async def _open(
    target: SshTarget,
    tunnel: asyncssh.SSHClientConnection | None,
    settings: EffectiveSsh,
    known: KnownHosts,
    gate: LoginGate,
    keys: _Keys,
) -> asyncssh.SSHClientConnection:
    login_timeout = max(target.login_timeout, PROMPT_LOGIN_TIMEOUT if target.prompts else 0.0)
    connecting = asyncssh.connect(
        target.host,
        tunnel=tunnel,
        options=settings.options,
        known_hosts=known.load(),
        client_factory=lambda: gate,
        **keys.kwargs(target),
        **_cipher_kwargs(settings.options),
        connect_timeout=settings.connect_timeout,
        login_timeout=login_timeout,
        **keepalive_kwargs(settings.keepalive_interval, settings.keepalive_count_max),
    )
    return await within(connecting, settings.connect_timeout + login_timeout)


async def _trusted_on_asking(target: SshTarget, gate: LoginGate, known: KnownHosts) -> bool:
    """Under ``ask`` with a terminal: whether the user trusted the unknown key (now recorded,
    and trusted for the next attempt even where it cannot be recorded)."""
    refusal, key = gate.refusal, gate.unknown_key
    if refusal is None or key is None or not target.prompts:
        return False
    if not await ssh_prompts.confirm_host_key(
        f"{refusal.host}:{refusal.port}" if refusal.port != 22 else refusal.host,
        refusal.fingerprint,
    ):
        return False
    known.record(refusal.host, refusal.port, key)
    return True


@dataclass(frozen=True, slots=True)
class _Keys:
    """The client keys to offer: None lets asyncssh load them as configured."""

    keys: tuple[asyncssh.SSHKey, ...] | None
    locked: tuple[Path, ...] = ()
    """Keys that need a passphrase no one could type."""
    unlocked: tuple[asyncssh.SSHKey, ...] = ()

    def kwargs(self, target: SshTarget) -> dict[str, object]:
        kwargs: dict[str, object] = {}
        if self.keys:
            kwargs["client_keys"] = list(self.keys)
        if not target.use_agent:
            kwargs["agent_path"] = None
        return kwargs


def _key_files(target: SshTarget, settings: EffectiveSsh) -> list[Path]:
    if target.identity_files:
        return [p.expanduser() for p in target.identity_files]
    if settings.identity_files:
        return [p.expanduser() for p in settings.identity_files]
    return [Path("~/.ssh", name).expanduser() for name in DEFAULT_KEY_NAMES]


def _read_key(path: Path, passphrase: str | None = None) -> asyncssh.SSHKey | None:
    """The private key at ``path`` (None when it needs a passphrase); raise ConnectError if bad."""
    try:
        return asyncssh.read_private_key(path, passphrase)
    except asyncssh.KeyImportError as error:
        if passphrase is None and "Passphrase must be specified" in str(error):
            return None
        raise ConnectError(
            ConnectFailureKind.AUTH, f"cannot read the key {path}: {error}"
        ) from error
    except asyncssh.KeyEncryptionError as error:
        raise ConnectError(ConnectFailureKind.AUTH, f"{path}: {error}") from error


def _agent_present(target: SshTarget, settings: EffectiveSsh) -> bool:
    agent = settings.options.agent_path
    return target.use_agent and bool(agent) and Path(str(agent)).exists()


async def _client_keys(target: SshTarget, settings: EffectiveSsh) -> _Keys:
    """The keys to offer: keys with a passphrase are unlocked by asking on the terminal when
    no agent is there to hold them, else listed as locked for the refusal to name."""
    if target.client_keys:
        return _Keys(target.client_keys)
    files = [path for path in _key_files(target, settings) if path.is_file()]
    keys: list[asyncssh.SSHKey] = []
    locked: list[Path] = []
    unlocked: list[asyncssh.SSHKey] = []
    for path in files:
        key = _read_key(path)
        if key is None and target.prompts and not _agent_present(target, settings):
            key = await _unlock(path)
            unlocked.extend([key] if key is not None else [])
        if key is None:
            locked.append(path)
        else:
            keys.append(key)
    if not unlocked and not target.identity_files:
        return _Keys(None, tuple(locked))
    return _Keys(tuple(keys), tuple(locked), tuple(unlocked))


async def _unlock(path: Path) -> asyncssh.SSHKey | None:
    """The key at ``path`` unlocked with a passphrase typed on the terminal (None: given up)."""
    for _ in range(ssh_prompts.MAX_PASSPHRASE_TRIES):
        phrase = await ssh_prompts.passphrase(str(path))
        if not phrase:
            return None
        with contextlib.suppress(ConnectError):
            return _read_key(path, phrase)
        ssh_prompts.say("Bad passphrase, try again.")
    return None


def _refusal(
    exc: Exception, target: SshTarget, settings: EffectiveSsh, gate: LoginGate, keys: _Keys
) -> ConnectError:
    """The :class:`ConnectError` for why a connection attempt failed."""
    where = f"{settings.host}:{settings.port}"
    if isinstance(exc, asyncssh.HostKeyNotVerifiable):
        refusal = gate.refusal
        if refusal is None:
            return ConnectError(ConnectFailureKind.HOST_KEY, f"{target.label}: {exc.reason}")
        if gate.unknown_key is not None and not target.prompts:
            refusal = refusal_without_terminal(refusal)
        return ConnectError(ConnectFailureKind.HOST_KEY, refusal.message, refusal.hint)
    if isinstance(exc, asyncssh.PermissionDenied):
        return ConnectError(
            ConnectFailureKind.AUTH,
            f"{settings.user}@{where} refused authentication{_unasked(gate, keys)}",
            "Check the user name, the IdentityFile and that the key is in the host's "
            "authorized_keys (ssh -v shows which keys were offered).",
        )
    reason = str(exc) or type(exc).__name__
    return ConnectError(ConnectFailureKind.UNREACHABLE, f"{where} unreachable: {reason}")


def _unasked(gate: LoginGate, keys: _Keys) -> str:
    """What could not be asked for without a terminal, as the end of a refusal's message."""
    needs = [f"the passphrase of {path}" for path in keys.locked]
    if gate.kbdint_unasked:
        needs.append("keyboard-interactive (MFA) answers")
    if gate.password_unasked:
        needs.append("a password")
    if not needs:
        return ""
    return (
        f"; it needed {', '.join(needs)}, and there is no terminal to ask on (no terminal on "
        "standard input, or --json): run it from a terminal, or load the key into ssh-agent"
    )


def _cipher_kwargs(options: asyncssh.SSHClientConnectionOptions) -> dict[str, object]:
    """Prefer AES-GCM (hardware-accelerated here) unless the ssh config chose ``Ciphers``."""
    if options.config.get("Ciphers") is not None:
        return {}
    return {"encryption_algs": PREFERRED_CIPHERS}


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
    """Runs commands, streams, port forwards and TCP channels over one SSH connection."""

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

    async def connect_tcp(
        self, host: str, port: int, timeout: float | None = None
    ) -> httpcore.AsyncNetworkStream:
        return await open_channel(self._link.conn, host, port, timeout)

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
