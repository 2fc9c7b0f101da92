"""Throwaway SSH servers on 127.0.0.1 for tests: a real OpenSSH sshd, or the embedded server.

``start_server(workdir)`` starts OpenSSH's ``sshd`` with its own host key, client key,
``authorized_keys`` and ``sshd_config`` (when the binary exists), otherwise the embedded asyncssh
server in a background thread. Either way the returned :class:`TestServer` has an ``ssh_config``
with a host alias, a ``known_hosts`` file that vouches for the server, and
``drop_connections()``, which kills the server side of every open connection, the way a dropped
link or a crashed ``sshd`` child looks to the client.

``start_server(workdir, kbd_interactive=challenge)`` starts a server that refuses the client key
and asks a keyboard-interactive (MFA) question instead. OpenSSH's sshd asks such questions only
through PAM, so where the tests run as root with a writable ``/etc/pam.d`` and ``pam_exec.so``
installed, sshd is started through a symlink of a unique name (sshd names its PAM service after
its own program name) and a PAM service of that name is written for it; ``pam_exec`` asks its
``Password: `` question and a script checks the answer. The service file is removed when the
server stops. Elsewhere the embedded server asks the challenge itself.

Other test packages can import from here::

    from tests.sshd import start_server
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import asyncssh

from tests.net import free_port
from tui.io.transport.embedded_sshd import Challenge, EmbeddedSshServer
from tui.io.transport.ssh import ConnectError, SshTarget, connect

SSHD_CANDIDATES = (Path("/usr/sbin/sshd"), Path("/usr/local/sbin/sshd"), Path("/sbin/sshd"))
READY_TIMEOUT = 10.0
PAM_DIR = Path("/etc/pam.d")
PAM_MODULE_GLOBS = ("/lib/*/security", "/usr/lib/*/security", "/lib/security", "/usr/lib/security")
PAM_PROMPT = "Password: "
"""The question ``pam_exec.so expose_authtok`` asks when no password was typed before it."""


def sshd_binary() -> Path | None:
    """The OpenSSH server binary, or None where it is not installed."""
    found = next((p for p in SSHD_CANDIDATES if os.access(p, os.X_OK)), None)
    on_path = shutil.which("sshd")
    return found or (Path(on_path) if on_path else None)


SERVER_KIND = (
    "embedded"
    if sshd_binary() is None or os.environ.get("BRINGUP_TEST_SSHD") == "embedded"
    else "openssh"
)
"""Which server the integration tests run against here (``BRINGUP_TEST_SSHD=embedded`` forces
the embedded one, to check the fallback on a machine that has sshd)."""

SERVER_ID = "openssh-sshd" if SERVER_KIND == "openssh" else "embedded-asyncssh-server"
"""A parametrize id that says which server was used."""


def pam_module(name: str) -> Path | None:
    """Where the PAM module ``name`` (``pam_exec.so``) is installed, or None."""
    for pattern in PAM_MODULE_GLOBS:
        found = sorted(Path("/").glob(f"{pattern.lstrip('/')}/{name}"))
        if found:
            return found[0]
    return None


def pam_login_missing() -> str | None:
    """Why OpenSSH's sshd cannot be made to ask keyboard-interactive questions here, or None."""
    binary = sshd_binary()
    if SERVER_KIND != "openssh" or binary is None:
        return "the tests run against the embedded server (no OpenSSH sshd, or forced)"
    if os.geteuid() != 0:
        return "not root: sshd runs PAM only as root"
    if not os.access(PAM_DIR, os.W_OK):
        return f"{PAM_DIR} is not writable"
    if pam_module("pam_exec.so") is None or pam_module("pam_permit.so") is None:
        return "pam_exec.so or pam_permit.so is not installed"
    if b"libpam" not in binary.read_bytes():
        return f"{binary} is built without PAM"
    return None


MFA_SERVER_ID = "openssh-sshd-pam" if pam_login_missing() is None else "embedded-asyncssh-server"
"""A parametrize id that says which server asks the keyboard-interactive questions."""


def _write_key(path: Path) -> asyncssh.SSHKey:
    key = asyncssh.generate_private_key("ssh-ed25519")
    key.write_private_key(str(path))
    path.chmod(0o600)
    return key


def _public(key: asyncssh.SSHKey) -> str:
    return key.export_public_key().decode().strip()


def proc_stats() -> Iterator[tuple[int, list[str]]]:
    """Each live process id and the fields of its ``/proc/PID/stat`` after the command name
    (state, parent, group, ...)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        yield int(entry.name), stat[stat.rindex(")") + 2 :].split()


def children_of(pid: int) -> list[int]:
    """Process ids whose parent is ``pid`` (read from /proc)."""
    return [child for child, fields in proc_stats() if int(fields[1]) == pid]


@dataclass
class TestServer:
    """A running server and the client files that reach it."""

    __test__ = False

    kind: str
    host: str
    port: int
    username: str
    client_key: Path
    known_hosts: Path
    ssh_config: Path
    alias: str
    host_public_key: str
    workdir: Path
    _process: subprocess.Popen[bytes] | None = None
    _embedded: _EmbeddedThread | None = None
    extra_config: list[str] = field(default_factory=list)
    kbd_prompt: str = ""
    """The keyboard-interactive question this server asks ("" when it takes the client key)."""
    pam_service: Path | None = None
    """The PAM service file written for this server (removed by :meth:`stop`)."""

    @property
    def known_hosts_line(self) -> str:
        return f"[{self.host}]:{self.port} {self.host_public_key}"

    def target(self, **overrides: object) -> SshTarget:
        """An :class:`SshTarget` for the alias with this server's config and known_hosts."""
        values: dict[str, object] = {
            "host": self.alias,
            "config_path": self.ssh_config,
            "known_hosts": self.known_hosts,
        }
        values.update(overrides)
        return SshTarget(**values)  # type: ignore[arg-type]

    def has_connections(self) -> bool:
        """Whether any client connection is open on the server side."""
        if self._embedded is not None:
            return bool(self._embedded.server.connections)
        return bool(self.connection_pids())

    def connection_pids(self) -> list[int]:
        """Server-side processes, one per open connection (OpenSSH only)."""
        return children_of(self._process.pid) if self._process is not None else []

    def drop_connections(self) -> int:
        """Kill the sshd process of every open connection; return how many were dropped.

        Only sshd's own per-connection process is killed: the commands it was running are left
        to notice on their own, as after a real network failure.
        """
        if self._embedded is not None:
            return self._embedded.drop_connections()
        dropped = 0
        for pid in self.connection_pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
                dropped += 1
        return dropped

    def stop(self) -> None:
        if self._embedded is not None:
            self._embedded.stop()
        if self._process is not None:
            self.drop_connections()
            self._process.terminate()
            try:
                self._process.wait(5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        if self.pam_service is not None:
            self.pam_service.unlink(missing_ok=True)


def _ssh_config(server: TestServer, jump: TestServer | None = None) -> str:
    lines = [
        f"Host {server.alias}",
        f"    HostName {server.host}",
        f"    Port {server.port}",
        f"    User {server.username}",
        f'    IdentityFile "{server.client_key}"',
        f'    UserKnownHostsFile "{server.known_hosts}"',
        "    IdentityAgent none",
    ]
    if jump is not None:
        lines.append(f"    ProxyJump {jump.alias}")
    return "\n".join(lines) + "\n"


_KEY_LOGIN = ("UsePAM no", "KbdInteractiveAuthentication no", "PermitRootLogin prohibit-password")
_PAM_LOGIN = (
    "UsePAM yes",
    "KbdInteractiveAuthentication yes",
    "AuthenticationMethods keyboard-interactive",
    # prohibit-password refuses keyboard-interactive to root as well.
    "PermitRootLogin yes",
)


def _sshd_config(
    workdir: Path,
    port: int,
    host_key: Path,
    authorized: Path,
    env: Mapping[str, str],
    pam: bool = False,
) -> str:
    settings = " ".join(
        f"{name}={value}" for name, value in {"HOME": str(workdir / "home"), **env}.items()
    )
    return "\n".join(
        [
            f"Port {port}",
            "ListenAddress 127.0.0.1",
            f"HostKey {host_key}",
            f"PidFile {workdir / 'sshd.pid'}",
            f"AuthorizedKeysFile {authorized}",
            *(_PAM_LOGIN if pam else _KEY_LOGIN),
            "StrictModes no",
            "PubkeyAuthentication yes",
            "PasswordAuthentication no",
            "AllowTcpForwarding yes",
            "MaxSessions 32",
            "MaxStartups 64",
            "LogLevel ERROR",
            # A fresh HOME keeps the machine's shell start-up files out of the tests.
            f"SetEnv {settings}",
            "",
        ]
    )


def _wait_listening(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"sshd exited: {log.read_text(errors='replace')}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.02)
    raise RuntimeError("sshd did not start listening")


def _pam_stack(checker: Path, challenge: Challenge) -> str:
    """A PAM service whose only question is ``pam_exec``'s, answered right when ``checker``
    (which reads the answer on its standard input) exits 0; ``challenge``'s instructions are
    shown before it (``pam_echo``, which expands ``%``)."""
    lines = []
    if challenge.instructions and pam_module("pam_echo.so") is not None:
        lines.append(f"auth optional pam_echo.so {challenge.instructions.replace('%', '%%')}")
    lines += [
        f"auth required pam_exec.so expose_authtok quiet {checker}",
        # pam_exec sets no credentials; sshd's pam_setcred needs one module that does.
        "auth optional pam_permit.so",
        "account required pam_permit.so",
        "session required pam_permit.so",
    ]
    return "\n".join(lines) + "\n"


def _pam_service(workdir: Path, binary: Path, challenge: Challenge) -> tuple[Path, Path]:
    """A symlink to ``binary`` with a unique name, and the PAM service of that name (sshd uses
    its program name as the PAM service)."""
    name = f"bringup-kbd-sshd-{secrets.token_hex(6)}"
    program = workdir.absolute() / name
    program.symlink_to(binary)
    checker = workdir.absolute() / "check-answer.sh"
    # pam_exec writes the answer and a NUL byte.
    checker.write_text(f"#!/bin/sh\n[ \"$(tr -d '\\000')\" = {shlex.quote(challenge.answer)} ]\n")
    checker.chmod(0o700)
    service = PAM_DIR / name
    service.write_text(_pam_stack(checker, challenge))
    return program, service


def start_openssh(
    workdir: Path,
    alias: str = "bringup-test",
    env: Mapping[str, str] | None = None,
    kbd_interactive: Challenge | None = None,
) -> TestServer:
    """OpenSSH's sshd on a free port; ``env`` is set in every session (``SetEnv``). With
    ``kbd_interactive`` it takes only a keyboard-interactive login through PAM, whose answer is
    the challenge's (see the module notes; :func:`pam_login_missing` says whether it can)."""
    binary = sshd_binary()
    if binary is None:
        raise RuntimeError("no sshd binary on this machine")
    workdir.mkdir(parents=True, exist_ok=True)
    program, service = binary, None
    if kbd_interactive is not None:
        program, service = _pam_service(workdir, binary, kbd_interactive)
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    host_key = _write_key(workdir / "host_ed25519")
    client_key = workdir / "client_ed25519"
    authorized = workdir / "authorized_keys"
    authorized.write_text(_public(_write_key(client_key)) + "\n")
    port = free_port()
    (workdir / "home").mkdir(exist_ok=True)
    config = workdir / "sshd_config"
    config.write_text(
        _sshd_config(
            workdir, port, workdir / "host_ed25519", authorized, env or {}, service is not None
        )
    )
    log = workdir / "sshd.log"
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            [str(program), "-D", "-e", "-f", str(config), "-h", str(workdir / "host_ed25519")],
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        _wait_listening(port, process, log)
    except RuntimeError:
        if service is not None:
            service.unlink(missing_ok=True)
        raise
    return _finish(
        TestServer(
            "openssh",
            "127.0.0.1",
            port,
            getpass.getuser(),
            client_key,
            workdir / "known_hosts",
            workdir / "ssh_config",
            alias,
            _public(host_key),
            workdir,
            _process=process,
            kbd_prompt=PAM_PROMPT if kbd_interactive is not None else "",
            pam_service=service,
        )
    )


def _finish(server: TestServer) -> TestServer:
    server.known_hosts.write_text(server.known_hosts_line + "\n")
    server.ssh_config.write_text(_ssh_config(server))
    return server


class _EmbeddedThread:
    """The embedded server running on its own event loop in a daemon thread."""

    def __init__(self, challenge: Challenge | None = None) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.server = EmbeddedSshServer(challenge=challenge)
        asyncio.run_coroutine_threadsafe(self.server.start(), self._loop).result(READY_TIMEOUT)

    def drop_connections(self) -> int:
        async def drop() -> int:
            return self.server.drop_connections()

        return asyncio.run_coroutine_threadsafe(drop(), self._loop).result(READY_TIMEOUT)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self._loop).result(READY_TIMEOUT)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(READY_TIMEOUT)
        self._loop.close()


def start_embedded(
    workdir: Path, alias: str = "bringup-test", challenge: Challenge | None = None
) -> TestServer:
    """The embedded server; with ``challenge`` it refuses the client key and asks that one
    keyboard-interactive question instead (the fallback where OpenSSH's sshd cannot be given a
    PAM service, see :func:`pam_login_missing`)."""
    workdir.mkdir(parents=True, exist_ok=True)
    embedded = _EmbeddedThread(challenge)
    info = embedded.server.info
    public = info.known_hosts.read_text().split(None, 1)[1].strip()
    return _finish(
        TestServer(
            "embedded",
            info.host,
            info.port,
            info.username,
            info.client_key,
            workdir / "known_hosts",
            workdir / "ssh_config",
            alias,
            public,
            workdir,
            _embedded=embedded,
            kbd_prompt=challenge.prompt if challenge is not None else "",
        )
    )


def start_server(
    workdir: Path,
    alias: str = "bringup-test",
    kind: str = SERVER_KIND,
    kbd_interactive: Challenge | None = None,
) -> TestServer:
    """Start the best server available here (OpenSSH when installed); with ``kbd_interactive``,
    one that asks that keyboard-interactive question instead of taking the client key (OpenSSH
    through PAM where :func:`pam_login_missing` finds nothing missing, else the embedded one)."""
    if kbd_interactive is not None and (kind != "openssh" or pam_login_missing() is not None):
        return start_embedded(workdir, alias, challenge=kbd_interactive)
    if kind == "openssh":
        return start_openssh(workdir, alias, kbd_interactive=kbd_interactive)
    return start_embedded(workdir, alias)


def chain_config(path: Path, target: TestServer, jump: TestServer) -> Path:
    """Write an ssh_config in which ``target`` is reached through ``jump`` (ProxyJump)."""
    path.write_text(_ssh_config(target, jump) + _ssh_config(jump))
    combined = path.with_name(path.name + ".known_hosts")
    combined.write_text(target.known_hosts_line + "\n" + jump.known_hosts_line + "\n")
    text = path.read_text()
    for server in (target, jump):
        text = text.replace(f'"{server.known_hosts}"', f'"{combined}"')
    path.write_text(text)
    return path


@contextlib.contextmanager
def running_server(workdir: Path, alias: str = "bringup-test") -> Iterator[TestServer]:
    server = start_server(workdir, alias)
    try:
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def frozen(pids: list[int]) -> Iterator[None]:
    """Stop ``pids`` (SIGSTOP) for the block, as a hung link or a stuck remote command would be,
    and let them go on afterwards (SIGCONT)."""
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


def other_key() -> str:
    """A freshly made public key: one no test server holds."""
    return asyncssh.generate_private_key("ssh-ed25519").export_public_key().decode().strip()


async def refusal(target: SshTarget) -> ConnectError:
    """The error ``target`` is refused with (a connection that succeeds fails the test)."""
    try:
        link = await connect(target)
    except ConnectError as error:
        return error
    link.close()
    raise AssertionError(f"{target.host} was accepted")
