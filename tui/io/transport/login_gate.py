"""The client side of one SSH login: the host key check, and what the login asks of a person.

:class:`LoginGate` is the asyncssh client object of a connection. Host keys are judged by
:class:`~tui.io.transport.host_keys.HostKeyGate`; passwords and keyboard-interactive (MFA)
challenges are answered on the terminal when prompts are allowed, and otherwise declined and
remembered, so the refusal can say what was needed.
"""

from __future__ import annotations

from collections.abc import Sequence

from tui.io.transport import ssh_prompts
from tui.io.transport.host_keys import HostKeyGate, HostKeyPolicy, KnownHosts

MAX_PASSWORD_TRIES = 3


class LoginGate(HostKeyGate):
    """Host keys as :class:`HostKeyGate` decides; passwords and challenges from the terminal."""

    def __init__(
        self,
        known: KnownHosts,
        policy: HostKeyPolicy,
        accept_any: bool,
        label: str,
        prompts: bool,
    ) -> None:
        super().__init__(known, policy, accept_any)
        self._label = label
        self._prompts = prompts
        self._passwords = 0
        self.kbdint_unasked = False
        self.password_unasked = False

    def kbdint_auth_requested(self) -> str | None:
        if not self._prompts:
            self.kbdint_unasked = True
            return None
        return ""

    async def kbdint_challenge_received(
        self, name: str, instructions: str, lang: str, prompts: Sequence[tuple[str, bool]]
    ) -> list[str] | None:
        return await ssh_prompts.challenge(self._label, name, instructions, prompts)

    async def password_auth_requested(self) -> str | None:
        if not self._prompts:
            self.password_unasked = True
            return None
        self._passwords += 1
        if self._passwords > MAX_PASSWORD_TRIES:
            return None
        return await ssh_prompts.password(self._label)
