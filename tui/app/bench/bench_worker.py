"""The benchmark in the app: fired when the server becomes ready, ``b`` again, ``c`` to compare.

:class:`BenchControl` owns the pane's state and everything that changes it. When the verdict
first becomes READY for a run it records the run (start-up timeline and launch fingerprint) in
the history file, then benchmarks according to the profile's ``bench.mode``: ``auto`` at once,
``ask`` after a yes, ``off`` only on ``b``. The worker posts :class:`BenchEvent` messages; the
app hands them back to :meth:`BenchControl.handle`, which updates the state and the pane.

Traffic goes through the host session's port forward, the same one the health poll uses; with
``bench.official`` the engine's own tool runs on the host instead. Every failure becomes a
message with a sanitized text; nothing from the server is ever read as markup.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import httpx
from textual.app import App
from textual.binding import Binding, BindingType

from tui.app.bench.bench_messages import (
    BenchEvent,
    BenchFailed,
    BenchFinished,
    BenchLevelFinished,
    BenchProgressed,
    BenchStarted,
)
from tui.app.bench.bench_pane import BenchAskScreen, BenchPane
from tui.app.bench.bench_runs import (
    SETTLE_SECONDS,
    BenchOptions,
    BenchSetup,
    OfficialRunFailed,
    OfficialSetup,
    PaneClient,
    build_workload,
    measure,
    run_official,
)
from tui.app.bench.bench_state import BenchState
from tui.app.bench.compare_screen import CompareScreen
from tui.app.bench.run_records import BenchMeta, Scope, record_run, save_levels
from tui.app.monitor.view_model import MonitorView
from tui.config import BenchConfig
from tui.data.prompts import PromptFileError
from tui.engine.servers import registry
from tui.engine.startup.snapshot import DecodeSummary, Snapshot
from tui.engine.startup.vocabulary import Verdict
from tui.io.bench.bench_client import clean, detect_endpoint
from tui.io.store.run_store import StoreError
from tui.io.transport.deadline import within
from tui.io.transport.host_session import SessionClosed
from tui.io.transport.transport import TransportError

BENCH_ACTIONS = frozenset({"bench", "compare"})
BENCH_BINDINGS: list[BindingType] = [
    Binding("b", "bench", "Bench", id="bench"),
    Binding("c", "compare", "Compare", id="compare"),
]
FORWARD_TIMEOUT_SECONDS = 15.0
FAILURES = (
    httpx.HTTPError, OSError, TransportError, SessionClosed, asyncio.TimeoutError,
    PromptFileError, OfficialRunFailed, StoreError,
)  # fmt: skip
"""What a benchmark can fail with; each ends it with a message instead of stopping the app."""


def _title(settings: BenchConfig, endpoint: str) -> str:
    levels = ",".join(str(level) for level in settings.concurrency)
    return (
        f"{endpoint} · {settings.num_prompts} prompts · ~{settings.input_len} in / "
        f"{settings.output_len} out · c={levels}"
    )


class BenchControl:
    """The benchmark pane's state and the workers that fill it, for ``app``."""

    def __init__(
        self, app: App[Any], setup: BenchSetup | None, snapshot: Callable[[], Snapshot]
    ) -> None:
        self.app = app
        self.setup = setup
        self.snapshot = snapshot
        self.state = BenchState()
        self.run_ids: dict[tuple[int, float | None], int | None] = {}
        self.results: list[dict[str, Any]] = []
        self.run_id: int | None = None
        self.saved = ""
        self._seen_ready: set[tuple[int, float | None]] = set()
        self.settle = SETTLE_SECONDS
        self._busy = False
        self._lock = asyncio.Lock()
        self.meta = BenchMeta(self.options.profile, "", "", None, 0.0)

    @property
    def options(self) -> BenchOptions:
        return self.setup.options if self.setup is not None else BenchOptions()

    def check(self, action: str) -> bool | None:
        """For ``check_action``: ``b`` and ``c`` need a server port (without one the app
        records nothing), and ``b`` no benchmark running."""
        if action not in BENCH_ACTIONS:
            return True
        if self.setup is None:
            return False
        return None if action == "bench" and self._busy else True

    # --- the verdict ---------------------------------------------------------------------

    def verdict_seen(self, view: MonitorView) -> None:
        """Called on every repaint: the first READY (or FAILED) of a run is acted on once."""
        key = _run_key(view.snapshot)
        if view.verdict is Verdict.FAILED and key not in self.run_ids:
            self._record_later(view.snapshot)
        if view.verdict is not Verdict.READY or key in self._seen_ready:
            return
        self._seen_ready.add(key)
        if self.setup is None:
            return
        self._record_later(view.snapshot)
        mode = self.options.config.mode
        if mode == "auto":
            self.start()
        elif mode == "ask":
            self.ask()
        else:
            self.state.declined("benchmark mode is off; b runs it")
            self.show()

    def _record_later(self, snapshot: Snapshot) -> None:
        if self.setup is not None:
            self.run_ids.setdefault(_run_key(snapshot), None)
            self.app.run_worker(self.record(snapshot), group="bench-record", exit_on_error=False)

    async def record(self, snapshot: Snapshot) -> int | None:
        """The history id of ``snapshot``'s run, storing the run the first time."""
        key = _run_key(snapshot)
        async with self._lock:
            found = self.run_ids.get(key)
            if found is not None or self.setup is None:
                return found
            options = self.options
            try:
                found = await asyncio.to_thread(
                    record_run, options.data_dir, snapshot, options.profile, self.setup.host
                )
            except StoreError as exc:
                self.app.notify(f"run not recorded: {clean(str(exc))}", markup=False,
                                severity="warning")  # fmt: skip
                return None
            self.run_ids[key] = found
            return found

    def ask(self) -> None:
        self.state.asking()
        self.show()
        self.app.push_screen(BenchAskScreen(), self._answered)

    def _answered(self, yes: bool | None) -> None:
        if yes:
            self.start()
        else:
            self.state.declined()
            self.show()

    # --- running -------------------------------------------------------------------------

    def run_again(self, verdict: Verdict | None) -> None:
        """The ``b`` key: benchmark now if the verdict on screen is READY, else say why not."""
        if verdict is not Verdict.READY:
            shown = "not known yet" if verdict is None else verdict.value
            self.app.notify(f"not benchmarked: the server is {shown}, not READY", markup=False,
                            severity="warning")  # fmt: skip
            return
        self.start()

    def start(self) -> None:
        """Benchmark now, unless one is already running."""
        if self.setup is None:
            self.app.notify("no server port to benchmark", markup=False)
            return
        if self._busy:
            self.app.notify("a benchmark is already running", markup=False)
            return
        self._busy = True
        self.app.refresh_bindings()
        self.app.run_worker(self._bench(self.setup), group="bench", exit_on_error=False)

    async def _bench(self, setup: BenchSetup) -> None:
        self.results = []
        snapshot = self.snapshot()
        self.meta = BenchMeta(setup.options.profile, _address(setup), "", None, time.time())
        self.saved = ""
        try:
            self.run_id = await self.record(snapshot)
            if setup.options.config.official:
                await self._official(setup, snapshot)
            else:
                await self._builtin(setup, snapshot)
            self.app.post_message(BenchFinished(self.saved))
        except FAILURES as exc:
            error = clean(f"{type(exc).__name__}: {exc}", 300)
            self.app.post_message(BenchFailed(f"{error} ({self.saved})" if self.saved else error))
        finally:
            self._busy = False
            self.app.refresh_bindings()

    async def _builtin(self, setup: BenchSetup, snapshot: Snapshot) -> None:
        settings = setup.options.config
        url = await within(setup.session.forward(setup.port), FORWARD_TIMEOUT_SECONDS)
        endpoint = settings.endpoint
        if endpoint is None:
            engine = setup.engine if setup.engine != "auto" else snapshot.server.engine
            known = registry.find(engine) is not None
            endpoint = settings.endpoint_for(engine) if known else await detect_endpoint(url)
        workload = build_workload(settings, endpoint)
        self.meta = replace(self.meta, endpoint=endpoint, model=snapshot.server.model)
        self.app.post_message(
            BenchStarted(_title(settings, endpoint), settings.concurrency, len(workload.prompts))
        )
        client = PaneClient(url, workload, self._decode, self._progressed)
        async with client:
            await client.resolve_model()
            self.meta = replace(self.meta, model=snapshot.server.model or client.model)
            await measure(client, settings.concurrency, self._level_done, self.settle)

    async def _official(self, setup: BenchSetup, snapshot: Snapshot) -> None:
        settings = setup.options.config
        self.meta = replace(self.meta, endpoint="official", model=snapshot.server.model)
        engine = setup.engine if setup.engine != "auto" else snapshot.server.engine
        tool = registry.or_default(engine).bench_tool.title
        self.app.post_message(
            BenchStarted(f"official {tool} · {_title(settings, 'random')}", settings.concurrency,
                         settings.num_prompts)
        )  # fmt: skip
        official = OfficialSetup(
            setup.session, engine, setup.port, snapshot.server.model,
            setup.options.venv, setup.options.conda_env,
        )  # fmt: skip
        await run_official(official, settings, self._level_done)

    def _decode(self) -> DecodeSummary:
        return self.snapshot().decode

    def _progressed(self, concurrency: int, done: int, failed: int) -> None:
        self.app.post_message(BenchProgressed(concurrency, done, failed))

    async def _level_done(self, concurrency: int, fields: dict[str, Any]) -> None:
        """Show a finished level and store it at once, so that nothing measured is lost."""
        self.results.append(fields)
        self.app.post_message(BenchLevelFinished(concurrency, fields))
        try:
            await asyncio.to_thread(
                save_levels, self.options.data_dir, self.run_id, [fields], self.meta
            )
        except StoreError as exc:
            self.saved = f"results not saved: {clean(str(exc))}"
            return
        if not self.saved.startswith("results not saved"):
            run = f"run #{self.run_id}" if self.run_id is not None else "no run (not recorded)"
            self.saved = f"saved with {run}"

    # --- messages and the pane -------------------------------------------------------------

    def handle(self, event: BenchEvent) -> None:
        """Apply one of the worker's messages to the state and redraw the pane."""
        state = self.state
        if isinstance(event, BenchStarted):
            state.started(event.title, event.levels, event.per_level)
        elif isinstance(event, BenchProgressed):
            state.progressed(event.concurrency, event.done, event.failed)
        elif isinstance(event, BenchLevelFinished):
            state.level_finished(event.concurrency, event.fields)
        elif isinstance(event, BenchFinished):
            state.finished(event.note)
        elif isinstance(event, BenchFailed):
            state.failed(event.error)
        self.show()

    def show(self) -> None:
        """Redraw the pane, wherever it is in the screen stack."""
        for screen in self.app.screen_stack:
            for pane in screen.query(BenchPane):
                pane.show(self.state)

    # --- comparison ----------------------------------------------------------------------

    def scopes(self) -> list[Scope]:
        """What the comparison can list: the profile's runs, then the model's."""
        found = []
        if self.options.profile:
            found.append(Scope("profile", self.options.profile))
        model = self.snapshot().server.model
        if model:
            found.append(Scope("model", model))
        return found

    def compare(self) -> None:
        """Open the comparison view (the ``c`` key)."""
        self.app.push_screen(CompareScreen(self.scopes(), self.options.data_dir))


def _run_key(snapshot: Snapshot) -> tuple[int, float | None]:
    return (snapshot.runs_before, snapshot.started_at)


def _address(setup: BenchSetup) -> str:
    return f"http://{setup.host or 'localhost'}:{setup.port}"
