"""Questions an SSH login asks on the terminal, before any screen is drawn.

A host key under ``StrictHostKeyChecking ask``, a key's passphrase when no agent holds it, a
password and keyboard-interactive (MFA) challenges are asked the way ``ssh`` asks them: on the
controlling terminal, secrets without echo (:func:`getpass.getpass`). Every question runs in a
thread of its own so the event loop keeps the other connections alive meanwhile; when the wait
is cancelled (Ctrl-C) the terminal's settings are put back, echo included, and the thread is
left to end with the process. Text the host sends (challenge names, instructions, prompts) is
made printable before it is shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import sys
import termios
import threading
from collections.abc import Sequence
from typing import Any

from tui.engine.logs.sanitize import printable

MAX_PASSPHRASE_TRIES = 3
_TERMINAL = threading.Lock()
"""One question at a time on the terminal, whichever connection asks (the nodes of a server
log in at the same time)."""


def terminal_present() -> bool:
    """Whether a person can be asked: standard input and standard error are terminals."""
    return sys.stdin.isatty() and sys.stderr.isatty()


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _ask(prompt: str, secret: bool) -> str:
    with _TERMINAL:
        if secret:
            return getpass.getpass(prompt, stream=sys.stderr)
        print(prompt, end="", file=sys.stderr, flush=True)
        return sys.stdin.readline().rstrip("\n")


def _settle(future: asyncio.Future[str], answer: str | None, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(answer or "")


async def ask(prompt: str, *, secret: bool) -> str:
    """One answer typed on the terminal (without echo when ``secret``)."""
    loop = asyncio.get_running_loop()
    answered: asyncio.Future[str] = loop.create_future()

    def read() -> None:
        try:
            answer = _ask(prompt, secret)
        except BaseException as error:  # handed to the waiting coroutine
            loop.call_soon_threadsafe(_settle, answered, None, error)
        else:
            loop.call_soon_threadsafe(_settle, answered, answer, None)

    saved = _terminal_settings()
    threading.Thread(target=read, name="ssh-prompt", daemon=True).start()
    try:
        return await answered
    except asyncio.CancelledError:
        _restore(saved)
        say("")
        raise


_Settings = list[Any]
"""What :func:`termios.tcgetattr` returns."""


def _terminal_settings() -> _Settings | None:
    with contextlib.suppress(OSError, termios.error, ValueError):
        return termios.tcgetattr(sys.stdin.fileno())
    return None


def _restore(saved: _Settings | None) -> None:
    if saved is not None:
        with contextlib.suppress(OSError, termios.error, ValueError):
            termios.tcsetattr(sys.stdin.fileno(), termios.TCSADRAIN, saved)


async def confirm_host_key(label: str, fingerprint: str) -> bool:
    """Ask whether to trust the unknown key of ``label``, as ``ssh`` does."""
    say(f"The authenticity of host '{printable(label)}' can't be established.")
    say(f"Its key fingerprint is {fingerprint}.")
    while True:
        answer = await ask(
            "Are you sure you want to continue connecting (yes/no/[fingerprint])? ", secret=False
        )
        if answer.strip() in ("yes", fingerprint):
            return True
        if answer.strip() in ("no", ""):
            return False
        say("Please type 'yes', 'no' or the fingerprint: ")


async def passphrase(key_path: str) -> str:
    """The passphrase of the private key at ``key_path``."""
    return await ask(f"Enter passphrase for key '{printable(key_path)}': ", secret=True)


async def password(label: str) -> str:
    """The password of ``label`` (``user@host``)."""
    return await ask(f"{printable(label)}'s password: ", secret=True)


async def challenge(
    label: str, name: str, instructions: str, prompts: Sequence[tuple[str, bool]]
) -> list[str]:
    """The answers to one keyboard-interactive challenge from ``label``; a prompt of several
    lines (OpenSSH's sshd puts PAM's messages before PAM's question) is shown line by line, the
    answer typed after its last line."""
    for text in (name, instructions):
        if text.strip():
            say(printable(text.strip()))
    answers = []
    for prompt, echo in prompts:
        *above, last = prompt.split("\n")
        for line in above:
            if line.strip():
                say(printable(line.rstrip("\r")))
        shown = printable(last) or f"({printable(label)}) answer: "
        answers.append(await ask(shown, secret=not echo))
    return answers
