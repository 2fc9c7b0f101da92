"""The terminal driver: Textual's Linux driver with an input thread that sleeps until a key.

Textual's own input thread wakes ten times a second, to look for input and to let its parser
time out a lone Escape (which may be the first byte of a longer key sequence). On a READY screen
with nothing to draw that is most of the app's CPU: a bare Textual app idles at 0.2 % of a core,
nearly all of it those wake-ups. This driver's thread waits on the terminal and on a wake-up pipe
with no timeout; only in the moments after a key (while a sequence may still be open) does it
tick as often as Textual's does, so an Escape still arrives after ``ESCDELAY``. Leaving the app
sets the driver's exit event, which writes to the pipe, so quitting never waits for a tick.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import threading
import time
from codecs import getincrementaldecoder
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual import constants
from textual._parser import ParseError
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver

if TYPE_CHECKING:
    from textual.app import App

TICK = 0.1
"""Seconds between the parser's timeout checks while a key sequence may be open (Textual's)."""
AFTER_INPUT = constants.ESCAPE_DELAY + 0.5
"""Seconds after the last input byte during which the thread keeps ticking."""
_READ_SIZE = 4096


class WakingEvent(threading.Event):
    """An event that also calls ``wake`` when it is set (to interrupt a blocked select)."""

    def __init__(self, wake: Callable[[], None]) -> None:
        super().__init__()
        self._wake = wake

    def set(self) -> None:
        super().set()
        self._wake()


class QuietLinuxDriver(LinuxDriver):
    """:class:`LinuxDriver` whose input thread blocks until input or exit."""

    def __init__(
        self,
        app: App[Any],
        *,
        debug: bool = False,
        mouse: bool = True,
        size: tuple[int, int] | None = None,
    ) -> None:
        super().__init__(app, debug=debug, mouse=mouse, size=size)
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_read, False)
        os.set_blocking(self._wake_write, False)
        self.exit_event = WakingEvent(self._wake)

    def _wake(self) -> None:
        if self._wake_write < 0:  # closed: its number may belong to another file by now
            return
        with contextlib.suppress(OSError):  # a full pipe already wakes the thread
            os.write(self._wake_write, b"!")

    def _drain_wake(self) -> None:
        with contextlib.suppress(OSError):
            while os.read(self._wake_read, _READ_SIZE):
                pass

    def close(self) -> None:
        super().close()
        for fd in (self._wake_read, self._wake_write):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._wake_read = self._wake_write = -1

    def run_input_thread(self) -> None:
        """Read keys until the exit event is set; tick the parser only while a key sequence
        may be open."""
        parser = XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode
        last_input = -AFTER_INPUT
        with selectors.DefaultSelector() as selector:
            selector.register(self.fileno, selectors.EVENT_READ, "input")
            selector.register(self._wake_read, selectors.EVENT_READ, "wake")
            reading = True
            while not self.exit_event.is_set():
                recent = time.monotonic() - last_input < AFTER_INPUT
                for key, _mask in selector.select(TICK if recent else None):
                    if key.data == "wake":
                        self._drain_wake()
                        continue
                    data = os.read(self.fileno, _READ_SIZE) if reading else b""
                    if not data:  # the input closed (stdin piped): nothing more to read
                        selector.unregister(self.fileno)
                        reading = False
                        continue
                    last_input = time.monotonic()
                    for event in parser.feed(decode(data)):
                        self.process_message(event)
                for event in parser.tick():
                    self.process_message(event)
        with contextlib.suppress(EOFError, ParseError):
            for _event in parser.feed(""):
                pass
